//===- Progress.h - Human-readable training progress ------------*- C++ -*-===//
//
// Formats the stderr progress line
//   step 120/1000 | loss 2.3412 | lr 3.00e-04 | 45.2k tok/s | 1.9 ms/step | ETA
//   0:01:40
// with rates averaged over the steps since the previous line, so the numbers
// reflect current speed rather than start-up cost.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_PROGRESS_H
#define LOOM_RUNTIME_PROGRESS_H

#include <cstdint>
#include <string>

namespace loom::rt {

/// "45.2k", "1.3M", "812": three significant digits and a k/M/G suffix.
std::string formatCount(double value);
/// "H:MM:SS".
std::string formatDuration(double seconds);

class ProgressReporter {
public:
  /// Lines are due on the first and last step and every `every` steps
  /// (0: only first and last). Throughput is `tokensPerStep` units of
  /// `unit` per step: "tok" (lm), "rows" (classify: a row is a sample, not
  /// a token), "steps" (task none, one per step).
  ProgressReporter(int64_t firstStep, int64_t lastStep, int64_t every,
                   int64_t tokensPerStep, std::string unit = "tok");

  /// Accounts one step; returns the line to print, or "" if none is due.
  /// `lr` NaN omits the lr field. `final`: the run stops after this step
  /// (on request, before lastStep), so a line is due.
  std::string step(int64_t step, double loss, double lr, double stepSeconds,
                   bool final = false);

private:
  int64_t firstStep, lastStep, every, tokensPerStep;
  std::string unit;
  int64_t windowSteps = 0;
  double windowSeconds = 0;
  int64_t totalSteps = 0;
  double totalSeconds = 0;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_PROGRESS_H
