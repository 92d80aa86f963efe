//===- CommTest.cpp - Tests of the one-process communication paths -*- C++
//-*-===//
//
// What needs no MPI: the loom_rt_* collectives with the default (local)
// communicator, the current-communicator switch and collective timing,
// failure agreement, launcher detection, the mesh/rank-count check, the
// liveness probe of peer processes, the collective watchdog and the check
// that ranks issue the same collectives (--check-collectives).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "comm/CheckedCommunicator.h"
#include "comm/CommQueue.h"
#include "comm/PeerLiveness.h"
#include "comm/Watchdog.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/HangReport.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/World.h"
#include "loom/runtime/abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace loom::rt;
using namespace loom::rt::test;

namespace {

/// Records the collectives it is asked for; one of `ranks` ranks.
class RecordingCommunicator final : public Communicator {
public:
  explicit RecordingCommunicator(int ranks, int me = 0)
      : ranks(ranks), me(me) {}
  int rank() const override { return me; }
  int size() const override { return ranks; }
  const char *backend() const override { return "recording"; }
  void allReduce(void *buf, int64_t count, DType dtype, ReduceOp op) override {
    calls.push_back("all_reduce " + std::to_string(count) + " " +
                    dtypeName(dtype) + " " + reduceOpName(op));
    if (dtype == DType::I64 && !ownVote) // the agreement vote
      *static_cast<int64_t *>(buf) = vote;
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
  }
  void reduceScatter(const void *, void *, int64_t, DType, ReduceOp) override {}
  void allGather(const void *, void *, int64_t, DType) override {}
  void broadcast(void *buf, int64_t count, DType dtype, int root) override {
    calls.push_back("broadcast " + std::to_string(count) + " from " +
                    std::to_string(root));
    // The root records what it sends; another rank replays a root's record.
    char *bytes = static_cast<char *>(buf);
    size_t size = count * dtypeSize(dtype);
    if (me == root)
      sent.emplace_back(bytes, bytes + size);
    else if (fromRoot && received < fromRoot->size())
      std::memcpy(bytes, (*fromRoot)[received++].data(), size);
  }
  void barrier() override {}
  void abort(int) override { std::abort(); }

  int ranks, me;
  int64_t vote = 0;
  /// All-reduces return this rank's own vote (a max over it alone).
  bool ownVote = false;
  std::vector<std::vector<char>> sent;
  const std::vector<std::vector<char>> *fromRoot = nullptr;
  size_t received = 0;
  int delayMs = 0;
  std::vector<std::string> calls;
};

} // namespace

TEST(Collectives, LocalWorldIsIdentityOrCopy) {
  ASSERT_STREQ(currentCommunicator().backend(), "local");
  float f[3] = {1.5f, -2, 3};
  loom_rt_all_reduce(0, f, 3, LOOM_F32, LOOM_MEAN);
  EXPECT_EQ(f[1], -2);
  int64_t i[2] = {7, -9};
  loom_rt_all_reduce(0, i, 2, LOOM_I64, LOOM_MAX);
  EXPECT_EQ(i[1], -9);
  double send[4] = {1, 2, 3, 4}, recv[4] = {0, 0, 0, 0};
  loom_rt_reduce_scatter(0, send, recv, 4, LOOM_F64, LOOM_SUM);
  EXPECT_EQ(recv[3], 4);
  int32_t part[2] = {5, 6}, all[2] = {0, 0};
  loom_rt_all_gather(0, part, all, 2, LOOM_I32);
  EXPECT_EQ(all[0], 5);
  EXPECT_EQ(all[1], 6);
  loom_rt_broadcast(0, all, 2, LOOM_I32, 0);
  EXPECT_EQ(all[1], 6);
}

TEST(Collectives, GoToTheCurrentCommunicatorAndAreTimed) {
  RecordingCommunicator comm(4);
  comm.delayMs = 20;
  double before = collectiveSeconds();
  {
    ScopedCurrentCommunicator current(comm);
    EXPECT_EQ(&currentCommunicator(), &comm);
    float grad[5] = {0};
    loom_rt_all_reduce(0, grad, 5, LOOM_F32, LOOM_MEAN);
    loom_rt_broadcast(0, grad, 5, LOOM_F32, 3);
  }
  EXPECT_STREQ(currentCommunicator().backend(), "local");
  EXPECT_EQ(comm.calls, (std::vector<std::string>{"all_reduce 5 f32 mean",
                                                  "broadcast 5 from 3"}));
  EXPECT_GE(collectiveSeconds() - before, 0.015);
}

