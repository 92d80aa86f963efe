//===- EventPool.h - Timing events, made once and reused --------*- C++ -*-===//
//
// Internal to libLoomCuda.so. The GPU timers (KernelProfile.h,
// CollectiveTimer.h) bracket work with CUDA events that can be timed, many
// per step: making one costs a driver call, so an event goes back to the
// pool once its time has been read and is recorded again later. Not
// thread-safe: each owner locks as it needs.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_EVENTPOOL_H
#define LOOM_RUNTIME_SRC_CUDA_EVENTPOOL_H

#include "CudaDriver.h"

#include <vector>

namespace loom::rt::cuda {

class EventPool {
public:
  explicit EventPool(const Driver &driver) : drv(driver) {}
  /// Destroys the events given back (owners give theirs back first).
  ~EventPool();
  EventPool(const EventPool &) = delete;
  EventPool &operator=(const EventPool &) = delete;

  /// An event recorded on `stream` now; null if none could be made or
  /// recorded (the work it would time then goes untimed).
  CUevent record(CUstream stream);
  /// Returns an event for reuse (null is ignored).
  void give(CUevent event);
  /// Milliseconds from `start` to `end`: CUDA_SUCCESS, CUDA_ERROR_NOT_READY
  /// while the GPU has not reached both, or another error.
  CUresult elapsed(float &ms, CUevent start, CUevent end) const {
    return drv.cuEventElapsedTime(&ms, start, end);
  }
  /// CUDA_SUCCESS once the GPU has reached `event`, CUDA_ERROR_NOT_READY
  /// before, or another error.
  CUresult query(CUevent event) const { return drv.cuEventQuery(event); }
  /// Blocks until the GPU has reached `event`.
  CUresult synchronize(CUevent event) const {
    return drv.cuEventSynchronize(event);
  }

private:
  const Driver &drv;
  std::vector<CUevent> spare;
};

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_EVENTPOOL_H
