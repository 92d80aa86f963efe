//===- NcclCommunicator.cpp - Collectives on the GPU's streams --*- C++ -*-===//
//
// The device communicator (src/device/Device.h). Every collective is
// enqueued the same way, whatever carries it:
//   1. a resizing start copies `send` into a pool block on the compute
//      stream (compiled code may overwrite `send` once the start returns);
//   2. an event recorded on the compute stream, which the communication
//      stream waits for: the collective starts after the kernels that
//      produced its input;
//   3. the collective itself, on the communication stream;
//   4. a "done" event recorded behind it: its ticket.
// wait(ticket) makes the compute stream wait for that event; the host never
// blocks, so the collective overlaps with whatever compute was issued
// between the start and the wait. The communication stream runs collectives
// in issue order, which is the order NCCL needs on every rank, and waiting
// for one ticket covers all earlier ones. A staging block goes back to the
// pool at the wait, when every later user of the block on the compute
// stream is ordered after the collective that read it.
//
// Carriers: NCCL (several ranks always; one rank when NCCL loads), or, for
// one rank without NCCL, plain device copies (a reduction over one rank is
// the identity; a gather or scatter a copy).
//
//===----------------------------------------------------------------------===//

#include "CollectiveTimer.h"
#include "CudaDevice.h"
#include "NcclComm.h"
#include "NcclJoin.h"
#include "loom/runtime/Error.h"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>

namespace loom::rt::cuda {

namespace {

/// One collective as the carriers see it.
struct Call {
  enum Kind { AllReduce, ReduceScatter, AllGather, Broadcast } kind;
  const void *send;
  void *recv;
  /// Elements per rank (recv of a reduce-scatter, send of an all-gather).
  int64_t count;
  DType dtype;
  ReduceOp op;
  int root;
};

/// A collective's names: NCCL's function, and the trace's name and operation
/// (as on the CPU; `op` null: the reduction's, "sum" ...).
struct KindNames {
  const char *nccl, *trace, *op;
};

const KindNames &namesOf(Call::Kind kind) {
  static const KindNames names[] = {
      {"ncclAllReduce", "all_reduce", nullptr},
      {"ncclReduceScatter", "reduce_scatter", nullptr},
      {"ncclAllGather", "all_gather", "gather"},
      {"ncclBroadcast", "broadcast", "broadcast"}};
  static_assert(sizeof(names) / sizeof(names[0]) == Call::Broadcast + 1,
                "one entry per Call::Kind, in order");
  return names[kind];
}

/// What enqueues the collectives on the communication stream.
class Carrier : public AsyncErrorSource {
public:
  virtual const char *name() const = 0;
  /// Enqueues `call` on `stream`. Throws Error.
  virtual void run(const Call &call, CUstream stream) = 0;
  void checkAsyncError() override {}
  /// Ends the carrier; `failed`: after an error (do not wait for peers).
  virtual void close(bool failed) { (void)failed; }
};

/// A nonblocking NCCL communicator (NcclComm.h): a call that returns
/// ncclInProgress is waited for, at most the host's collective timeout
/// (read at each call: the trainer lifts it while a checkpoint is written).
class NcclCarrier final : public Carrier {
public:
  NcclCarrier(const NcclLibrary &nccl, ncclComm_t comm,
              const Communicator &host)
      : nccl(nccl), comm(comm), host(host) {}
  ~NcclCarrier() override { close(true); }

  const char *name() const override { return "nccl"; }

  void run(const Call &call, CUstream stream) override {
    if (call.count == 0)
      return;
    size_t n = static_cast<size_t>(call.count);
    ncclDataType_t type = dataType(call.dtype);
    // cudaStream_t and CUstream are the same type.
    ncclResult_t result = ncclSuccess;
    switch (call.kind) {
    case Call::AllReduce:
      result = nccl.ncclAllReduce(call.send, call.recv, n, type,
                                  reduction(call.op), comm, stream);
      break;
    case Call::ReduceScatter:
      result = nccl.ncclReduceScatter(call.send, call.recv, n, type,
                                      reduction(call.op), comm, stream);
      break;
    case Call::AllGather:
      result = nccl.ncclAllGather(call.send, call.recv, n, type, comm, stream);
      break;
    case Call::Broadcast:
      result = nccl.ncclBroadcast(call.send, call.recv, n, type, call.root,
                                  comm, stream);
      break;
    }
    finishNcclCall(nccl, comm, result, namesOf(call.kind).nccl,
                   host.collectiveTimeout());
  }