TEST(Collectives, StartAndWaitCompleteInIssueOrder) {
  RecordingCommunicator comm(2);
  ScopedCurrentCommunicator current(comm);
  float grad[3] = {0};
  int64_t first = loom_rt_all_reduce_start(0, grad, 3, LOOM_F32, LOOM_MEAN);
  int64_t second = loom_rt_broadcast_start(0, grad, 3, LOOM_F32, 1);
  EXPECT_GT(second, first);
  loom_rt_wait(second);
  loom_rt_wait(first);
  EXPECT_EQ(comm.calls, (std::vector<std::string>{"all_reduce 3 f32 mean",
                                                  "broadcast 3 from 1"}));
  // The recording communicator's abort() is std::abort.
  EXPECT_EXIT(loom_rt_wait(second + 100), ::testing::KilledBySignal(SIGABRT),
              "rank 0: loom_rt_wait: [0-9]+ is not a handle");
}

TEST(Collectives, ASynchronousCollectiveRunsOnTheCallerOnlyOnceItWaited) {
  // Whether a synchronous collective runs on the caller (MPI: blocking) or
  // on the communication thread (non-blocking) must not depend on timing,
  // or ranks whose queues drain at different moments mix the two modes,
  // which MPI never matches: it depends on what the caller waited for.
  struct Threads final : Communicator {
    int rank() const override { return 0; }
    int size() const override { return 2; }
    const char *backend() const override { return "threads"; }
    void allReduce(void *, int64_t, DType, ReduceOp) override {
      onCaller.push_back(std::this_thread::get_id() == caller);
    }
    void reduceScatter(const void *, void *, int64_t, DType,
                       ReduceOp) override {}
    void allGather(const void *, void *, int64_t, DType) override {}
    void broadcast(void *, int64_t, DType, int) override {}
    void barrier() override {}
    [[noreturn]] void abort(int) override { std::abort(); }
    std::thread::id caller = std::this_thread::get_id();
    std::vector<bool> onCaller;
  } comm;
  ScopedCurrentCommunicator current(comm);
  float x[2] = {0};
  loom_rt_all_reduce(0, x, 2, LOOM_F32, LOOM_SUM); // nothing queued
  int64_t handle = loom_rt_all_reduce_start(0, x, 2, LOOM_F32, LOOM_SUM);
  // Long finished, but not waited for: the next one is queued behind it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(collectiveFinished(handle));
  loom_rt_all_reduce(0, x, 2, LOOM_F32, LOOM_SUM);
  loom_rt_wait(handle);
  loom_rt_all_reduce(0, x, 2, LOOM_F32, LOOM_SUM); // all waited for
  EXPECT_EQ(comm.onCaller, (std::vector<bool>{true, false, false, true}));
}

