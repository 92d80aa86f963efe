//===- Clock.h - Elapsed time and short sleeps ------------------*- C++ -*-===//
//
// Internal to the runtime: the one clock its timings use (monotonic, so a
// clock change never makes a step or a save look negative), and the timer
// slack of the threads whose polling loops sleep for microseconds.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CLOCK_H
#define LOOM_RUNTIME_SRC_CLOCK_H

#include <chrono>

#include <sys/prctl.h>

namespace loom::rt {

using Clock = std::chrono::steady_clock;

/// Seconds from `start` to now.
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Has Linux wake the calling thread's sleeps within 1 ns of when they are
/// due rather than within its default 50 us timer slack, which stretches
/// the microsecond sleeps of a polling loop several times over (each
/// thread once; a thread's later calls cost nothing).
inline void usePreciseSleeps() {
  static thread_local bool set = [] {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    return true;
  }();
  (void)set;
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CLOCK_H
