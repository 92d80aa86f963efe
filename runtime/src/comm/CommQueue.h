//===- CommQueue.h - A thread that runs collectives in order ----*- C++ -*-===//
//
// Internal to the runtime. The asynchronous collectives of abi.h
// (loom_rt_*_start / loom_rt_wait) overlap communication with compute by
// handing each collective to one communication thread per process, which
// runs them in issue order with the backend's blocking calls. Issue order is
// the order every rank agrees on, so one FIFO thread keeps the ranks'
// collectives matched; a wait blocks only until its own collective is done.
// While the queue is in use every loom_rt_* collective goes through it (a
// synchronous one is enqueue + wait, or runs on the caller when the caller
// has waited for everything it queued), so the backend is called by one
// thread at a time in one order; the trainer's own reductions run between
// steps, when the queue is empty.
//
// "Has waited for", not "is empty": the MPI backend runs the collectives of
// this thread non-blocking and those of the caller blocking, and MPI never
// matches a blocking collective with a non-blocking one. Whether a queue
// has drained by the time of a synchronous collective differs between
// ranks (a ring all-reduce ends on one rank before another); what the
// caller has waited for is its program order, the same on every rank.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_COMMQUEUE_H
#define LOOM_RUNTIME_SRC_COMM_COMMQUEUE_H

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace loom::rt {

class CommQueue {
public:
  CommQueue();
  /// Runs what is queued, then stops the thread.
  ~CommQueue();
  CommQueue(const CommQueue &) = delete;
  CommQueue &operator=(const CommQueue &) = delete;

  /// Queues `work` behind everything issued before and returns its handle
  /// (1, 2, ... in issue order) at once.
  int64_t enqueue(std::function<void()> work);
  /// Blocks until the collective with `handle` (and so every one issued
  /// before it) has finished.
  void wait(int64_t handle);
  /// Blocks until everything issued so far has finished.
  void waitAll() { wait(issued()); }
  /// Handles given out so far / collectives finished so far.
  int64_t issued() const;
  int64_t completed() const;
  /// Whether the caller has waited (wait, waitAll) for every handle given
  /// out: a fact of its program order, unlike completed() == issued().
  bool awaitedAll() const;
  /// The handle of a collective the caller ran itself, when awaitedAll():
  /// issued, finished and waited for at once, so handles stay in issue
  /// order and awaitedAll() stays true.
  int64_t ranOnCaller();

private:
  void run();

  mutable std::mutex mutex;
  std::condition_variable workReady;
  std::condition_variable workDone;
  std::deque<std::function<void()>> pending;
  int64_t issuedCount = 0;
  int64_t completedCount = 0;
  int64_t awaitedCount = 0; // the highest handle waited for
  bool stopping = false;
  std::thread thread;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_COMMQUEUE_H
