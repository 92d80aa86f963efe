//===- CollectiveTimer.h - GPU time of the collectives ----------*- C++ -*-===//
//
// Internal to libLoomCuda.so. On the GPU the collectives run on the
// communication stream while the host goes on, so host clocks say nothing
// about them: what the trainer reports as comm_time_s and exposed_comm_s
// comes from events instead.
//   - A collective's time is from an event recorded on the communication
//     stream just before it (once that stream has waited for the kernels
//     that produce its input) to one just after it.
//   - Its exposed time is how long the compute stream stalled for it: from
//     an event recorded on the compute stream where it starts to wait (a
//     loom_rt_wait, or the end of the step) to the collective's end, if
//     positive. A wait covers every earlier collective (the stream runs
//     them in order), so the stall is measured against the newest one.
// Times are read once the GPU has passed the events (after the step's
// drain); pairs it has not reached are kept for the next read. With
// `loom-run --trace` each collective read is also a "comm" event of the
// Chrome trace and each stall a "wait" on the "compute" lane, placed on the
// host's clock through one more event recorded and waited for at the read
// (the GPU reaches it when the host returns from waiting).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_COLLECTIVETIMER_H
#define LOOM_RUNTIME_SRC_CUDA_COLLECTIVETIMER_H

#include "EventPool.h"
#include "device/Device.h"
#include "support/Clock.h"

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace loom::rt::cuda {

/// Thread-safe.
class CollectiveTimer {
public:
  explicit CollectiveTimer(const Driver &driver) : events(driver) {}
  ~CollectiveTimer();
  CollectiveTimer(const CollectiveTimer &) = delete;
  CollectiveTimer &operator=(const CollectiveTimer &) = delete;

  /// Collective `ticket` (1, 2, ... in issue order) is about to be
  /// enqueued on `comm`, and has just been. `name`, `bytes` and `op` are
  /// what the trace says of it ("all_reduce", 4096, "mean").
  void begin(int64_t ticket, CUstream comm, const char *name = "",
             int64_t bytes = -1, const char *op = "");
  void end(int64_t ticket, CUstream comm);
  /// The compute stream is about to wait for the collectives up to and
  /// including `ticket`.
  void computeWaits(int64_t ticket, CUstream compute);
  /// The times of the collectives whose events the GPU has passed and that
  /// a wait has covered, since the last take (and, when tracing, their trace
  /// events, placed with an event recorded on `compute`).
  DeviceCommTimes take(CUstream compute = nullptr);
  /// Collectives whose time could not be measured (no event could be made,
  /// or the driver refused to time it).
  int64_t untimed() const;
  /// Collectives recorded and not yet taken.
  size_t pending() const;

  /// A collective the GPU has not finished `limitSeconds` after the host
  /// issued it.
  struct Overdue {
    int64_t ticket;
    std::string name;
    int64_t bytes;
    double seconds;
    /// Whether the GPU has begun it. Not yet: the communication stream
    /// still waits for this rank's kernels that produce its input (the
    /// collectives before it have finished), so the hang is this rank's
    /// own, not a peer's.
    bool started;
  };
  /// Why the job stops for `late`, e.g. "all_reduce #12 (4096 bytes) has
  /// not finished on the GPU 61 s after it was issued (--collective-timeout
  /// 60): another rank is stuck ...".
  static std::string describe(const Overdue &late, double limitSeconds);
  /// The oldest overdue collective at `now`, if any (the GPU's watchdog:
  /// cheap while nothing is that old, since entries are in issue order).
  std::optional<Overdue> overdue(double limitSeconds,
                                 Clock::time_point now = Clock::now());

private:
  struct Entry {
    int64_t ticket;
    std::string name;
    int64_t bytes;
    const char *op;
    Clock::time_point issued;
    CUevent start = nullptr, end = nullptr;
    /// Where the compute stream began to wait for it (the newest collective
    /// of a wait only).
    CUevent waitFrom = nullptr;
  };
  Entry *find(int64_t ticket);
  void release(Entry &entry);

  mutable std::mutex mutex;
  EventPool events;
  std::deque<Entry> entries;
  int64_t waitedThrough = 0;
  int64_t untimedCount = 0;
};

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_COLLECTIVETIMER_H
