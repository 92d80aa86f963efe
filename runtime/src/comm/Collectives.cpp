//===- Collectives.cpp - The loom_rt_* collectives of abi.h -----*- C++ -*-===//
//
// The exported collectives validate their arguments, forward to the current
// communicator and add their duration to a process-wide counter. Compiled
// code cannot catch exceptions, so a failure inside one (a bad argument, an
// MPI error) is printed and stops the whole job: the other ranks would
// otherwise wait forever for this rank's part of the collective.
//
// The asynchronous forms (*_start / loom_rt_wait) are, for now, the
// synchronous collective run at the start, with a wait that returns at once:
// correct results in issue order on every rank, without the overlap that a
// progress thread will bring.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Collectives.h"
#include "Export.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace loom::rt {

namespace {

LocalCommunicator localWorld;
std::atomic<Communicator *> current{nullptr};
std::atomic<int64_t> nanosInCollectives{0};
/// Handles given out by the *_start collectives so far.
std::atomic<int64_t> handlesIssued{0};

using Clock = std::chrono::steady_clock;

/// Runs one collective: validates the common arguments, times it, and turns
/// any exception into a job abort naming the entry point.
template <typename Fn>
void collective(const char *name, int64_t group, int64_t count, int32_t dtype,
                Fn body) {
  Communicator &comm = currentCommunicator();
  if (group != 0)
    abortJob(formatString("%s: group %lld is not defined (this runtime knows "
                          "only group 0, all ranks)",
                          name, static_cast<long long>(group)));
  if (count < 0)
    abortJob(formatString("%s: negative count %lld", name,
                          static_cast<long long>(count)));
  if (dtype < LOOM_F32 || dtype > LOOM_I64)
    abortJob(formatString("%s: unknown dtype %d (abi.h loom_dtype)", name,
                          static_cast<int>(dtype)));
  Clock::time_point start = Clock::now();
  try {
    body(comm, static_cast<DType>(dtype));
  } catch (const std::exception &e) {
    abortJob(formatString("%s: %s", name, e.what()));
  }
  nanosInCollectives +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
          .count();
}

ReduceOp checkedOp(const char *name, int32_t op) {
  if (op < LOOM_SUM || op > LOOM_MAX)
    abortJob(formatString("%s: unknown reduce op %d (abi.h loom_reduce_op)",
                          name, static_cast<int>(op)));
  return static_cast<ReduceOp>(op);
}

} // namespace

Communicator &currentCommunicator() {
  Communicator *comm = current.load();
  return comm ? *comm : localWorld;
}

ScopedCurrentCommunicator::ScopedCurrentCommunicator(Communicator &comm)
    : previous(current.exchange(&comm)) {}

ScopedCurrentCommunicator::~ScopedCurrentCommunicator() {
  current.store(previous);
}

double collectiveSeconds() { return nanosInCollectives.load() * 1e-9; }

void abortJob(const std::string &message, Communicator *comm) {
  Communicator &target = comm ? *comm : currentCommunicator();
  if (target.size() > 1)
    std::fprintf(stderr, "%s: error: rank %d: %s\n", toolName(), target.rank(),
                 message.c_str());
  else
    std::fprintf(stderr, "%s: error: %s\n", toolName(), message.c_str());
  std::fflush(stderr);
  target.abort(1);
  std::_Exit(1); // abort() does not return; this tells the compiler so
}

} // namespace loom::rt

using namespace loom::rt;

extern "C" {

LOOM_RT_ABI_EXPORT void loom_rt_all_reduce(int64_t group, void *buf,
                                           int64_t count, int32_t dtype,
                                           int32_t op) {
  ReduceOp reduce = checkedOp("loom_rt_all_reduce", op);
  collective("loom_rt_all_reduce", group, count, dtype,
             [&](Communicator &comm, DType type) {
               comm.allReduce(buf, count, type, reduce);
             });
}

LOOM_RT_ABI_EXPORT void loom_rt_reduce_scatter(int64_t group, const void *send,
                                               void *recv, int64_t count,
                                               int32_t dtype, int32_t op) {
  ReduceOp reduce = checkedOp("loom_rt_reduce_scatter", op);
  collective("loom_rt_reduce_scatter", group, count, dtype,
             [&](Communicator &comm, DType type) {
               comm.reduceScatter(send, recv, count, type, reduce);
             });
}

LOOM_RT_ABI_EXPORT void loom_rt_all_gather(int64_t group, const void *send,
                                           void *recv, int64_t count,
                                           int32_t dtype) {
  collective("loom_rt_all_gather", group, count, dtype,
             [&](Communicator &comm, DType type) {
               comm.allGather(send, recv, count, type);
             });
}

LOOM_RT_ABI_EXPORT void loom_rt_broadcast(int64_t group, void *buf,
                                          int64_t count, int32_t dtype,
                                          int32_t root) {
  collective("loom_rt_broadcast", group, count, dtype,
             [&](Communicator &comm, DType type) {
               if (root < 0 || root >= comm.size())
                 fail("root %d is not a rank of the job (it has %d)", root,
                      comm.size());
               comm.broadcast(buf, count, type, root);
             });
}

LOOM_RT_ABI_EXPORT int64_t loom_rt_all_reduce_start(int64_t group, void *buf,
                                                    int64_t count,
                                                    int32_t dtype, int32_t op) {
  loom_rt_all_reduce(group, buf, count, dtype, op);
  return ++handlesIssued;
}

LOOM_RT_ABI_EXPORT int64_t loom_rt_broadcast_start(int64_t group, void *buf,
                                                   int64_t count, int32_t dtype,
                                                   int32_t root) {
  loom_rt_broadcast(group, buf, count, dtype, root);
  return ++handlesIssued;
}

LOOM_RT_ABI_EXPORT void loom_rt_wait(int64_t handle) {
  if (handle <= 0 || handle > handlesIssued.load())
    abortJob(formatString("loom_rt_wait: %lld is not a handle returned by a "
                          "loom_rt_*_start call",
                          static_cast<long long>(handle)));
}

} // extern "C"