  void checkAsyncError() override {
    ncclResult_t state = ncclSuccess;
    if (nccl.ncclCommGetAsyncError(comm, &state) != ncclSuccess)
      return;
    if (state != ncclSuccess && state != ncclInProgress)
      fail("NCCL failed in the background: %s (a peer may have died or the "
           "network failed; NCCL_DEBUG=WARN says more)",
           nccl.ncclGetErrorString(state));
  }

  void close(bool failed) override {
    // After a failure a peer may never take part again: only an abort
    // returns.
    closeNcclComm(nccl, comm, failed, host.collectiveTimeout());
    comm = nullptr;
  }

private:
  static ncclDataType_t dataType(DType dtype) {
    switch (dtype) {
    case DType::F32:
      return ncclFloat32;
    case DType::F64:
      return ncclFloat64;
    case DType::I32:
      return ncclInt32;
    case DType::I64:
      return ncclInt64;
    }
    return ncclFloat32;
  }
  /// Mean is NCCL's average: for floats each rank's value times 1/ranks,
  /// summed; for integers the sum divided by the ranks (truncating).
  static ncclRedOp_t reduction(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Mean:
      return ncclAvg;
    case ReduceOp::Max:
      return ncclMax;
    }
    return ncclSum;
  }

  const NcclLibrary &nccl;
  ncclComm_t comm;
  const Communicator &host;
};

/// One rank without NCCL.
class CopyCarrier final : public Carrier {
public:
  explicit CopyCarrier(CudaDevice &device) : device(device) {}
  const char *name() const override { return "cuda-local"; }
  void run(const Call &call, CUstream stream) override {
    if (call.kind == Call::AllReduce || call.kind == Call::Broadcast ||
        call.send == call.recv || call.count == 0)
      return;
    size_t bytes = static_cast<size_t>(call.count) * dtypeSize(call.dtype);
    device.check(device.driver().cuMemcpyDtoDAsync(
                     reinterpret_cast<CUdeviceptr>(call.recv),
                     reinterpret_cast<CUdeviceptr>(call.send), bytes, stream),
                 "cuMemcpyDtoDAsync");
  }

private:
  CudaDevice &device;
};

/// A one-rank NCCL communicator, or copies when NCCL cannot be loaded (one
/// rank needs nothing NCCL does; it is used when present so that a single
/// GPU runs the same code as many).
std::unique_ptr<Carrier> singleRankCarrier(CudaDevice &device,
                                           const Communicator &host) {
  const NcclLibrary *nccl = nullptr;
  try {
    nccl = &loadNccl();
  } catch (const Error &) {
    return std::make_unique<CopyCarrier>(device);
  }
  ncclUniqueId id;
  nccl->check(nccl->ncclGetUniqueId(&id), "ncclGetUniqueId");
  device.bind();
  ncclComm_t comm = makeNcclComm(*nccl, 1, id, 0, host.collectiveTimeout());
  return std::make_unique<NcclCarrier>(*nccl, comm, host);
}

/// With several ranks it is also a source the device polls while the host
/// waits for the GPU (CudaDevice::waitFor): a collective still running
/// --collective-timeout seconds after it was issued means a peer is stuck
/// (SIGSTOP, a hang) while NCCL, whose peers are all alive, reports
/// nothing; the wait then fails and the job stops, as the CPU path's
/// watchdog stops it.
class StreamCommunicator final : public DeviceCommunicator,
                                 public AsyncErrorSource {
public:
  using MakeCarrier = std::function<std::unique_ptr<Carrier>()>;

  /// `carrier` null: made by `make` at the first collective.
  StreamCommunicator(CudaDevice &device, Communicator &host,
                     std::unique_ptr<Carrier> carrier, MakeCarrier make)
      : device(device), host(host), carrier(std::move(carrier)),
        makeCarrier(std::move(make)), timer(device.driver()) {
    device.check(device.driver().cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING),
                 "cuEventCreate");
    if (this->carrier)
      device.watch(this->carrier.get());
    if (host.size() > 1)
      device.watch(this);
  }