TEST(CommQueue, RunsWorkInIssueOrderOnOneOtherThread) {
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::atomic<int> running{0};
  bool overlapped = false;
  {
    CommQueue queue;
    std::vector<int64_t> handles;
    for (int i = 0; i < 20; ++i)
      handles.push_back(queue.enqueue([&, i] {
        if (running.fetch_add(1) != 0)
          overlapped = true;
        // Later items are quicker, so only the FIFO keeps them in order.
        std::this_thread::sleep_for(std::chrono::microseconds(400 - 20 * i));
        order.push_back(i);
        threads.push_back(std::this_thread::get_id());
        running.fetch_sub(1);
      }));
    for (size_t i = 0; i < handles.size(); ++i)
      EXPECT_EQ(handles[i], static_cast<int64_t>(i + 1));
    queue.waitAll();
    EXPECT_EQ(queue.completed(), 20);
  }
  std::vector<int> expected(20);
  for (int i = 0; i < 20; ++i)
    expected[i] = i;
  EXPECT_EQ(order, expected);
  EXPECT_FALSE(overlapped);
  for (std::thread::id id : threads) {
    EXPECT_EQ(id, threads[0]);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(CommQueue, StartReturnsAtOnceAndWaitOnlyAfterCompletion) {
  CommQueue queue;
  std::mutex gate;
  std::unique_lock<std::mutex> held(gate);
  std::atomic<bool> firstDone{false}, secondDone{false};
  int64_t first = queue.enqueue([&] {
    std::lock_guard<std::mutex> lock(gate); // blocks until released
    firstDone = true;
  });
  int64_t second = queue.enqueue([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    secondDone = true;
  });
  // Both were queued while the first cannot finish.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(queue.completed(), 0);
  EXPECT_FALSE(firstDone);
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    queue.wait(first);
    EXPECT_TRUE(firstDone);
    waited = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(waited); // still blocked: the first has not run
  held.unlock();
  waiter.join();
  EXPECT_TRUE(waited);
  queue.wait(second);
  EXPECT_TRUE(secondDone);
  EXPECT_EQ(queue.completed(), 2);
}

TEST(Collectives, StartsOverlapTheCallerAndWaitsBlockUntilDone) {
  RecordingCommunicator comm(2);
  comm.delayMs = 40;
  double blockedBefore = blockedCollectiveSeconds();
  ScopedCurrentCommunicator current(comm);
  float grad[3] = {0};
  auto start = std::chrono::steady_clock::now();
  int64_t first = loom_rt_all_reduce_start(0, grad, 3, LOOM_F32, LOOM_SUM);
  int64_t second = loom_rt_all_reduce_start(0, grad, 2, LOOM_F32, LOOM_MAX);
  // The starts did not run the two (40 ms) collectives on this thread.
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(80));
  loom_rt_wait(first);
  loom_rt_wait(second);
  EXPECT_EQ(comm.calls, (std::vector<std::string>{"all_reduce 3 f32 sum",
                                                  "all_reduce 2 f32 max"}));
  EXPECT_GE(blockedCollectiveSeconds() - blockedBefore, 0.05);
  // A synchronous collective keeps the single issue order.
  loom_rt_all_reduce_start(0, grad, 1, LOOM_F32, LOOM_SUM);
  loom_rt_broadcast(0, grad, 1, LOOM_F32, 1);
  EXPECT_EQ(comm.calls.back(), "broadcast 1 from 1");
  EXPECT_EQ(comm.calls.size(), 4u);
}

/// Two ranks' slices as rank `me` would see them with identical peers,
/// taking `delayMs` per collective like a slow link: reduce-scatter sums
/// its slice over both (identical) ranks, all-gather repeats the input.
class SlowCopyingCommunicator final : public Communicator {
public:
  int rank() const override { return 1; }
  int size() const override { return 2; }
  const char *backend() const override { return "slow-copying"; }
  void allReduce(void *, int64_t, DType, ReduceOp) override {}
  void reduceScatter(const void *send, void *recv, int64_t count, DType,
                     ReduceOp) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    for (int64_t i = 0; i < count; ++i)
      static_cast<float *>(recv)[i] =
          2 * static_cast<const float *>(send)[count + i];
  }
  void allGather(const void *send, void *recv, int64_t count, DType) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t i = 0; i < count; ++i)
        static_cast<float *>(recv)[r * count + i] =
            static_cast<const float *>(send)[i];
  }
  void broadcast(void *, int64_t, DType, int) override {}
  void barrier() override {}
  void abort(int) override { std::abort(); }
  int delayMs = 30;
};

TEST(Collectives, ResizingStartsReadACopyOfTheirOperand) {
  SlowCopyingCommunicator comm;
  ScopedCurrentCommunicator current(comm);
  float send[4] = {1, 2, 3, 4}, scattered[2] = {0, 0};
  int64_t h =
      loom_rt_reduce_scatter_start(0, send, scattered, 2, LOOM_F32, LOOM_SUM);
  // Compiled code may reuse the operand's buffer right after the start.
  std::fill(send, send + 4, -1.0f);
  loom_rt_wait(h);
  EXPECT_EQ(scattered[0], 6.0f);
  EXPECT_EQ(scattered[1], 8.0f);

  float part[2] = {5, 7}, gathered[4] = {0, 0, 0, 0};
  h = loom_rt_all_gather_start(0, part, gathered, 2, LOOM_F32);
  part[0] = part[1] = -1;
  loom_rt_wait(h);
  EXPECT_EQ(std::vector<float>(gathered, gathered + 4),
            (std::vector<float>{5, 7, 5, 7}));
}

TEST(Collectives, BadArgumentsStopTheJobWithAMessage) {
  // Compiled code cannot catch exceptions, so these exit the process.
  setToolName("loom-run");
  float x[1] = {0};
  EXPECT_EXIT(loom_rt_all_reduce(1, x, 1, LOOM_F32, LOOM_SUM),
              ::testing::ExitedWithCode(1),
              "loom-run: error: loom_rt_all_reduce: group 1 is not defined");
  EXPECT_EXIT(loom_rt_all_reduce(0, x, 1, 7, LOOM_SUM),
              ::testing::ExitedWithCode(1), "unknown dtype 7");
  EXPECT_EXIT(loom_rt_all_reduce(0, x, 1, LOOM_F32, 9),
              ::testing::ExitedWithCode(1), "unknown reduce op 9");
  EXPECT_EXIT(loom_rt_broadcast(0, x, 1, LOOM_F32, 1),
              ::testing::ExitedWithCode(1), "root 1 is not a rank of the job");
  EXPECT_EXIT(loom_rt_all_gather(0, x, x, -1, LOOM_F32),
              ::testing::ExitedWithCode(1), "negative count -1");
}

