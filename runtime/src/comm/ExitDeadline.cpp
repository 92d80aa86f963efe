//===- ExitDeadline.cpp - Ending a rank whose way out is stuck --*- C++ -*-===//

#include "ExitDeadline.h"
#include "loom/runtime/Error.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace loom::rt {

namespace {

constexpr double kDefaultSeconds = 30.0;
constexpr double kMinSeconds = 0.1, kMaxSeconds = 86400.0;

/// LOOM_ABORT_DEADLINE_S, "" if unset; `seconds` its value when it is a
/// number in [kMinSeconds, kMaxSeconds].
bool parseSetting(std::string &text, double &seconds) {
  const char *value = std::getenv("LOOM_ABORT_DEADLINE_S");
  text = value ? value : "";
  seconds = kDefaultSeconds;
  if (text.empty())
    return true;
  char *end = nullptr;
  double parsed = std::strtod(text.c_str(), &end);
  // The comparisons are false for NaN.
  if (*end != '\0' || !(parsed >= kMinSeconds && parsed <= kMaxSeconds))
    return false;
  seconds = parsed;
  return true;
}

} // namespace

double exitDeadlineSeconds() {
  std::string text;
  double seconds;
  // A bad setting was refused at start-up (checkExitDeadlineSetting); an
  // abort cannot report one.
  return parseSetting(text, seconds) ? seconds : kDefaultSeconds;
}

void checkExitDeadlineSetting() {
  std::string text;
  double seconds;
  if (!parseSetting(text, seconds))
    fail("LOOM_ABORT_DEADLINE_S=%s: expected seconds, a number from %g to %g",
         text.c_str(), kMinSeconds, kMaxSeconds);
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