  ~StreamCommunicator() override {
    bool failed = false;
    try {
      if (issuedCount > 0)
        drain();
    } catch (const std::exception &) {
      failed = true;
    }
    if (host.size() > 1)
      device.unwatch(this);
    if (carrier) {
      device.unwatch(carrier.get());
      carrier->close(failed);
    }
    for (Pending &entry : pending)
      spareEvents.push_back(entry.done);
    for (CUevent event : spareEvents)
      device.driver().cuEventDestroy(event);
    device.driver().cuEventDestroy(ready);
  }

  int rank() const override { return host.rank(); }
  int size() const override { return host.size(); }
  const char *backend() const override {
    return carrier ? carrier->name() : "nccl";
  }

  void allReduce(void *buf, int64_t count, DType dtype, ReduceOp op) override {
    wait(start({Call::AllReduce, buf, buf, count, dtype, op, 0}, false));
  }
  void reduceScatter(const void *send, void *recv, int64_t count, DType dtype,
                     ReduceOp op) override {
    wait(start({Call::ReduceScatter, send, recv, count, dtype, op, 0}, false));
  }
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override {
    wait(start({Call::AllGather, send, recv, count, dtype, ReduceOp::Sum, 0},
               false));
  }
  void broadcast(void *buf, int64_t count, DType dtype, int root) override {
    wait(start({Call::Broadcast, buf, buf, count, dtype, ReduceOp::Sum, root},
               false));
  }
  void barrier() override {
    // A collective on every rank, and the host waits for it.
    void *scratch = device.allocate(sizeof(int32_t));
    allReduce(scratch, 1, DType::I32, ReduceOp::Sum);
    drain();
    device.release(scratch);
  }
  [[noreturn]] void abort(int status) override {
    host.abort(status);
    std::_Exit(status); // abort() does not return; this tells the compiler
  }
  bool supportsCommThread() const override { return false; }

  int64_t startAllReduce(void *buf, int64_t count, DType dtype,
                         ReduceOp op) override {
    return start({Call::AllReduce, buf, buf, count, dtype, op, 0}, false);
  }
  int64_t startReduceScatter(const void *send, void *recv, int64_t count,
                             DType dtype, ReduceOp op) override {
    return start({Call::ReduceScatter, send, recv, count, dtype, op, 0}, true);
  }
  int64_t startAllGather(const void *send, void *recv, int64_t count,
                         DType dtype) override {
    return start({Call::AllGather, send, recv, count, dtype, ReduceOp::Sum, 0},
                 true);
  }
  int64_t startBroadcast(void *buf, int64_t count, DType dtype,
                         int root) override {
    return start({Call::Broadcast, buf, buf, count, dtype, ReduceOp::Sum, root},
                 false);
  }

  void wait(int64_t ticket) override {
    // The newest pending collective at or before `ticket`: the stream runs
    // them in order, so its event covers the older ones.
    auto last = pending.end();
    for (auto it = pending.begin(); it != pending.end() && it->ticket <= ticket;
         ++it)
      last = it;
    if (last == pending.end())
      return; // already waited for
    timer.computeWaits(last->ticket, device.computeStream());
    device.check(device.driver().cuStreamWaitEvent(device.computeStream(),
                                                   last->done, 0),
                 "cuStreamWaitEvent");
    for (auto it = pending.begin(); it != std::next(last); ++it) {
      // The wait captured the event's state; it may be recorded again.
      spareEvents.push_back(it->done);
      if (it->staged)
        device.pool().release(it->staged);
    }
    pending.erase(pending.begin(), std::next(last));
  }

  int64_t issued() const override { return issuedCount; }

