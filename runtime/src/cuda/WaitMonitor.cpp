//===- WaitMonitor.cpp - Ending a rank whose GPU stops answering ---------===//

#include "WaitMonitor.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Flags.h"

#include <algorithm>
#include <cstdlib>

namespace loom::rt::cuda {

std::optional<double> gpuWaitLimitSetting() {
  const char *text = std::getenv("LOOM_GPU_WAIT_LIMIT_S");
  if (!text)
    return std::nullopt;
  return parsePositiveFlag("LOOM_GPU_WAIT_LIMIT_S", text, /*allowZero=*/true);
}

double gpuWaitLimit(std::optional<double> setting, const Communicator &host) {
  const double collective = host.collectiveTimeout();
  if (!setting) {
    if (host.size() > 1 && collective <= 0)
      return 0;
    return std::max(kDefaultGpuWaitLimit, collective + kGpuWaitSlack);
  }
  if (*setting > 0 && collective > 0 && *setting <= collective)
    fail("LOOM_GPU_WAIT_LIMIT_S=%g would end a rank waiting for its GPU "
         "before --collective-timeout (%g s) could name the collective it "
         "waits for; set it above %g, or to 0 for no limit",
         *setting, collective, collective);
  return *setting;
}

WaitMonitor::WaitMonitor(Options options)
    : options(std::move(options)), limitSeconds(this->options.limit) {
  if (!this->options.fail)
    this->options.fail = [](const std::string &reason) { abortJob(reason); };
  thread = std::thread([this] { run(); });
}

WaitMonitor::~WaitMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  thread.join();
}

WaitMonitor::Wait::Wait(WaitMonitor &monitor, const char *what)
    : monitor(monitor) {
  std::lock_guard<std::mutex> lock(monitor.mutex);
  id = monitor.nextId++;
  monitor.waiting.emplace(id, Waiting{what, Clock::now()});
}

WaitMonitor::Wait::~Wait() {
  std::lock_guard<std::mutex> lock(monitor.mutex);
  monitor.waiting.erase(id);
}

void WaitMonitor::run() {
  const auto period = std::chrono::duration<double>(options.checkEvery);
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    if (wake.wait_for(lock, period, [this] { return stopping; }))
      return;
    const double limit = limitSeconds;
    if (limit <= 0 || waiting.empty())
      continue;
    const Waiting &oldest = waiting.begin()->second;
    const double waited = secondsSince(oldest.since);
    if (waited <= limit)
      continue;
    std::string reason = formatString(
        "waiting for %s has not ended after %.1f s (LOOM_GPU_WAIT_LIMIT_S: "
        "%g s): a kernel that does not finish, or a GPU or driver that has "
        "stopped responding (nvidia-smi says more). Stopping the job",
        oldest.what, waited, limit);
    lock.unlock();
    options.fail(reason);
    return;
  }
}

} // namespace loom::rt::cuda
