//===- ExitDeadline.cpp - Ending a rank whose way out is stuck --*- C++ -*-===//

#include "ExitDeadline.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace loom::rt {

double exitDeadlineSeconds() {
  const char *text = std::getenv("LOOM_ABORT_DEADLINE_S");
  return text && *text ? std::max(0.1, std::atof(text)) : 30.0;
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
