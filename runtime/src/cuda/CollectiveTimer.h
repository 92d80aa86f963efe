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
// drain); pairs it has not reached are kept for the next read.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_COLLECTIVETIMER_H
#define LOOM_RUNTIME_SRC_CUDA_COLLECTIVETIMER_H

#include "EventPool.h"
#include "device/Device.h"

#include <cstdint>
#include <deque>

namespace loom::rt::cuda {

class CollectiveTimer {
public:
  explicit CollectiveTimer(const Driver &driver) : events(driver) {}
  ~CollectiveTimer();
  CollectiveTimer(const CollectiveTimer &) = delete;
  CollectiveTimer &operator=(const CollectiveTimer &) = delete;

  /// Collective `ticket` (1, 2, ... in issue order) is about to be
  /// enqueued on `comm`, and has just been.
  void begin(int64_t ticket, CUstream comm);
  void end(int64_t ticket, CUstream comm);
  /// The compute stream is about to wait for the collectives up to and
  /// including `ticket`.
  void computeWaits(int64_t ticket, CUstream compute);
  /// The times of the collectives whose events the GPU has passed and that
  /// a wait has covered, since the last take.
  DeviceCommTimes take();
  /// Collectives whose time could not be measured (no event could be made,
  /// or the driver refused to time it).
  int64_t untimed() const { return untimedCount; }
  /// Collectives recorded and not yet taken.
  size_t pending() const { return entries.size(); }

private:
  struct Entry {
    int64_t ticket;
    CUevent start = nullptr, end = nullptr;
    /// Where the compute stream began to wait for it (the newest collective
    /// of a wait only).
    CUevent waitFrom = nullptr;
  };
  Entry *find(int64_t ticket);
  void release(Entry &entry);

  EventPool events;
  std::deque<Entry> entries;
  int64_t waitedThrough = 0;
  int64_t untimedCount = 0;
};

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_COLLECTIVETIMER_H
