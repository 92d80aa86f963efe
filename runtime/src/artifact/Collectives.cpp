//===- Collectives.cpp - The loom_rt_* collectives of abi.h -----*- C++ -*-===//
//
// The exported collectives validate their arguments, forward to the current
// communicator and add their duration to a process-wide counter. Compiled
// code cannot catch exceptions, so a failure inside one (a bad argument, an
// MPI error) is printed and stops the whole job: the other ranks would
// otherwise wait forever for this rank's part of the collective.
//
// In a multi-rank job the collectives run on a communication thread
// (CommQueue.h) in issue order: *_start enqueues and returns a handle,
// loom_rt_wait blocks until that collective is done, and the synchronous
// forms enqueue and wait (or, once the caller waited for all it queued, run
// on the caller), so the backend sees one thread at a time and one order;
// with setAsyncCollectives(false) a start runs on the caller too, like a
// synchronous collective (loom-run --async-collectives). The
// time the caller spends blocked (in waits and synchronous collectives) is the
// communication that compute did not hide. A one-rank world has no
// thread: collectives run inline and *_start returns a handle already done.
//
// Called from a cuda artifact's entry point, compiled code passes device
// buffers, and every collective goes to the device communicator instead
// (NCCL, connected by ScopedCurrentCommunicator while a cuda artifact is
// loaded; src/device/Device.h): the calls only
// enqueue work on the GPU's communication stream, the handles are its
// tickets, and loom_rt_wait makes the compute stream wait, so no thread and
// no host blocking is involved; their time is the GPU's, measured with
// events and added to the counters when the step drains the device. The host
// communicator stays current for the runtime's own (host-buffer) reductions and
// for stopping the job.
//
// Why here, in artifact/, and not in comm/: these are services compiled code
// calls, like the allocator and GEMM beside them, and choosing between the
// host communicator and the device one needs both the communication layer
// and the device layer (device/Device.h), which itself builds on comm/
// (DeviceCommunicator is a Communicator). Kept in comm/, they would make comm/
// and device/ include each other. What the communicators themselves need,
// the current communicator and abortJob, stays in comm/
// (CurrentCommunicator.cpp); the communication thread they run on is comm/'s
// CommQueue.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Collectives.h"
#include "MeshGroups.h"
#include "comm/CommQueue.h"
#include "compress/Compression.h"
#include "device/Device.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Trace.h"
#include "loom/runtime/Transfers.h"
#include "loom/runtime/abi.h"
#include "support/Export.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace loom::rt {

namespace {

/// The host side of the one-rank device communicator made when none is
/// installed (deviceCollectives).
LocalCommunicator localWorld;
std::atomic<int64_t> nanosInCollectives{0};
std::atomic<int64_t> nanosBlocked{0};
/// Handles given out by the *_start collectives of a world without a queue.
std::atomic<int64_t> handlesIssued{0};
/// setAsyncCollectives, and the host *_start calls counted.
std::atomic<bool> startsAsync{true};
std::atomic<int64_t> startsIssued{0};
/// The communication thread of the current multi-rank communicator.
std::atomic<CommQueue *> queue{nullptr};
/// The device communicator installed by ScopedCurrentCommunicator.
std::atomic<DeviceCommunicator *> deviceComm{nullptr};
/// The groups of the current mesh's axes (MeshGroups.h), when a mesh of
/// several axes was installed with the communicator.
std::atomic<MeshGroups *> meshGroups{nullptr};

/// The communicator of group `group` (MeshGroups.h), or null.
Communicator *groupCommunicator(int64_t group) {
  if (group == 0)
    return &currentCommunicator();
  MeshGroups *groups = meshGroups.load();
  return groups ? groups->find(group) : nullptr;
}

using Clock = std::chrono::steady_clock;

int64_t nanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                              start)
      .count();
}

/// Blocks the calling (compute) thread until queued collective `handle` is
/// done, counting the time as exposed communication.
void blockOn(CommQueue &q, int64_t handle) {
  if (q.completed() >= handle) {
    q.wait(handle); // returns at once; counts as waited for
    return;
  }
  int64_t startNs = traceNowNanos();
  Clock::time_point start = Clock::now();
  q.wait(handle);
  int64_t waited = nanosSince(start);
  nanosBlocked += waited;
  if (tracingEnabled())
    recordTrace({"wait", TraceLane::Compute, startNs, waited, -1, ""});
}