namespace {

/// A two-rank communicator whose abort never returns nor ends the process,
/// like an MPI_Abort waiting for a launcher daemon that is gone.
class StuckAbort final : public Communicator {
public:
  int rank() const override { return 1; }
  int size() const override { return 2; }
  const char *backend() const override { return "stuck"; }
  void allReduce(void *, int64_t, DType, ReduceOp) override {}
  void reduceScatter(const void *, void *, int64_t, DType, ReduceOp) override {}
  void allGather(const void *, void *, int64_t, DType) override {}
  void broadcast(void *, int64_t, DType, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(int) override {
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  }
};

} // namespace

TEST(Collectives, AStuckAbortStillEndsTheRank) {
  setToolName("loom-run");
  ScopedEnv deadline("LOOM_ABORT_DEADLINE_S", "0.5");
  StuckAbort comm;
  EXPECT_EXIT(abortJob("the watchdog gave up", &comm),
              ::testing::ExitedWithCode(1),
              "loom-run: error: rank 1: the watchdog gave up\n"
              "loom-run: error: rank 1: stopping the job \\(the "
              "communication library's abort\\) did not end this rank "
              "within 0.5 s; exiting");
}

TEST(Agreement, LowestFailingRankReportsTheOthersStaySilent) {
  LocalCommunicator local;
  EXPECT_NO_THROW(agreeOnFailure(local, ""));
  EXPECT_THROW(agreeOnFailure(local, "disk full"), JobError);

  RecordingCommunicator rank1(3, 1), rank2(3, 2);
  rank1.vote = rank2.vote = 3 - 1; // rank 1 is the lowest failing rank
  try {
    agreeOnFailure(rank1, "no such file");
    FAIL() << "no throw";
  } catch (const JobError &e) {
    EXPECT_STREQ(e.what(), "rank 1: no such file");
  }
  EXPECT_THROW(agreeOnFailure(rank2, "no such file"), SilentError);
  EXPECT_THROW(agreeOnFailure(rank2, ""), SilentError);
}

TEST(Agreement, RanksCompareTheirSettingsWithRankZeros) {
  // Values with separators, digits and nothing at all survive the exchange.
  std::vector<JobSetting> settings = {{"--data", "text:/a:b.txt"},
                                      {"--steps", "12"},
                                      {"--eval-data", ""},
                                      {"--seed", "3:12"}};
  RecordingCommunicator root(2, 0);
  root.ownVote = true;
  EXPECT_NO_THROW(agreeOnSettings(root, settings));
  EXPECT_EQ(root.calls.size(), 3u); // size, bytes, vote

  RecordingCommunicator same(2, 1);
  same.ownVote = true;
  same.fromRoot = &root.sent;
  EXPECT_NO_THROW(agreeOnSettings(same, settings));

  std::vector<JobSetting> other = settings;
  other[2].value = "x";
  other[3].value = "4";
  RecordingCommunicator differs(2, 1);
  differs.ownVote = true;
  differs.fromRoot = &root.sent;
  try {
    agreeOnSettings(differs, other);
    FAIL() << "no throw";
  } catch (const JobError &e) {
    // The first difference, with both values.
    EXPECT_STREQ(e.what(),
                 "rank 1: --eval-data differs from rank 0's: x "
                 "here, (empty) on rank 0; every rank of a job must run "
                 "the same artifact with the same options and "
                 "checkpoint");
  }

  // One rank: nothing to compare, nothing exchanged.
  RecordingCommunicator alone(1, 0);
  EXPECT_NO_THROW(agreeOnSettings(alone, settings));
  EXPECT_TRUE(alone.calls.empty());
}

TEST(World, DetectsLaunchersFromTheEnvironment) {
  ScopedEnv a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMI_SIZE", nullptr),
      c("PMIX_RANK", nullptr);
  EXPECT_FALSE(detectJob().underLauncher());
  {
    ScopedEnv pmix("PMIX_RANK", "3");
    EXPECT_EQ(detectJob().launcherVar, "PMIX_RANK");
    EXPECT_EQ(detectJob().announcedSize, 0);
    ScopedEnv ompi("OMPI_COMM_WORLD_SIZE", "4");
    EXPECT_EQ(detectJob().launcherVar, "OMPI_COMM_WORLD_SIZE");
    EXPECT_EQ(detectJob().announcedSize, 4);
  }
  ScopedEnv pmi("PMI_SIZE", "2");
  EXPECT_EQ(detectJob().announcedSize, 2);
}

TEST(World, WithoutALauncherTheWorldIsLocal) {
  std::unique_ptr<Communicator> world = connectWorld(JobInfo(), WorldOptions());
  EXPECT_STREQ(world->backend(), "local");
  EXPECT_EQ(world->size(), 1);
}

TEST(World, RankCountMustMatchTheMesh) {
  MeshSpec none, dp2{{"dp"}, {2}}, grid{{"dp", "tp"}, {2, 2}};
  EXPECT_NO_THROW(checkJobMatchesMesh(none, 1, false));
  EXPECT_NO_THROW(checkJobMatchesMesh(dp2, 2, true));
  EXPECT_TRUE(throwsError([&] { checkJobMatchesMesh(dp2, 3, false); },
                          {"the artifact was compiled for 2 ranks (mesh dp=2) "
                           "but the job has 3; recompile with loomc --dp=3 or "
                           "run with --ranks 2"}));
  EXPECT_TRUE(throwsError([&] { checkJobMatchesMesh(dp2, 3, true); },
                          {"recompile with loomc --dp=3 or start 2 ranks"}));
  EXPECT_TRUE(throwsError([&] { checkJobMatchesMesh(dp2, 1, false); },
                          {"but the job has 1; recompile without --dp or run "
                           "with --ranks 2"}));
  EXPECT_TRUE(throwsError([&] { checkJobMatchesMesh(none, 2, false); },
                          {"compiled for 1 rank (no mesh) but the job has 2; "
                           "recompile with loomc --dp=2 or run without "
                           "--ranks"}));
  EXPECT_TRUE(throwsError(
      [&] { checkJobMatchesMesh(grid, 2, false); },
      {"4 ranks (mesh dp=2,tp=2)", "recompile for 2 ranks", "--ranks 4"}));
}

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

namespace {

/// The inner communicator of a CheckedCommunicator under test: rank `me` of
/// `ranks`, whose peers described `peers` in the check (or, unset, what
/// this rank described), recording what reaches it.
class ScriptedPeers final : public Communicator {
public:
  ScriptedPeers(int ranks, int me, std::vector<std::string> *calls)
      : ranks(ranks), me(me), calls(calls) {}
  int rank() const override { return me; }
  int size() const override { return ranks; }
  const char *backend() const override { return "scripted"; }
  void allReduce(void *, int64_t count, DType dtype, ReduceOp op) override {
    calls->push_back("all_reduce " + std::to_string(count) + " " +
                     dtypeName(dtype) + " " + reduceOpName(op));
  }
  void reduceScatter(const void *, void *, int64_t count, DType,
                     ReduceOp) override {
    calls->push_back("reduce_scatter " + std::to_string(count));
  }
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override {
    calls->push_back("all_gather " + std::to_string(count) + " " +
                     dtypeName(dtype));
    auto *all = static_cast<CollectiveCall *>(recv);
    for (int rank = 0; rank < ranks; ++rank)
      all[rank] = *static_cast<const CollectiveCall *>(send);
    if (peer) // every other rank issued `peer` instead
      for (int rank = 0; rank < ranks; ++rank)
        if (rank != me) {
          all[rank] = *peer;
          all[rank].seq = all[me].seq;
        }
  }
  void broadcast(void *, int64_t count, DType, int root) override {
    calls->push_back("broadcast " + std::to_string(count) + " from " +
                     std::to_string(root));
  }
  void barrier() override { calls->push_back("barrier"); }
  [[noreturn]] void abort(int status) override { _exit(40 + status); }

