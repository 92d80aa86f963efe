//===- Watchdog.h - Noticing a collective that will not finish --*- C++ -*-===//
//
// Internal to the runtime. A rank blocked in a collective cannot tell a slow
// peer from a dead or stuck one, and a blocking MPI call offers no way out.
// The watchdog is a thread that watches the collective the rank is in: after
// 3 s it checks every second that the peer processes on this machine
// still exist and that the launcher that started the rank is still there,
// and it gives up when one wait has exceeded the collective timeout. Giving
// up means calling `fail` with a message naming the cause, which stops the
// job. Nothing of this runs on the fast path except two atomic stores per
// collective.
//
// Why a watchdog and not only mpirun: Open MPI's mpirun notices a rank that
// dies and kills the others within about a second (measured), but other
// launchers (srun without --kill-on-bad-exit, mpirun --enable-recovery) leave
// the survivors blocked forever, and no launcher notices a rank that is alive
// but stuck (a deadlock, or ranks issuing different collectives). The
// timeout is per collective wait, not per step: under data parallelism ranks
// do the same work, so a wait lasts about as long as the ranks' skew, however
// long the step. The one long wait by design, ranks waiting while rank 0
// writes a checkpoint, runs with the timeout lifted (Trainer.cpp); dead peers
// are still noticed then.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMM_WATCHDOG_H
#define LOOM_RUNTIME_SRC_COMM_WATCHDOG_H

#include "PeerLiveness.h"
#include "loom/runtime/DType.h"
#include "loom/runtime/FlightRecord.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loom::rt {

class CollectiveWatchdog {
public:
  struct Options {
    int rank = 0;
    /// Identity of every rank, this one included, indexed by rank.
    std::vector<ProcessIdentity> peers;
    /// Seconds; 0: no limit.
    double timeout = 60;
    /// Called on the watchdog thread with the reason; stops the job and
    /// does not return (tests may return, which ends the watch).
    std::function<void(const std::string &)> fail;
    /// Seconds in a collective before the first liveness check (late
    /// enough that a launcher which stops the job on a death, like mpirun,
    /// usually reports it first), and between checks.
    double firstCheck = 3.0;
    double checkEvery = 1.0;
    /// On a timeout, with LOOM_RUN_FLIGHT_DIR set: seconds to wait after
    /// writing this rank's flight record (FlightRecord.h) before `fail`, so
    /// the peers that wait too can write theirs before the job stops.
    double reportGrace = 2.0;
    /// Before the record and `fail`: end the process if they do not within
    /// a deadline (ExitDeadline.h). Off in tests whose `fail` returns.
    bool exitDeadline = true;
    /// On SIGUSR1 print what the rank waits in, if anything, and its last
    /// collectives to stderr (`kill -USR1` a rank, or the launcher, which
    /// passes it on); the job goes on. Installs a process-wide handler.
    bool dumpOnSignal = false;
  };

  explicit CollectiveWatchdog(Options options);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog &) = delete;
  CollectiveWatchdog &operator=(const CollectiveWatchdog &) = delete;

  void setTimeout(double seconds) { timeoutSeconds = seconds; }
  double timeout() const { return timeoutSeconds; }

  /// The calling rank enters/leaves collective `what` (a string literal)
  /// of `count` elements of `dtype` (count 0: a barrier). Collectives are
  /// numbered from 1 in the order they begin; the last kRecentCollectives
  /// stay in a ring for the flight record.
  void begin(const char *what, int64_t count = 0, DType dtype = DType::F32);
  void end();

private:
  void run();
  /// The reason to give up on the current wait, or "". `stuck` tells a
  /// timeout (no peer known to be gone) from a dead peer or launcher.
  std::string problem(const char *what, double waited, bool checkPeers,
                      bool &stuck) const;
  /// The collective being waited in, as flight records describe it;
  /// `stopped`: seconds of the wait this process did not run. With `what`
  /// null, none is: the record holds the last collectives only.
  FlightRecord record(const char *what, double waited, double stopped) const;
  /// The collective begun last (the one waited in while startNanos != 0).
  const char *lastBegun() const;
  /// SIGUSR1 (Options::dumpOnSignal): the record, to stderr.
  void dump(int64_t start, int64_t now) const;

  /// One collective in the ring. Written only by the thread in the
  /// collective, read by the watchdog (atomics: it may read while the
  /// rank starts the next one, and then sees it by its number).
  struct Slot {
    std::atomic<int64_t> seq{0}, count{0}, startNanos{0}, endNanos{0};
    std::atomic<const char *> what{nullptr};
    std::atomic<DType> dtype{DType::F32};
  };

  Options options;
  std::atomic<double> timeoutSeconds;
  std::atomic<int64_t> startNanos{0};
  std::atomic<int64_t> issued{0};
  /// Collective n in slot n % (kRecentCollectives + 1): the current one and
  /// the kRecentCollectives before it.
  Slot ring[kRecentCollectives + 1];
  int launcher = 0;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread thread;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMM_WATCHDOG_H