/// Validates the arguments every collective has; returns the dtype.
DType checkedType(const char *name, int64_t group, int64_t count,
                  int32_t dtype) {
  if (!groupCommunicator(group))
    abortJob(formatString("%s: group %lld is not defined (group 0 is all "
                          "ranks, group g > 0 the mesh axes of g's bits; "
                          "the artifact's mesh has no such group)",
                          name, static_cast<long long>(group)));
  if (count < 0)
    abortJob(formatString("%s: negative count %lld", name,
                          static_cast<long long>(count)));
  if (dtype < LOOM_F32 || dtype > LOOM_I64)
    abortJob(formatString("%s: unknown dtype %d (abi.h loom_dtype)", name,
                          static_cast<int>(dtype)));
  return static_cast<DType>(dtype);
}

/// Runs one collective: validates the common arguments, then runs `body`
/// timed, turning any exception into a job abort naming the entry point:
/// inline without a queue, else on the communication thread. Returns the
/// handle (an async start does not wait for it).
int64_t collective(const char *name, int64_t group, int64_t count,
                   int32_t dtype, const char *op, bool async,
                   std::function<void(Communicator &, DType)> body) {
  DType type = checkedType(name, group, count, dtype);
  Communicator &comm = *groupCommunicator(group);
  int64_t bytes = count * static_cast<int64_t>(dtypeSize(type));
  auto run = [&comm, name, type, bytes, op, body = std::move(body)] {
    int64_t startNs = traceNowNanos();
    Clock::time_point start = Clock::now();
    try {
      body(comm, type);
    } catch (const std::exception &e) {
      abortJob(formatString("%s: %s", name, e.what()), &comm);
    }
    int64_t took = nanosSince(start);
    nanosInCollectives += took;
    if (tracingEnabled()) {
      std::string event = name;
      if (event.rfind("loom_rt_", 0) == 0)
        event = event.substr(8);
      recordTrace({event, TraceLane::Comm, startNs, took, bytes, op});
    }
  };
  CommQueue *q = queue.load();
  if (async)
    ++startsIssued;
  // A synchronous collective (and a start while starts run here) runs here
  // when the caller has waited for all it queued: same order, no hand-off
  // (only this thread enqueues, so the queue stays empty meanwhile), and
  // the same choice on every rank (CommQueue.h: not "when the queue is
  // empty").
  const bool here = !async || !startsAsync.load();
  if (!q || (here && q->awaitedAll())) {
    Clock::time_point start = Clock::now();
    run();
    nanosBlocked += nanosSince(start);
    if (!async)
      return 0;
    return q ? q->ranOnCaller() : ++handlesIssued;
  }
  int64_t handle = q->enqueue(std::move(run));
  if (!async)
    blockOn(*q, handle);
  return handle;
}

/// The device communicator when the caller is a cuda artifact's entry
/// point, else nullptr (host buffers). Without one installed (no trainer
/// around the calls: loom-gradcheck, tests), a one-rank device communicator
/// made on first use.
DeviceCommunicator *deviceCollectives(const char *name) {
  Device *device = deviceOfCall();
  if (!device)
    return nullptr;
  if (DeviceCommunicator *installed = deviceComm.load())
    return installed;
  static std::mutex mutex;
  static DeviceCommunicator *alone = nullptr; // lives as long as the process
  std::lock_guard<std::mutex> lock(mutex);
  if (!alone) {
    try {
      alone = device->connect(localWorld).release();
    } catch (const std::exception &e) {
      abortJob(formatString("%s: %s", name, e.what()));
    }
  }
  return alone;
}

/// Runs one collective on the device communicator: validates the common
/// arguments, then enqueues it through `body`, which returns its ticket (0
/// for the synchronous forms). Any failure stops the job.
int64_t
onDevice(DeviceCommunicator &comm, const char *name, int64_t group,
         int64_t count, int32_t dtype,
         const std::function<int64_t(DeviceCommunicator &, DType)> &body) {
  DType type = checkedType(name, group, count, dtype);
  if (groupCommunicator(group) != &currentCommunicator())
    abortJob(formatString("%s: collectives of a group of ranks smaller than "
                          "the job run on the CPU only for now",
                          name));
  try {
    return body(comm, type);
  } catch (const std::exception &e) {
    abortJob(formatString("%s: %s", name, e.what()));
  }
}

