//===- StopRequest.cpp - Stopping a training run on request ---------------===//

#include "loom/runtime/StopRequest.h"

#include <atomic>
#include <csignal>
#include <cstring>

namespace loom::rt {

namespace {

// Lock-free, hence safe in a handler that may run on any thread.
std::atomic<int> requested{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onStopSignal(int signal) {
  int none = 0;
  if (requested.compare_exchange_strong(none, signal) || signal == SIGUSR2)
    return;
  // A second SIGINT or SIGTERM: what the signal does by default, now. It is
  // blocked while this handler runs and arrives as soon as it returns.
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  sigaction(signal, &action, nullptr);
  raise(signal);
}

} // namespace

void installStopHandlers(bool interrupts) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = onStopSignal;
  // Blocked calls (a collective, a read of the data) go on after it: the
  // request is served between steps.
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR2, &action, nullptr);
  if (!interrupts)
    return;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stopSignal() { return requested.load(); }

const char *stopSignalName(int signal) {
  switch (signal) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGUSR2:
    return "SIGUSR2";
  default:
    return "a signal";
  }
}

} // namespace loom::rt
