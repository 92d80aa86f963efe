//===- CommTest.cpp - Tests of the one-process communication paths -*- C++
//-*-===//
//
// What needs no MPI: the loom_rt_* collectives with the default (local)
// communicator, the current-communicator switch and collective timing,
// failure agreement, launcher detection and the mesh/rank-count check
// (the watchdog: WatchdogTest.cpp; --check-collectives:
// CheckedCommunicatorTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "comm/CommQueue.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
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

TEST(Collectives, ABackendWithoutTransfersSaysSo) {
  // Pipeline transfers need a peer: the one-rank world has none.
  LocalCommunicator local;
  float x[2] = {1, 2};
  try {
    local.send(x, 2, DType::F32, 1);
    FAIL() << "send on the local backend did not throw";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "the local backend has no point-to-point transfers (a "
                  "send to rank 1)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(local.recv(x, 2, DType::F32, 1), Error);
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

/// Two ranks; records for each all-reduce whether it ran on the thread that
/// made the communicator (the caller) or on the communication thread.
struct CallerRecordingCommunicator final : Communicator {
  int rank() const override { return 0; }
  int size() const override { return 2; }
  const char *backend() const override { return "threads"; }
  void allReduce(void *, int64_t, DType, ReduceOp) override {
    onCaller.push_back(std::this_thread::get_id() == caller);
  }
  void reduceScatter(const void *, void *, int64_t, DType, ReduceOp) override {}
  void allGather(const void *, void *, int64_t, DType) override {}
  void broadcast(void *, int64_t, DType, int) override {}
  void barrier() override {}
  [[noreturn]] void abort(int) override { std::abort(); }
  std::thread::id caller = std::this_thread::get_id();
  std::vector<bool> onCaller;
};

TEST(Collectives, ASynchronousCollectiveRunsOnTheCallerOnlyOnceItWaited) {
  // Whether a synchronous collective runs on the caller (MPI: blocking) or
  // on the communication thread (non-blocking) must not depend on timing,
  // or ranks whose queues drain at different moments mix the two modes,
  // which MPI never matches: it depends on what the caller waited for.
  CallerRecordingCommunicator comm;
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

TEST(Collectives, StartsRunOnTheCallerWhileAsynchronousStartsAreOff) {
  // --async-collectives off (and auto's synchronous steps): a start runs
  // its collective at once on the caller, as the synchronous form would,
  // and returns a handle already done and waited for, in issue order.
  CallerRecordingCommunicator comm;
  ScopedCurrentCommunicator current(comm);
  float x[2] = {0};
  const int64_t startsBefore = asyncStartsIssued();
  int64_t first = loom_rt_all_reduce_start(0, x, 2, LOOM_F32, LOOM_SUM);
  loom_rt_wait(first);
  setAsyncCollectives(false);
  int64_t second = loom_rt_all_reduce_start(0, x, 2, LOOM_F32, LOOM_SUM);
  int64_t third = loom_rt_all_reduce_start(0, x, 2, LOOM_F32, LOOM_SUM);
  EXPECT_TRUE(collectiveFinished(third));
  loom_rt_wait(third);
  loom_rt_wait(second);
  setAsyncCollectives(true);
  int64_t fourth = loom_rt_all_reduce_start(0, x, 2, LOOM_F32, LOOM_SUM);
  loom_rt_wait(fourth);
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_LT(third, fourth);
  EXPECT_EQ(asyncStartsIssued() - startsBefore, 4);
  EXPECT_EQ(comm.onCaller, (std::vector<bool>{false, true, true, false}));
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
              ::testing::ExitedWithCode(1),
              "root 1 is not a rank of the group");
  EXPECT_EXIT(loom_rt_all_gather(0, x, x, -1, LOOM_F32),
              ::testing::ExitedWithCode(1), "negative count -1");
}

namespace {

/// A two-rank communicator whose abort never returns nor ends the process,
/// like an MPI_Abort waiting for a launcher daemon that is gone.
class StuckAbort final : public IdleRanks {
public:
  StuckAbort() : IdleRanks(1, 2) {}
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