/// loom_rt_compressed_all_reduce(_start): through the installed
/// compression's plan (a plain mean without one).
int64_t compressedAllReduce(const char *name, int64_t group, void *buf,
                            int64_t count, int32_t dtype, int32_t op,
                            int32_t slot, bool async) {
  if (deviceOfCall())
    abortJob(formatString("%s: compressed collectives run on the CPU only "
                          "(loomc refuses --compress with --target=cuda)",
                          name));
  if (dtype != LOOM_F32 || op != LOOM_MEAN)
    abortJob(formatString("%s: compressed gradients are f32 means (dtype "
                          "%d, op %d)",
                          name, static_cast<int>(dtype), static_cast<int>(op)));
  return collective(
      name, group, count, dtype, "mean", async, [=](Communicator &comm, DType) {
        if (GradientCompression *c = currentCompression())
          c->average(comm, slot, static_cast<float *>(buf), count);
        else
          comm.allReduce(buf, count, DType::F32, ReduceOp::Mean);
      });
}

ReduceOp checkedOp(const char *name, int32_t op) {
  if (op < LOOM_SUM || op > LOOM_MAX)
    abortJob(formatString("%s: unknown reduce op %d (abi.h loom_reduce_op)",
                          name, static_cast<int>(op)));
  return static_cast<ReduceOp>(op);
}

} // namespace

ScopedCurrentCommunicator::ScopedCurrentCommunicator(Communicator &comm,
                                                     const MeshSpec *mesh)
    : previous(exchangeCurrentCommunicator(&comm)), previousQueue(queue.load()),
      previousDevice(deviceComm.load()), previousGroups(meshGroups.load()) {
  // The groups first: connecting them is collective on the job's
  // communicator, which the communication thread below would then own.
  if (mesh && mesh->axes.size() > 1 && comm.size() > 1) {
    try {
      ownGroups = connectMeshGroups(comm, *mesh).release();
    } catch (...) {
      exchangeCurrentCommunicator(previous);
      throw;
    }
    meshGroups.store(ownGroups);
  }
  if (Device *device = activeDevice()) {
    // Device collectives are enqueued, not run: no thread is needed.
    try {
      ownDevice = device->connect(comm).release();
    } catch (...) {
      exchangeCurrentCommunicator(previous);
      throw;
    }
    deviceComm.store(ownDevice);
    queue.store(nullptr);
  } else if (comm.size() > 1 && comm.supportsCommThread()) {
    ownQueue = new CommQueue();
    queue.store(ownQueue);
  } else {
    queue.store(nullptr);
  }
}

ScopedCurrentCommunicator::~ScopedCurrentCommunicator() {
  if (ownDevice) {
    deviceComm.store(previousDevice);
    delete ownDevice; // finishes what is in flight
  }
  queue.store(previousQueue);
  delete ownQueue; // runs what is still queued
  meshGroups.store(previousGroups);
  delete ownGroups;
  exchangeCurrentCommunicator(previous);
}

Communicator *currentGroupCommunicator(int64_t group) {
  return group == 0 || meshGroups.load() ? groupCommunicator(group) : nullptr;
}

double collectiveSeconds() { return nanosInCollectives.load() * 1e-9; }

double blockedCollectiveSeconds() { return nanosBlocked.load() * 1e-9; }

void setAsyncCollectives(bool async) { startsAsync = async; }

int64_t asyncStartsIssued() { return startsIssued.load(); }

void waitForAllCollectives() {
  if (DeviceCommunicator *device = deviceComm.load()) {
    // The host waits here for the kernels too: the collectives' time and
    // the compute stream's stalls for them come from the GPU's events.
    device->drain();
    DeviceCommTimes times = device->takeTimes();
    nanosInCollectives += static_cast<int64_t>(times.commSeconds * 1e9);
    nanosBlocked += static_cast<int64_t>(times.exposedSeconds * 1e9);
    return;
  }
  if (CommQueue *q = queue.load())
    blockOn(*q, q->issued());
}

