//===- Progress.cpp - Human-readable training progress ----------*- C++ -*-===//
//
// Formatting of the progress line and of counts and durations.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Progress.h"
#include "loom/runtime/Error.h"

#include <cmath>
#include <utility>

namespace loom::rt {

std::string formatCount(double value) {
  if (!std::isfinite(value))
    return "-";
  static const char *suffixes[] = {"", "k", "M", "G", "T"};
  int scale = 0;
  while (std::fabs(value) >= 999.5 && scale < 4) {
    value /= 1000;
    ++scale;
  }
  if (scale == 0)
    return formatString("%.0f", value);
  // Three significant digits: 1.23k, 12.3k, 123k.
  const char *format = std::fabs(value) < 9.995   ? "%.2f%s"
                       : std::fabs(value) < 99.95 ? "%.1f%s"
                                                  : "%.0f%s";
  return formatString(format, value, suffixes[scale]);
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    seconds = 0;
  long long total = std::llround(seconds);
  return formatString("%lld:%02lld:%02lld", total / 3600, total / 60 % 60,
                      total % 60);
}

ProgressReporter::ProgressReporter(int64_t firstStep, int64_t lastStep,
                                   int64_t every, int64_t tokensPerStep,
                                   std::string unit)
    : firstStep(firstStep), lastStep(lastStep), every(every),
      tokensPerStep(tokensPerStep), unit(std::move(unit)) {}

std::string ProgressReporter::step(int64_t step, double loss, double lr,
                                   double stepSeconds, bool final) {
  ++windowSteps;
  windowSeconds += stepSeconds;
  ++totalSteps;
  totalSeconds += stepSeconds;
  bool due = final || step == firstStep || step == lastStep ||
             (every > 0 && step % every == 0);
  if (!due)
    return "";
  double secondsPerStep = windowSeconds / windowSteps;
  std::string line =
      formatString("step %lld/%lld | loss %.4f", static_cast<long long>(step),
                   static_cast<long long>(lastStep), loss);
  if (std::isfinite(lr))
    line += formatString(" | lr %.2e", lr);
  double tokensPerSecond =
      secondsPerStep > 0 ? tokensPerStep / secondsPerStep : 0;
  line += " | " + formatCount(tokensPerSecond) + " " + unit + "/s";
  double ms = secondsPerStep * 1e3;
  line += ms < 10 ? formatString(" | %.2f ms/step", ms)
                  : formatString(" | %.1f ms/step", ms);
  line += " | ETA " + formatDuration(secondsPerStep * (lastStep - step));
  windowSteps = 0;
  windowSeconds = 0;
  return line;
}

} // namespace loom::rt