  int ranks, me;
  std::vector<std::string> *calls;
  std::optional<CollectiveCall> peer;
};

CollectiveCall call(int64_t seq, int64_t kind, int64_t count = 0,
                    DType dtype = DType::F32, int64_t op = -1,
                    int64_t root = -1) {
  return {seq, kind, count, static_cast<int64_t>(dtype), op, root};
}

} // namespace

TEST(CheckedCommunicator, DescribesWhatDiffersBetweenRanks) {
  CollectiveCall sum = call(15, CollectiveCall::AllReduce, 36, DType::F64,
                            static_cast<int64_t>(ReduceOp::Sum));
  CollectiveCall barrier = {15, CollectiveCall::Barrier, 0, -1, -1, -1};
  EXPECT_EQ(describeCallMismatch({sum, sum, sum}), "");
  EXPECT_EQ(describeCallMismatch({sum, barrier}),
            "the ranks issued different collectives as their #15: rank 0 "
            "all_reduce (36 f64, sum); rank 1 barrier. Every rank must issue "
            "the same collectives in the same order; stopping the job "
            "(--check-collectives)");
  CollectiveCall twice = sum;
  twice.count = 72;
  EXPECT_EQ(
      describeCallMismatch({sum, twice, sum})
          .rfind("the ranks issued different collectives as their #15: ranks "
                 "0, 2 all_reduce (36 f64, sum); rank 1 all_reduce (72 f64, "
                 "sum). Every rank",
                 0),
      0u);
  EXPECT_EQ(
      describeCall(call(3, CollectiveCall::Broadcast, 4, DType::I64, -1, 0)),
      "broadcast (4 i64 from rank 0)");
  EXPECT_EQ(describeCall(call(3, CollectiveCall::AllGather, 8)),
            "all_gather (8 f32)");
  EXPECT_EQ(describeCall({3, 99, 1, 77, -1, -1}),
            "an unknown collective (kind 99)");
  EXPECT_EQ(describeCall({3, CollectiveCall::ReduceScatter, 2, 77, 9, -1}),
            "reduce_scatter (2 dtype 77, op 9)");
  CollectiveCall later = sum;
  later.seq = 16;
  EXPECT_NE(describeCallMismatch({sum, later})
                .find("the ranks issued different collectives: rank 0 "
                      "all_reduce (36 f64, sum) as #15; rank 1 all_reduce (36 "
                      "f64, sum) as #16."),
            std::string::npos);
}

TEST(CheckedCommunicator, CollectivesThatMatchPassThroughInOrder) {
  std::vector<std::string> calls;
  auto inner = std::make_unique<ScriptedPeers>(3, 1, &calls);
  CheckedCommunicator comm(std::move(inner));
  EXPECT_EQ(comm.rank(), 1);
  EXPECT_EQ(comm.size(), 3);
  EXPECT_STREQ(comm.backend(), "scripted");
  float grad[5] = {0};
  comm.allReduce(grad, 5, DType::F32, ReduceOp::Mean);
  comm.broadcast(grad, 2, DType::F32, 0);
  comm.barrier();
  EXPECT_EQ(comm.checked(), 3);
  std::vector<std::string> expected = {
      "all_gather 6 i64",   "all_reduce 5 f32 mean", "all_gather 6 i64",
      "broadcast 2 from 0", "all_gather 6 i64",      "barrier"};
  EXPECT_EQ(calls, expected);
  // One rank alone has nothing to compare with: nothing is wrapped.
  std::unique_ptr<Communicator> alone =
      checkEveryCollective(std::make_unique<LocalCommunicator>());
  EXPECT_STREQ(alone->backend(), "local");
  EXPECT_EQ(dynamic_cast<CheckedCommunicator *>(alone.get()), nullptr);
}

/// Rank 0 of two: a barrier both issue, then an all-reduce of 5 floats as
/// the second collective while rank 1 issues a barrier.
void allReduceAgainstABarrier() {
  std::vector<std::string> calls;
  auto inner = std::make_unique<ScriptedPeers>(2, 0, &calls);
  ScriptedPeers *peers = inner.get();
  CheckedCommunicator comm(std::move(inner));
  comm.barrier();
  peers->peer = CollectiveCall{0, CollectiveCall::Barrier, 0, -1, -1, -1};
  float grad[5] = {0};
  comm.allReduce(grad, 5, DType::F32, ReduceOp::Sum);
  std::fprintf(stderr, "the all-reduce ran\n");
}

TEST(CheckedCommunicatorDeathTest, RankZeroStopsTheJobBeforeAMismatch) {
  // Rank 0 says so and stops the job (the scripted abort exits 41) without
  // issuing the all-reduce.
  setToolName("loom-run");
  EXPECT_EXIT(allReduceAgainstABarrier(), ::testing::ExitedWithCode(41),
              "loom-run: error: rank 0: the ranks issued different "
              "collectives as their #2: rank 0 all_reduce \\(5 f32, sum\\); "
              "rank 1 barrier\\.");
}
