//===- ExitDeadline.cpp - Ending a rank whose way out is stuck --*- C++ -*-===//

#include "ExitDeadline.h"
#include "loom/runtime/Error.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

namespace loom::rt {

namespace {

constexpr double kDefaultSeconds = 30.0;
constexpr double kMinSeconds = 0.1, kMaxSeconds = 86400.0;

/// LOOM_ABORT_DEADLINE_S's value, "" if unset.
const char *setting() {
  const char *value = std::getenv("LOOM_ABORT_DEADLINE_S");
  return value ? value : "";
}

/// `text` as seconds, if it is a number in [kMinSeconds, kMaxSeconds]; the
/// default when it is empty.
std::optional<double> parseSeconds(const char *text) {
  if (!*text)
    return kDefaultSeconds;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  // The comparisons are false for NaN.
  if (*end != '\0' || !(seconds >= kMinSeconds && seconds <= kMaxSeconds))
    return std::nullopt;
  return seconds;
}

} // namespace

double exitDeadlineSeconds() {
  // A bad setting was refused at start-up (checkExitDeadlineSetting); an
  // abort cannot report one.
  return parseSeconds(setting()).value_or(kDefaultSeconds);
}

void checkExitDeadlineSetting() {
  if (!parseSeconds(setting()))
    fail("LOOM_ABORT_DEADLINE_S=%s: expected seconds, a number from %g to %g",
         setting(), kMinSeconds, kMaxSeconds);
}

void armExitDeadline(const std::string &rankPrefix, const std::string &what,
                     int status) {
  const double deadline = exitDeadlineSeconds();
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::duration<double>(deadline));
    std::fprintf(stderr,
                 "%s: error: %s%s did not end this rank within %g s; "
                 "exiting\n",
                 toolName(), rankPrefix.c_str(), what.c_str(), deadline);
    std::fflush(stderr);
    std::_Exit(status);
  }).detach();
}

} // namespace loom::rt
