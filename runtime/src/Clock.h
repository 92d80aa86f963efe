//===- Clock.h - Elapsed time -----------------------------------*- C++ -*-===//
//
// Internal to the runtime: the one clock its timings use (monotonic, so a
// clock change never makes a step or a save look negative).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CLOCK_H
#define LOOM_RUNTIME_SRC_CLOCK_H

#include <chrono>

namespace loom::rt {

using Clock = std::chrono::steady_clock;

/// Seconds from `start` to now.
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CLOCK_H
