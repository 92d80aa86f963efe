//===- Watchdog.cpp - Noticing a collective that will not finish -*- C++
//-*-===//
//
// The thread wakes five times a second; a wait is identified by its start
// time, so a new collective restarts the liveness schedule.
//
//===----------------------------------------------------------------------===//

#include "Watchdog.h"
#include "ExitDeadline.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace loom::rt {

namespace {

/// Set by SIGUSR1, read by the watchdog threads.
std::atomic<bool> dumpRequested{false};

extern "C" void requestDump(int) { dumpRequested.store(true); }

int64_t nowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

CollectiveWatchdog::CollectiveWatchdog(Options options)
    : options(std::move(options)), timeoutSeconds(this->options.timeout),
      launcher(static_cast<int>(getppid())) {
  if (this->options.dumpOnSignal) {
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = requestDump;
    action.sa_flags = SA_RESTART; // blocked calls go on after it
    sigaction(SIGUSR1, &action, nullptr);
  }
  thread = std::thread([this] { run(); });
}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  thread.join();
}

void CollectiveWatchdog::begin(const char *what, int64_t count, DType dtype) {
  const int64_t seq = issued.load(std::memory_order_relaxed) + 1;
  const int64_t now = nowNanos();
  Slot &slot = ring[seq % (kRecentCollectives + 1)];
  slot.seq.store(0, std::memory_order_relaxed); // being rewritten
  std::atomic_thread_fence(std::memory_order_release);
  slot.what.store(what, std::memory_order_relaxed);
  slot.count.store(count, std::memory_order_relaxed);
  slot.dtype.store(dtype, std::memory_order_relaxed);
  slot.startNanos.store(now, std::memory_order_relaxed);
  slot.endNanos.store(0, std::memory_order_relaxed);
  slot.seq.store(seq, std::memory_order_release);
  issued.store(seq, std::memory_order_relaxed);
  startNanos.store(now, std::memory_order_release);
}

FlightRecord CollectiveWatchdog::record(const char *what, double waited,
                                        double stopped) const {
  FlightRecord r;
  r.rank = options.rank;
  r.ranks = static_cast<int>(options.peers.size());
  r.op = what ? what : "";
  r.seq = issued.load(std::memory_order_relaxed);
  const Slot &now = ring[r.seq % (kRecentCollectives + 1)];
  r.count = now.count.load(std::memory_order_relaxed);
  r.dtype = dtypeName(now.dtype.load(std::memory_order_relaxed));
  r.waitedS = waited;
  r.stoppedS = stopped;
  const int64_t at = nowNanos();
  // Outside a collective the last one begun has finished: it is recent.
  const int64_t last = what ? r.seq - 1 : r.seq;
  for (int64_t seq = std::max<int64_t>(1, last - kRecentCollectives + 1);
       seq <= last; ++seq) {
    const Slot &slot = ring[seq % (kRecentCollectives + 1)];
    if (slot.seq.load(std::memory_order_acquire) != seq)
      continue;
    PastCollective past;
    past.op = slot.what.load(std::memory_order_relaxed);
    past.seq = seq;
    past.count = slot.count.load(std::memory_order_relaxed);
    past.dtype = dtypeName(slot.dtype.load(std::memory_order_relaxed));
    int64_t start = slot.startNanos.load(std::memory_order_relaxed);
    int64_t end = slot.endNanos.load(std::memory_order_relaxed);
    past.startedAgoS = (at - start) * 1e-9;
    past.tookS = end >= start ? (end - start) * 1e-9 : 0;
    // Rewritten meanwhile (the wait ended and the rank went on): skip it.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != seq)
      continue;
    r.recent.push_back(past);
  }
  return r;
}

const char *CollectiveWatchdog::lastBegun() const {
  const int64_t seq = issued.load(std::memory_order_relaxed);
  return ring[seq % (kRecentCollectives + 1)].what.load(
      std::memory_order_relaxed);
}

void CollectiveWatchdog::dump(int64_t start, int64_t now) const {
  FlightRecord r = start ? record(lastBegun(), (now - start) * 1e-9, 0)
                         : record(nullptr, 0, 0);
  std::string text = describeRecords({r}, 6);
  std::fprintf(stderr, "%s: note: %s", toolName(), text.c_str());
  std::fflush(stderr);
}