bool collectiveFinished(int64_t handle) {
  CommQueue *q = queue.load();
  return !q || q->completed() >= handle;
}

int64_t reduceScatterStartInPlace(const void *send, void *recv, int64_t count,
                                  DType dtype, ReduceOp op) {
  return collective("loom_rt_reduce_scatter", 0, count,
                    static_cast<int32_t>(dtype), reduceOpName(op),
                    /*async=*/true, [=](Communicator &comm, DType type) {
                      comm.reduceScatter(send, recv, count, type, op);
                    });
}

int64_t allGatherStartInPlace(const void *send, void *recv, int64_t count,
                              DType dtype) {
  return collective("loom_rt_all_gather", 0, count, static_cast<int32_t>(dtype),
                    "gather", /*async=*/true,
                    [=](Communicator &comm, DType type) {
                      comm.allGather(send, recv, count, type);
                    });
}

} // namespace loom::rt

using namespace loom::rt;

extern "C" {

LOOM_RT_ABI_EXPORT int64_t loom_rt_group_rank(int64_t group) {
  // No collective: the count and dtype only satisfy the common check.
  checkedType("loom_rt_group_rank", group, 0, LOOM_F32);
  return groupCommunicator(group)->rank();
}

LOOM_RT_ABI_EXPORT void loom_rt_all_reduce(int64_t group, void *buf,
                                           int64_t count, int32_t dtype,
                                           int32_t op) {
  const char *name = "loom_rt_all_reduce";
  ReduceOp reduce = checkedOp(name, op);
  if (DeviceCommunicator *device = deviceCollectives(name)) {
    onDevice(*device, name, group, count, dtype,
             [=](DeviceCommunicator &comm, DType type) {
               comm.allReduce(buf, count, type, reduce);
               return int64_t(0);
             });
    return;
  }
  collective(name, group, count, dtype, reduceOpName(reduce),
             /*async=*/false, [=](Communicator &comm, DType type) {
               comm.allReduce(buf, count, type, reduce);
             });
}

LOOM_RT_ABI_EXPORT void loom_rt_compressed_all_reduce(int64_t group, void *buf,
                                                      int64_t count,
                                                      int32_t dtype, int32_t op,
                                                      int32_t slot) {
  compressedAllReduce("loom_rt_compressed_all_reduce", group, buf, count, dtype,
                      op, slot, /*async=*/false);
}

LOOM_RT_ABI_EXPORT int64_t
loom_rt_compressed_all_reduce_start(int64_t group, void *buf, int64_t count,
                                    int32_t dtype, int32_t op, int32_t slot) {
  return compressedAllReduce("loom_rt_compressed_all_reduce_start", group, buf,
                             count, dtype, op, slot, /*async=*/true);
}

LOOM_RT_ABI_EXPORT void loom_rt_reduce_scatter(int64_t group, const void *send,
                                               void *recv, int64_t count,
                                               int32_t dtype, int32_t op) {
  const char *name = "loom_rt_reduce_scatter";
  ReduceOp reduce = checkedOp(name, op);
  if (DeviceCommunicator *device = deviceCollectives(name)) {
    onDevice(*device, name, group, count, dtype,
             [=](DeviceCommunicator &comm, DType type) {
               comm.reduceScatter(send, recv, count, type, reduce);
               return int64_t(0);
             });
    return;
  }
  collective(name, group, count, dtype, reduceOpName(reduce),
             /*async=*/false, [=](Communicator &comm, DType type) {
               comm.reduceScatter(send, recv, count, type, reduce);
             });
}

LOOM_RT_ABI_EXPORT void loom_rt_all_gather(int64_t group, const void *send,
                                           void *recv, int64_t count,
                                           int32_t dtype) {
  const char *name = "loom_rt_all_gather";
  if (DeviceCommunicator *device = deviceCollectives(name)) {
    onDevice(*device, name, group, count, dtype,
             [=](DeviceCommunicator &comm, DType type) {
               comm.allGather(send, recv, count, type);
               return int64_t(0);
             });
    return;
  }
  collective(name, group, count, dtype, "gather",
             /*async=*/false, [=](Communicator &comm, DType type) {
               comm.allGather(send, recv, count, type);
             });
}

namespace {

void checkRoot(int64_t group, int32_t root) {
  Communicator *comm = groupCommunicator(group);
  if (comm && (root < 0 || root >= comm->size()))
    abortJob(formatString("loom_rt_broadcast: root %d is not a rank of the "
                          "group (it has %d)",
                          root, comm->size()));
}

} // namespace

LOOM_RT_ABI_EXPORT void loom_rt_broadcast(int64_t group, void *buf,
                                          int64_t count, int32_t dtype,
                                          int32_t root) {
  const char *name = "loom_rt_broadcast";
  checkRoot(group, root);
  if (DeviceCommunicator *device = deviceCollectives(name)) {
    onDevice(*device, name, group, count, dtype,
             [=](DeviceCommunicator &comm, DType type) {
               comm.broadcast(buf, count, type, root);
               return int64_t(0);
             });
    return;
  }
  collective(name, group, count, dtype, "broadcast",
             /*async=*/false, [=](Communicator &comm, DType type) {
               comm.broadcast(buf, count, type, root);
             });
}

namespace {

/// The rank of `group` at `peer` places from this one, or a job abort.
int transferPeer(const char *name, int64_t group, int64_t count, int32_t dtype,
                 int32_t peer) {
  checkedType(name, group, count, dtype);
  if (deviceCollectives(name))
    abortJob(formatString("%s: pipeline transfers run on CPU artifacts only "
                          "yet",
                          name));
  Communicator &comm = *groupCommunicator(group);
  int64_t at = int64_t(comm.rank()) + peer;
  if (peer == 0 || at < 0 || at >= comm.size())
    abortJob(formatString("%s: rank %d of its group (of %d) has no peer %d "
                          "places away (a pipeline stage beyond the first or "
                          "last)",
                          name, comm.rank(), comm.size(), peer));
  return static_cast<int>(at);
}

} // namespace

LOOM_RT_ABI_EXPORT void loom_rt_send(int64_t group, const void *buf,
                                     int64_t count, int32_t dtype,
                                     int32_t peer) {
  const char *name = "loom_rt_send";
  int to = transferPeer(name, group, count, dtype, peer);
  collective(
      name, group, count, dtype, "send", /*async=*/false,
      [=](Communicator &comm, DType type) { comm.send(buf, count, type, to); });
}

LOOM_RT_ABI_EXPORT void loom_rt_recv(int64_t group, void *buf, int64_t count,
                                     int32_t dtype, int32_t peer) {
  const char *name = "loom_rt_recv";
  int from = transferPeer(name, group, count, dtype, peer);
  collective(name, group, count, dtype, "recv", /*async=*/false,
             [=](Communicator &comm, DType type) {
               comm.recv(buf, count, type, from);
             });
}

LOOM_RT_ABI_EXPORT int64_t loom_rt_all_reduce_start(int64_t group, void *buf,
                                                    int64_t count,
                                                    int32_t dtype, int32_t op) {
  ReduceOp reduce = checkedOp("loom_rt_all_reduce_start", op);
  if (DeviceCommunicator *device =
          deviceCollectives("loom_rt_all_reduce_start"))
    return onDevice(*device, "loom_rt_all_reduce_start", group, count, dtype,
                    [=](DeviceCommunicator &comm, DType type) {
                      return comm.startAllReduce(buf, count, type, reduce);
                    });
  return collective("loom_rt_all_reduce", group, count, dtype,
                    reduceOpName(reduce), /*async=*/true,
                    [=](Communicator &comm, DType type) {
                      comm.allReduce(buf, count, type, reduce);
                    });
}

LOOM_RT_ABI_EXPORT int64_t loom_rt_broadcast_start(int64_t group, void *buf,
                                                   int64_t count, int32_t dtype,
                                                   int32_t root) {
  checkRoot(group, root);
  if (DeviceCommunicator *device = deviceCollectives("loom_rt_broadcast_start"))
    return onDevice(*device, "loom_rt_broadcast_start", group, count, dtype,
                    [=](DeviceCommunicator &comm, DType type) {
                      return comm.startBroadcast(buf, count, type, root);
                    });
  return collective("loom_rt_broadcast", group, count, dtype, "broadcast",
                    /*async=*/true, [=](Communicator &comm, DType type) {
                      comm.broadcast(buf, count, type, root);
                    });
}

namespace {

/// A copy of `bytes` of `send` in a block of the runtime's allocation cache,
/// freed when the last copy of the returned pointer goes: an asynchronous
/// collective reads it after its start has returned, when compiled code may
/// already have reused the original buffer.
std::shared_ptr<void> stage(const void *send, int64_t bytes) {
  void *copy = _mlir_memref_to_llvm_alloc(static_cast<size_t>(bytes));
  if (bytes > 0) // `send` may be null then (an empty vector's data())
    std::memcpy(copy, send, static_cast<size_t>(bytes));
  return std::shared_ptr<void>(copy, _mlir_memref_to_llvm_free);
}

int64_t elementBytes(int32_t dtype) {
  return dtype >= LOOM_F32 && dtype <= LOOM_I64
             ? static_cast<int64_t>(dtypeSize(static_cast<DType>(dtype)))
             : 0; // collective() rejects the dtype before anything is read
}

} // namespace

LOOM_RT_ABI_EXPORT int64_t
loom_rt_reduce_scatter_start(int64_t group, const void *send, void *recv,
                             int64_t count, int32_t dtype, int32_t op) {
  ReduceOp reduce = checkedOp("loom_rt_reduce_scatter_start", op);
  // The device communicator stages `send` on the GPU itself.
  if (DeviceCommunicator *device =
          deviceCollectives("loom_rt_reduce_scatter_start"))
    return onDevice(*device, "loom_rt_reduce_scatter_start", group, count,
                    dtype, [=](DeviceCommunicator &comm, DType type) {
                      return comm.startReduceScatter(send, recv, count, type,
                                                     reduce);
                    });
  // Every rank's block of the group's (not the job's: a tensor-parallel
  // reduce-scatter spans some of the ranks).
  checkedType("loom_rt_reduce_scatter_start", group, count, dtype);
  int64_t bytes =
      count > 0 ? count * groupCommunicator(group)->size() * elementBytes(dtype)
                : 0;
  std::shared_ptr<void> staged = stage(send, bytes);
  return collective(
      "loom_rt_reduce_scatter", group, count, dtype, reduceOpName(reduce),
      /*async=*/true, [=](Communicator &comm, DType type) {
        comm.reduceScatter(staged.get(), recv, count, type, reduce);
      });
}

LOOM_RT_ABI_EXPORT int64_t loom_rt_all_gather_start(int64_t group,
                                                    const void *send,
                                                    void *recv, int64_t count,
                                                    int32_t dtype) {
  if (DeviceCommunicator *device =
          deviceCollectives("loom_rt_all_gather_start"))
    return onDevice(*device, "loom_rt_all_gather_start", group, count, dtype,
                    [=](DeviceCommunicator &comm, DType type) {
                      return comm.startAllGather(send, recv, count, type);
                    });
  std::shared_ptr<void> staged =
      stage(send, count > 0 ? count * elementBytes(dtype) : 0);
  return collective("loom_rt_all_gather", group, count, dtype, "gather",
                    /*async=*/true, [=](Communicator &comm, DType type) {
                      comm.allGather(staged.get(), recv, count, type);
                    });
}

LOOM_RT_ABI_EXPORT void loom_rt_wait(int64_t handle) {
  if (handle < 0) // loom_rt_transfer_start's
    return waitForTransfer(handle);
  DeviceCommunicator *device = deviceCollectives("loom_rt_wait");
  CommQueue *q = queue.load();
  int64_t issued = device ? device->issued()
                   : q    ? q->issued()
                          : handlesIssued.load();
  if (handle <= 0 || handle > issued)
    abortJob(formatString("loom_rt_wait: %lld is not a handle returned by a "
                          "loom_rt_*_start call",
                          static_cast<long long>(handle)));
  if (device) {
    try {
      device->wait(handle);
    } catch (const std::exception &e) {
      abortJob(formatString("loom_rt_wait: %s", e.what()));
    }
    return;
  }
  if (q)
    blockOn(*q, handle);
}

} // extern "C"
