//===- WaitMonitor.h - Ending a rank whose GPU stops answering --*- C++ -*-===//
//
// Internal to libLoomCuda.so. The host waits for its GPU in driver calls
// (cuStreamSynchronize, cuEventSynchronize) or by polling a stream. The
// collective watchdogs cover waits for other ranks (--collective-timeout,
// CollectiveTimer::overdue), but they run inside those waits: a kernel that
// never ends on a rank with nothing to poll, or a driver call that never
// returns, would hang the rank for good and, alone on its GPU, the job
// (docs/reliability.md, scenario 6). So every wait for the GPU is
// registered with a monitor, a thread of its own, which stops the job when
// one has lasted longer than a limit (LOOM_GPU_WAIT_LIMIT_S), as PyTorch's
// heartbeat monitor does for its NCCL watchdog.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_WAITMONITOR_H
#define LOOM_RUNTIME_SRC_CUDA_WAITMONITOR_H

#include "support/Clock.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace loom::rt {
class Communicator;
} // namespace loom::rt

namespace loom::rt::cuda {

/// No wait for a GPU should take this long: a training step's kernels take
/// seconds at most (PyTorch's heartbeat timeout is 480 s).
constexpr double kDefaultGpuWaitLimit = 600;
/// How much longer than --collective-timeout a GPU wait may last, so that
/// a collective's own timeout, whose message names it, comes first.
constexpr double kGpuWaitSlack = 60;

/// LOOM_GPU_WAIT_LIMIT_S in seconds (0: no limit), or nullopt when unset.
/// Throws UsageError when it is not a number >= 0.
std::optional<double> gpuWaitLimitSetting();

/// The limit for a job whose ranks talk over `host`: the setting, else
/// kDefaultGpuWaitLimit or --collective-timeout + kGpuWaitSlack, whichever
/// is longer, and none for a multi-rank job told to wait for its
/// collectives forever (--collective-timeout 0). Throws Error when the
/// setting would end a rank before its collective timeout could.
double gpuWaitLimit(std::optional<double> setting, const Communicator &host);

class WaitMonitor {
public:
  struct Options {
    /// Seconds; 0: none.
    double limit = kDefaultGpuWaitLimit;
    /// Seconds between looks at the waits.
    double checkEvery = 1.0;
    /// Called on the monitor's thread with the reason; stops the job and
    /// does not return (tests may return, which ends the watch). Default:
    /// abortJob.
    std::function<void(const std::string &)> fail;
  };

  explicit WaitMonitor(Options options);
  ~WaitMonitor();
  WaitMonitor(const WaitMonitor &) = delete;
  WaitMonitor &operator=(const WaitMonitor &) = delete;

  /// Seconds; 0: none.
  void setLimit(double seconds) { limitSeconds = seconds; }

  /// The calling thread waits for `what` (a string literal: "the compute
  /// stream") while the Wait lives. Several threads may wait at once.
  class Wait {
  public:
    Wait(WaitMonitor &monitor, const char *what);
    ~Wait();
    Wait(const Wait &) = delete;
    Wait &operator=(const Wait &) = delete;

  private:
    WaitMonitor &monitor;
    uint64_t id;
  };

private:
  void run();

  struct Waiting {
    const char *what;
    Clock::time_point since;
  };

  Options options;
  std::atomic<double> limitSeconds;
  std::mutex mutex;
  std::condition_variable wake;
  std::map<uint64_t, Waiting> waiting; // by id, the oldest first
  uint64_t nextId = 0;
  bool stopping = false;
  std::thread thread;
};

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_WAITMONITOR_H