void CollectiveWatchdog::end() {
  const int64_t seq = issued.load(std::memory_order_relaxed);
  ring[seq % (kRecentCollectives + 1)].endNanos.store(
      nowNanos(), std::memory_order_relaxed);
  startNanos.store(0, std::memory_order_release);
}

std::string CollectiveWatchdog::problem(const char *what, double waited,
                                        bool checkPeers, bool &stuck) const {
  stuck = false;
  const ProcessIdentity &self = options.peers[options.rank];
  if (checkPeers) {
    // Reparented: whoever started this rank is gone (and with it, usually,
    // the job's control).
    if (launcher > 1 && getppid() != launcher)
      return formatString("the launcher (pid %d) that started this rank has "
                          "exited while the rank waited in %s; stopping",
                          launcher, what);
    for (size_t peer = 0; peer < options.peers.size(); ++peer)
      if (static_cast<int>(peer) != options.rank &&
          sameProcessSpace(self, options.peers[peer]) &&
          processHasExited(options.peers[peer].pid))
        return formatString("rank %zu (pid %d) has died; this rank waited "
                            "%.0f s for it in %s. Stopping the job",
                            peer, static_cast<int>(options.peers[peer].pid),
                            waited, what);
  }
  double limit = timeoutSeconds;
  if (limit <= 0 || waited <= limit)
    return "";
  std::string remote;
  for (size_t peer = 0; peer < options.peers.size(); ++peer)
    if (static_cast<int>(peer) != options.rank &&
        !sameProcessSpace(self, options.peers[peer]))
      remote += (remote.empty() ? "" : ", ") + std::to_string(peer);
  std::string cause =
      remote.empty()
          ? "every rank is alive, so one is stuck (a hang, or ranks "
            "issuing different collectives)"
          : "a rank is stuck, or one of the ranks on other machines (" +
                remote + ") has died";
  stuck = true;
  return formatString("%s has waited %.0f s for the other ranks "
                      "(--collective-timeout %g); %s. Stopping the job",
                      describeCollective(record(what, waited, 0)).c_str(),
                      waited, limit, cause.c_str());
}

void CollectiveWatchdog::run() {
  int64_t watched = 0;  // start of the wait being watched
  double nextCheck = 0; // seconds into it of the next liveness check
  // A wakeup long after the last one means this process did not run (a
  // SIGSTOP, a debugger, a frozen machine): time the wait did not wait.
  int64_t lastTick = nowNanos();
  double stopped = 0;
  std::unique_lock<std::mutex> lock(mutex);
  while (!wake.wait_for(lock, std::chrono::milliseconds(200),
                        [this] { return stopping; })) {
    int64_t now = nowNanos();
    double gap = (now - lastTick) * 1e-9;
    lastTick = now;
    int64_t start = startNanos.load(std::memory_order_acquire);
    if (dumpRequested.exchange(false))
      dump(start, now);
    if (start == 0)
      continue;
    double waited = (now - start) * 1e-9;
    // The part of a long gap that fell in this wait (which may have begun
    // just before the process stopped, unseen until now).
    double notRun = gap > 1.0 ? std::min(gap, waited) : 0;
    if (start != watched) {
      watched = start;
      nextCheck = options.firstCheck;
      stopped = notRun;
    } else {
      stopped += notRun;
    }
    bool checkPeers = waited >= nextCheck;
    if (checkPeers)
      nextCheck = waited + options.checkEvery;
    bool stuck = false;
    const char *what = lastBegun();
    std::string reason = problem(what, waited, checkPeers, stuck);
    // The collective may have finished while we looked.
    if (reason.empty() || startNanos.load() != start)
      continue;
    lock.unlock();
    // A hang: say what this rank waits in for the launcher's report, and
    // give the peers that wait too the time to say it as well.
    const char *dir = std::getenv(kFlightDirEnv);
    // The record is a write, and stopping the job an MPI call: either may
    // block for good (a hung file system, a lost launcher daemon).
    if (options.exitDeadline)
      armExitDeadline(formatString("rank %d: ", options.rank),
                      "the collective watchdog (its flight record, then "
                      "stopping the job)",
                      1);
    if (stuck && dir && *dir &&
        writeFlightRecord(dir, record(what, waited, stopped)) &&
        options.reportGrace > 0)
      std::this_thread::sleep_for(
          std::chrono::duration<double>(options.reportGrace));
    options.fail(reason);
    return;
  }
}

} // namespace loom::rt
