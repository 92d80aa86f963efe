//===- WatchdogTest.cpp - The collective watchdog -------------*- C++ -*-===//
//
// The liveness probe of peer processes and the watchdog that notices a
// collective that will not finish: dead peers, timeouts, flight records
// (with the ring of the last collectives), a rank stopped in its wait, the
// exit deadline and the SIGUSR1 dump.
//
//===----------------------------------------------------------------------===//

#include "comm/Watchdog.h"
#include "TestUtil.h"
#include "comm/PeerLiveness.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/HangReport.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <memory>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::test;

TEST(PeerLiveness, SeesWhenAProcessHasExited) {
  ProcessIdentity self = currentProcessIdentity();
  EXPECT_EQ(self.pid, getpid());
  EXPECT_TRUE(sameProcessSpace(self, self));
  ProcessIdentity elsewhere = self;
  elsewhere.host[0] ^= 1;
  EXPECT_FALSE(sameProcessSpace(self, elsewhere));
  EXPECT_FALSE(processHasExited(getpid()));

  pid_t child = fork();
  if (child == 0)
    _exit(0);
  // Until reaped the child is a zombie, which counts as exited.
  for (int i = 0; i < 200 && !processHasExited(child); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(processHasExited(child));
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(processHasExited(child));
}

namespace {

/// A watchdog over `peers` (rank 0 is this process) that records why it
/// gave up instead of stopping the job.
struct WatchdogProbe {
  /// `exitDeadline`: off unless a test wants it, since `fail` returns here.
  WatchdogProbe(std::vector<ProcessIdentity> peers, double timeout,
                bool exitDeadline = false) {
    CollectiveWatchdog::Options options;
    options.peers = std::move(peers);
    options.timeout = timeout;
    options.firstCheck = options.checkEvery = 0.2;
    options.exitDeadline = exitDeadline;
    options.fail = [this](const std::string &reason) {
      std::lock_guard<std::mutex> lock(mutex);
      message = reason;
      done.notify_all();
    };
    watchdog = std::make_unique<CollectiveWatchdog>(std::move(options));
  }
  /// The reason given within `seconds`, or "".
  std::string reason(double seconds) {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait_for(lock, std::chrono::duration<double>(seconds),
                  [this] { return !message.empty(); });
    return message;
  }
  std::mutex mutex;
  std::condition_variable done;
  std::string message;
  std::unique_ptr<CollectiveWatchdog> watchdog;
};

/// A peer process that has exited: a child that ends at once (a zombie
/// until the destructor reaps it).
struct DeadPeer {
  DeadPeer() : pid(fork()) {
    if (pid == 0)
      _exit(0);
  }
  ~DeadPeer() { waitpid(pid, nullptr, 0); }
  ProcessIdentity identity() const {
    ProcessIdentity id = currentProcessIdentity();
    id.pid = pid;
    return id;
  }
  pid_t pid;
};

} // namespace

TEST(Watchdog, NamesAPeerThatDied) {
  DeadPeer dead;
  WatchdogProbe probe({currentProcessIdentity(), dead.identity()},
                      /*timeout=*/0);
  probe.watchdog->begin("all_reduce");
  std::string reason = probe.reason(10);
  probe.watchdog->end();
  EXPECT_NE(reason.find("rank 1 (pid " + std::to_string(dead.pid) +
                        ") has died; this rank waited"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("in all_reduce"), std::string::npos) << reason;
}

TEST(Watchdog, StopsAWaitLongerThanTheTimeout) {
  ProcessIdentity self = currentProcessIdentity();
  WatchdogProbe probe({self, self}, /*timeout=*/0.5);
  probe.watchdog->begin("barrier");
  std::string reason = probe.reason(10);
  probe.watchdog->end();
  EXPECT_NE(reason.find("barrier #1 has waited 1 s for the other ranks "
                        "(--collective-timeout 0.5); every rank is alive"),
            std::string::npos)
      << reason;
}

TEST(Watchdog, ATimeoutLeavesAFlightRecordForTheLauncher) {
  TempDir dir;
  ScopedEnv flight(kFlightDirEnv, dir.path().c_str());
  ProcessIdentity self = currentProcessIdentity();
  WatchdogProbe probe({self, self}, /*timeout=*/0.5);
  probe.watchdog->begin("all_reduce", 1, DType::F64);
  probe.watchdog->end();
  probe.watchdog->begin("broadcast", 1024, DType::F32); // the second
  std::string reason = probe.reason(10);
  probe.watchdog->end();
  EXPECT_NE(reason.find("broadcast #2 (1024 f32) has waited"),
            std::string::npos)
      << reason;
  std::vector<FlightRecord> records = readFlightRecords(dir.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].rank, 0);
  EXPECT_EQ(records[0].op, "broadcast");
  EXPECT_EQ(records[0].seq, 2);
  EXPECT_EQ(records[0].count, 1024);
  EXPECT_EQ(records[0].dtype, "f32");
  EXPECT_GE(records[0].waitedS, 0.5);
  // The collective before it, finished.
  ASSERT_EQ(records[0].recent.size(), 1u);
  EXPECT_EQ(describeCollective(records[0].recent[0]), "all_reduce #1 (1 f64)");
  EXPECT_GE(records[0].recent[0].startedAgoS, 0.5);
  EXPECT_GE(records[0].recent[0].tookS, 0.0);
  EXPECT_LT(records[0].recent[0].tookS, records[0].recent[0].startedAgoS);
}

TEST(Watchdog, TheFlightRecordKeepsTheLastCollectives) {
  TempDir dir;
  ScopedEnv flight(kFlightDirEnv, dir.path().c_str());
  ProcessIdentity self = currentProcessIdentity();
  WatchdogProbe probe({self, self}, /*timeout=*/0.5);
  const int64_t before = kRecentCollectives + 9;
  for (int64_t i = 1; i <= before; ++i) {
    probe.watchdog->begin(i % 2 ? "all_reduce" : "broadcast", i, DType::I32);
    probe.watchdog->end();
  }
  probe.watchdog->begin("barrier");
  probe.reason(10);
  probe.watchdog->end();
  std::vector<FlightRecord> records = readFlightRecords(dir.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(describeCollective(records[0]),
            "barrier #" + std::to_string(before + 1));
  // The last kRecentCollectives, oldest first, each as it was issued.
  ASSERT_EQ(records[0].recent.size(), size_t(kRecentCollectives));
  for (int i = 0; i < kRecentCollectives; ++i) {
    const PastCollective &p = records[0].recent[i];
    int64_t seq = before - kRecentCollectives + 1 + i;
    EXPECT_EQ(p.seq, seq);
    EXPECT_EQ(p.op, seq % 2 ? "all_reduce" : "broadcast");
    EXPECT_EQ(p.count, seq);
    EXPECT_EQ(p.dtype, "i32");
  }
}

TEST(Watchdog, ARankStoppedInTheWaitSaysSo) {
  // A child process watches a wait and is stopped (SIGSTOP) for 2 s in it;
  // when it runs again its record counts the time it did not run.
  TempDir dir;
  ScopedEnv flight(kFlightDirEnv, dir.path().c_str());
  pid_t child = fork();
  if (child == 0) {
    ProcessIdentity self = currentProcessIdentity();
    WatchdogProbe probe({self, self}, /*timeout=*/1.0);
    probe.watchdog->begin("all_reduce", 36, DType::F64);
    probe.reason(20);
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  kill(child, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(child, SIGCONT);
  int status = 0;
  waitpid(child, &status, 0);
  std::vector<FlightRecord> records = readFlightRecords(dir.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].op, "all_reduce");
  EXPECT_GE(records[0].stoppedS, 1.5);
  EXPECT_LT(records[0].stoppedS, records[0].waitedS + 0.5);
}

TEST(Watchdog, ADeadPeerLeavesNoFlightRecord) {
  TempDir dir;
  ScopedEnv flight(kFlightDirEnv, dir.path().c_str());
  DeadPeer dead;
  WatchdogProbe probe({currentProcessIdentity(), dead.identity()},
                      /*timeout=*/0);
  probe.watchdog->begin("all_reduce", 4, DType::F32);
  std::string reason = probe.reason(10);
  probe.watchdog->end();
  EXPECT_NE(reason.find("has died"), std::string::npos) << reason;
  EXPECT_TRUE(readFlightRecords(dir.path()).empty());
}

/// A watchdog that times out and writes its flight record where the write
/// blocks for good (a FIFO nobody reads, like a hung file system).
void watchdogStuckInItsRecord() {
  TempDir dir;
  ScopedEnv flight(kFlightDirEnv, dir.path().c_str());
  ScopedEnv deadline("LOOM_ABORT_DEADLINE_S", "0.5");
  if (mkfifo(dir.file("rank0.json.tmp").c_str(), 0600) != 0)
    _exit(99);
  ProcessIdentity self = currentProcessIdentity();
  WatchdogProbe probe({self, self}, /*timeout=*/0.3, /*exitDeadline=*/true);
  probe.watchdog->begin("all_reduce", 4, DType::F32);
  probe.reason(30);
  _exit(0); // the deadline did not end the process
}

TEST(WatchdogDeathTest, AWatchdogStuckInItsRecordStillEndsTheRank) {
  setToolName("loom-run");
  EXPECT_EXIT(watchdogStuckInItsRecord(), ::testing::ExitedWithCode(1),
              "loom-run: error: rank 0: the collective watchdog \\(its "
              "flight record, then stopping the job\\) did not end this "
              "rank within 0.5 s; exiting");
}

TEST(Watchdog, SaysWhatTheRankDoesOnSigusr1) {
  CollectiveWatchdog::Options options;
  ProcessIdentity self = currentProcessIdentity();
  options.peers = {self, self};
  options.rank = 1;
  options.timeout = 0;
  options.dumpOnSignal = true;
  options.fail = [](const std::string &) {};
  CollectiveWatchdog watchdog(std::move(options));
  setToolName("loom-run");
  auto dumped = [] {
    ::testing::internal::CaptureStderr();
    std::raise(SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return ::testing::internal::GetCapturedStderr();
  };
  watchdog.begin("broadcast", 3, DType::I64);
  watchdog.end();
  watchdog.begin("all_reduce", 8, DType::F32);
  EXPECT_EQ(dumped().rfind("loom-run: note: rank 1: waited 0 s in "
                           "all_reduce #2 (8 f32); before it broadcast #1 "
                           "(3 i64) in ",
                           0),
            0u);
  watchdog.end();
  EXPECT_EQ(dumped().rfind("loom-run: note: rank 1: not in a collective; "
                           "last all_reduce #2 (8 f32) in ",
                           0),
            0u);
  // The process goes on, and a signal it was not sent prints nothing.
  ::testing::internal::CaptureStderr();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Watchdog, LeavesShortAndUnlimitedWaitsAlone) {
  ProcessIdentity self = currentProcessIdentity();
  WatchdogProbe probe({self, self}, /*timeout=*/0.5);
  for (int i = 0; i < 20; ++i) { // many short collectives
    probe.watchdog->begin("all_reduce");
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    probe.watchdog->end();
  }
  probe.watchdog->setTimeout(0);
  probe.watchdog->begin("barrier");
  EXPECT_EQ(probe.reason(1.2), "");
  probe.watchdog->end();
}