  void drain() override {
    wait(issuedCount);
    device.synchronize();
  }

  void checkAsyncError() override {
    const double limit = host.collectiveTimeout();
    if (limit <= 0)
      return;
    if (std::optional<CollectiveTimer::Overdue> late = timer.overdue(limit))
      fail("%s", CollectiveTimer::describe(*late, limit).c_str());
  }

  DeviceCommTimes takeTimes() override {
    return timer.take(device.computeStream());
  }

private:
  struct Pending {
    int64_t ticket;
    CUevent done;
    uintptr_t staged;
  };

  int64_t start(Call call, bool stage) {
    device.bind();
    if (!carrier) {
      carrier = makeCarrier();
      device.watch(carrier.get());
    }
    const Driver &driver = device.driver();
    CUstream compute = device.computeStream(), comm = device.commStream();
    uintptr_t staged = 0;
    const size_t element = dtypeSize(call.dtype);
    size_t sendBytes = static_cast<size_t>(call.count) * element;
    if (call.kind == Call::ReduceScatter)
      sendBytes *= static_cast<size_t>(size());
    // An all-gather from this rank's slice of recv needs no copy: recv is
    // the runtime's until the wait. A reduce-scatter is always staged, in
    // place too: recv is then one slice of send, and compiled code may
    // reuse the rest of send as soon as the start returns (abi.h).
    bool inPlace = call.kind == Call::AllGather &&
                   call.send == static_cast<const char *>(call.recv) +
                                    rank() * call.count * element;
    if (stage && sendBytes > 0 && !inPlace) {
      staged = device.pool().allocate(sendBytes);
      device.check(
          driver.cuMemcpyDtoDAsync(static_cast<CUdeviceptr>(staged),
                                   reinterpret_cast<CUdeviceptr>(call.send),
                                   sendBytes, compute),
          "cuMemcpyDtoDAsync");
      call.send = reinterpret_cast<const void *>(staged);
    }
    device.check(driver.cuEventRecord(ready, compute), "cuEventRecord");
    device.check(driver.cuStreamWaitEvent(comm, ready, 0), "cuStreamWaitEvent");
    const int64_t ticket = issuedCount + 1;
    const KindNames &names = namesOf(call.kind);
    timer.begin(ticket, comm, names.trace,
                static_cast<int64_t>(call.count * element),
                names.op ? names.op : reduceOpName(call.op));
    try {
      carrier->run(call, comm);
      timer.end(ticket, comm);
    } catch (...) {
      if (staged)
        device.pool().release(staged);
      throw;
    }
    CUevent done = nullptr;
    if (!spareEvents.empty()) {
      done = spareEvents.back();
      spareEvents.pop_back();
    } else {
      device.check(driver.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING),
                   "cuEventCreate");
    }
    device.check(driver.cuEventRecord(done, comm), "cuEventRecord");
    issuedCount = ticket;
    pending.push_back({ticket, done, staged});
    device.afterEnqueue(namesOf(call.kind).nccl);
    return issuedCount;
  }

  CudaDevice &device;
  Communicator &host;
  std::unique_ptr<Carrier> carrier;
  MakeCarrier makeCarrier;
  CUevent ready = nullptr;
  std::deque<Pending> pending;
  std::vector<CUevent> spareEvents;
  int64_t issuedCount = 0;
  CollectiveTimer timer;
};

} // namespace

std::unique_ptr<DeviceCommunicator>
connectDeviceCommunicator(CudaDevice &device, Communicator &host) {
  if (host.size() == 1)
    return std::make_unique<StreamCommunicator>(
        device, host, nullptr,
        [&device, &host] { return singleRankCarrier(device, host); });

  const NcclLibrary *nccl = nullptr;
  ncclComm_t comm = joinNcclRanks(
      host, {[&device] { return device.uuid(); }, [&device] { device.bind(); }},
      nccl);
  return std::make_unique<StreamCommunicator>(
      device, host, std::make_unique<NcclCarrier>(*nccl, comm, host), nullptr);
}

} // namespace loom::rt::cuda
