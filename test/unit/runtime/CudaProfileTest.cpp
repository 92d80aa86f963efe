//===- CudaProfileTest.cpp - The GPU timers' bookkeeping --------*- C++ -*-===//
//
// The kernel profiler (LOOM_CUDA_PROFILE) and the collectives' timer against
// a driver table whose events read a clock the test sets, so the sums, the
// stalls, the reuse of events and the handling of events that have not
// completed are checked without a GPU.
//
//===----------------------------------------------------------------------===//
#include "cuda/CollectiveTimer.h"
#include "cuda/KernelProfile.h"
#include "loom/runtime/Trace.h"

#include <gtest/gtest.h>

#include <deque>

using namespace loom::rt::cuda;
using loom::rt::DeviceCommTimes;

namespace {

/// A fake event: the clock when it was last recorded, and whether the GPU
/// has reached it.
struct FakeEvent {
  double recordedAt = -1;
  bool complete = true;
};

double clockMs = 0;
bool recordFails = false;
int created = 0, destroyed = 0, recorded = 0, createLimit = 1 << 30;
std::deque<FakeEvent> events; // stable addresses

CUresult fakeCreate(CUevent *event, unsigned) {
  if (created >= createLimit)
    return CUDA_ERROR_OUT_OF_MEMORY;
  events.emplace_back();
  ++created;
  *event = reinterpret_cast<CUevent>(&events.back());
  return CUDA_SUCCESS;
}
CUresult fakeDestroy(CUevent) {
  ++destroyed;
  return CUDA_SUCCESS;
}
CUresult fakeRecord(CUevent event, CUstream) {
  if (recordFails)
    return CUDA_ERROR_INVALID_HANDLE;
  auto *fake = reinterpret_cast<FakeEvent *>(event);
  ++recorded;
  fake->recordedAt = clockMs;
  fake->complete = true;
  return CUDA_SUCCESS;
}
CUresult fakeElapsed(float *ms, CUevent start, CUevent end) {
  auto *a = reinterpret_cast<FakeEvent *>(start);
  auto *b = reinterpret_cast<FakeEvent *>(end);
  if (!a->complete || !b->complete)
    return CUDA_ERROR_NOT_READY;
  *ms = static_cast<float>(b->recordedAt - a->recordedAt);
  return CUDA_SUCCESS;
}

CUresult fakeSynchronize(CUevent event) {
  return reinterpret_cast<FakeEvent *>(event)->complete ? CUDA_SUCCESS
                                                        : CUDA_ERROR_NOT_READY;
}

Driver fakeDriver() {
  Driver driver;
  driver.cuEventSynchronize = fakeSynchronize;
  driver.cuEventQuery = fakeSynchronize; // never blocks here either
  driver.cuEventCreate = fakeCreate;
  driver.cuEventDestroy = fakeDestroy;
  driver.cuEventRecord = fakeRecord;
  driver.cuEventElapsedTime = fakeElapsed;
  return driver;
}

class KernelProfilerTest : public ::testing::Test {
protected:
  void SetUp() override {
    clockMs = 0;
    recordFails = false;
    created = destroyed = 0;
    createLimit = 1 << 30;
    events.clear();
  }
  /// One launch of `name` taking `ms` on the fake GPU.
  void launch(KernelProfiler &profiler, const char *name, double ms,
              const char *shape = "grid 1x1x1 block 256x1x1") {
    CUevent start = profiler.begin(nullptr);
    clockMs += ms;
    profiler.end(nullptr, start, name, shape);
  }
  Driver driver = fakeDriver();
};

} // namespace

TEST(KernelTimes, TableSortsByTotalTime) {
  KernelTimes times;
  times.add("softmax", 1.0, "grid 128x1x1 block 256x1x1");
  times.add("gemm", 3.0, "M=64 N=64 K=64");
  times.add("softmax", 3.0, "grid 128x1x1 block 256x1x1");
  times.add("gemm", 0.25, "M=8 N=8 K=8"); // another shape: a row of its own
  times.add("tiny", 0.5, "grid 1x1x1 block 1x1x1");
  std::string table = times.table(/*top=*/2, /*untimed=*/3);
  size_t softmax = table.find("softmax"), gemm = table.find("gemm");
  ASSERT_NE(softmax, std::string::npos);
  ASSERT_NE(gemm, std::string::npos);
  EXPECT_LT(softmax, gemm) << table; // 4 ms before 3 ms
  // softmax: 4 ms in 2 calls, 2000 us each, 4 / 7.75 of the total.
  EXPECT_NE(
      table.find("     4.000        2     2000.00     3000.00      51.6%"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("     3.000        1     3000.00     3000.00"),
            std::string::npos)
      << table << "the 64x64x64 GEMM alone, not summed with the 8x8x8 one";
  EXPECT_NE(table.find("M=64 N=64 K=64"), std::string::npos);
  EXPECT_EQ(table.find("M=8 N=8 K=8"), std::string::npos) << "only the top 2";
  EXPECT_EQ(table.find("tiny"), std::string::npos) << "only the top 2";
  EXPECT_NE(table.find("(2 more rows)"), std::string::npos);
  EXPECT_NE(
      table.find("     7.750        5 launches of 4 kernels and shapes in all"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("3 launches not timed"), std::string::npos);
  EXPECT_EQ(times.launches(), 5);
}

TEST_F(KernelProfilerTest, SumsTheEventPairsPerKernel) {
  KernelProfiler profiler(driver);
  launch(profiler, "a", 2.0);
  launch(profiler, "b", 0.25);
  launch(profiler, "a", 1.0);
  EXPECT_EQ(profiler.pending(), 3u);
  std::string table = profiler.report();
  EXPECT_EQ(profiler.pending(), 0u);
  EXPECT_NE(table.find("     3.000        2     1500.00     2000.00"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("     0.250        1      250.00      250.00"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("not timed"), std::string::npos) << table;
}

TEST_F(KernelProfilerTest, ReusesHarvestedEvents) {
  KernelProfiler profiler(driver);
  for (int i = 0; i < 100; ++i) {
    launch(profiler, "k", 0.01);
    profiler.harvest();
  }
  EXPECT_EQ(created, 2) << "one pair, reused after each harvest";
  EXPECT_NE(profiler.report().find("100 launches"), std::string::npos);
}

TEST_F(KernelProfilerTest, KeepsPairsTheGpuHasNotReached) {
  KernelProfiler profiler(driver);
  launch(profiler, "done", 1.0);
  launch(profiler, "running", 5.0);
  // The GPU has not reached the second pair's end yet.
  events.back().complete = false;
  profiler.harvest();
  EXPECT_EQ(profiler.pending(), 1u);
  events.back().complete = true;
  std::string table = profiler.report();
  EXPECT_EQ(profiler.pending(), 0u);
  EXPECT_NE(table.find("running"), std::string::npos) << table;
  EXPECT_NE(table.find("     6.000        2 launches"), std::string::npos)
      << table;
}

TEST_F(KernelProfilerTest, CountsWhatItCannotTime) {
  KernelProfiler profiler(driver);
  createLimit = 3; // the second launch gets a start but no end
  launch(profiler, "a", 1.0);
  launch(profiler, "b", 1.0);
  recordFails = true;
  launch(profiler, "c", 1.0);
  std::string table = profiler.report();
  EXPECT_NE(table.find("     1.000        1 launches of 1 kernels"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("2 launches not timed"), std::string::npos) << table;
}

TEST_F(KernelProfilerTest, DestroysItsEvents) {
  {
    KernelProfiler profiler(driver);
    launch(profiler, "a", 1.0);
    launch(profiler, "b", 1.0);
    profiler.harvest();
    launch(profiler, "c", 1.0); // pending at destruction
  }
  EXPECT_EQ(destroyed, created);
}

namespace {

/// The fake GPU's clock stands for either stream: each event is recorded at
/// the time the test sets, which is when the GPU reaches it.
class CollectiveTimerTest : public KernelProfilerTest {
protected:
  void at(double ms) { clockMs = ms; }
  CUstream comm = reinterpret_cast<CUstream>(1);
  CUstream compute = reinterpret_cast<CUstream>(2);
};

} // namespace

TEST_F(CollectiveTimerTest, HiddenCollectiveCostsNoStall) {
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm);
  at(3), timer.end(1, comm);
  at(5), timer.computeWaits(1, compute); // compute got there after it ended
  DeviceCommTimes times = timer.take();
  EXPECT_NEAR(times.commSeconds, 3e-3, 1e-9);
  EXPECT_EQ(times.exposedSeconds, 0);
  EXPECT_EQ(timer.pending(), 0u);
}

TEST_F(CollectiveTimerTest, StallIsFromTheWaitToTheEnd) {
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm);
  at(10), timer.end(1, comm);
  at(4), timer.computeWaits(1, compute); // compute waited 6 ms
  DeviceCommTimes times = timer.take();
  EXPECT_NEAR(times.commSeconds, 10e-3, 1e-9);
  EXPECT_NEAR(times.exposedSeconds, 6e-3, 1e-9);
}

TEST_F(CollectiveTimerTest, OneWaitCoversEarlierCollectives) {
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm);
  at(2), timer.end(1, comm);
  at(2), timer.begin(2, comm);
  at(9), timer.end(2, comm);
  at(5), timer.computeWaits(2, compute);
  DeviceCommTimes times = timer.take();
  EXPECT_NEAR(times.commSeconds, 9e-3, 1e-9);
  EXPECT_NEAR(times.exposedSeconds, 4e-3, 1e-9) << "counted once, not twice";
  EXPECT_EQ(timer.pending(), 0u);
}

TEST_F(CollectiveTimerTest, KeepsWhatIsNotWaitedForOrNotReached) {
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm);
  at(1), timer.end(1, comm);
  // Not waited for yet: its stall is unknown, so nothing is counted.
  DeviceCommTimes times = timer.take();
  EXPECT_EQ(times.commSeconds, 0);
  EXPECT_EQ(timer.pending(), 1u);
  at(3), timer.computeWaits(1, compute);
  events.back().complete = false; // the GPU is not there yet
  times = timer.take();
  EXPECT_EQ(times.commSeconds, 0);
  EXPECT_EQ(timer.pending(), 1u);
  events.back().complete = true;
  times = timer.take();
  EXPECT_NEAR(times.commSeconds, 1e-3, 1e-9);
  EXPECT_EQ(timer.pending(), 0u);
  EXPECT_EQ(timer.take().commSeconds, 0) << "each collective counted once";
}

TEST_F(CollectiveTimerTest, ReusesEventsAndCountsWhatItCannotTime) {
  {
    CollectiveTimer timer(driver);
    for (int ticket = 1; ticket <= 100; ++ticket) {
      at(0), timer.begin(ticket, comm);
      at(1), timer.end(ticket, comm);
      at(2), timer.computeWaits(ticket, compute);
      EXPECT_NEAR(timer.take().commSeconds, 1e-3, 1e-9);
    }
    EXPECT_EQ(created, 3) << "three events, reused for every collective";
    recordFails = true;
    timer.begin(101, comm);
    timer.end(101, comm);
    timer.computeWaits(101, compute);
    EXPECT_EQ(timer.take().commSeconds, 0);
    EXPECT_EQ(timer.untimed(), 1);
    recordFails = false;
    timer.begin(102, comm); // pending at destruction
    timer.end(102, comm);
  }
  EXPECT_EQ(destroyed, created);
}

TEST_F(CollectiveTimerTest, TracesCollectivesAndStallsOnTheHostClock) {
  loom::rt::setTracing(true);
  loom::rt::takeTraceEvents();
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm, "all_reduce", 4096, "mean");
  at(3), timer.end(1, comm);
  at(1), timer.computeWaits(1, compute); // stalls 2 ms
  at(10); // the host reads the times when the GPU is at 10 ms
  int64_t before = loom::rt::traceNowNanos();
  timer.take(compute);
  int64_t after = loom::rt::traceNowNanos();
  std::vector<loom::rt::TraceEvent> trace = loom::rt::takeTraceEvents();
  loom::rt::setTracing(false);
  ASSERT_EQ(trace.size(), 2u);
  const loom::rt::TraceEvent &coll = trace[0], &wait = trace[1];
  EXPECT_EQ(coll.name, "all_reduce");
  EXPECT_EQ(coll.lane, loom::rt::TraceLane::Comm);
  EXPECT_EQ(coll.bytes, 4096);
  EXPECT_EQ(coll.op, "mean");
  EXPECT_NEAR(coll.durationNs, 3e6, 1e3);
  // 10 ms before the anchor, which the host passed between before/after.
  EXPECT_GE(coll.startNs, before - 10'000'000 - 1000);
  EXPECT_LE(coll.startNs, after - 10'000'000 + 1000);
  EXPECT_EQ(wait.name, "wait");
  EXPECT_EQ(wait.lane, loom::rt::TraceLane::Compute);
  EXPECT_NEAR(wait.durationNs, 2e6, 1e3);
  EXPECT_NEAR(wait.startNs - coll.startNs, 1e6, 1e3);
  // Without tracing, no anchor event is made and nothing is recorded.
  at(20), timer.begin(2, comm);
  at(21), timer.end(2, comm);
  at(22), timer.computeWaits(2, compute);
  int records = recorded;
  EXPECT_NEAR(timer.take(compute).commSeconds, 1e-3, 1e-9);
  EXPECT_EQ(recorded, records) << "no anchor event";
  EXPECT_TRUE(loom::rt::takeTraceEvents().empty());
}

TEST_F(CollectiveTimerTest, NamesTheOldestCollectiveTheGpuHasNotFinished) {
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm, "all_reduce", 64, "mean");
  at(1), timer.end(1, comm);
  at(1), timer.begin(2, comm, "all_gather", 32, "gather");
  at(2), timer.end(2, comm);
  FakeEvent &secondEnd = events.back();
  secondEnd.complete = false; // a peer never joined the all-gather
  using std::chrono::seconds;
  auto now = loom::rt::Clock::now();
  EXPECT_FALSE(timer.overdue(5, now)) << "issued just now";
  std::optional<CollectiveTimer::Overdue> late =
      timer.overdue(5, now + seconds(6));
  ASSERT_TRUE(late);
  EXPECT_EQ(late->ticket, 2) << "the first one finished";
  EXPECT_EQ(late->name, "all_gather");
  EXPECT_EQ(late->bytes, 32);
  EXPECT_GE(late->seconds, 6);
  EXPECT_TRUE(late->started);
  std::string message = CollectiveTimer::describe(*late, 5);
  EXPECT_EQ(message.rfind("all_gather #2 (32 bytes) has not finished on the "
                          "GPU 6 s after it was issued (--collective-timeout "
                          "5): another rank is stuck or has died",
                          0),
            0u)
      << message;
  secondEnd.complete = true;
  EXPECT_FALSE(timer.overdue(5, now + seconds(6)));
}

TEST_F(CollectiveTimerTest, TellsACollectiveThisRanksGpuHasNotReached) {
  CollectiveTimer timer(driver);
  at(0), timer.begin(1, comm, "all_reduce", 64, "mean");
  FakeEvent &start = events.back();
  at(1), timer.end(1, comm);
  // The communication stream still waits for this rank's kernels.
  start.complete = false;
  events.back().complete = false;
  std::optional<CollectiveTimer::Overdue> late =
      timer.overdue(5, loom::rt::Clock::now() + std::chrono::seconds(7));
  ASSERT_TRUE(late);
  EXPECT_EQ(late->ticket, 1);
  EXPECT_FALSE(late->started);
  std::string message = CollectiveTimer::describe(*late, 5);
  EXPECT_EQ(message.rfind("all_reduce #1 (64 bytes) has not started on this "
                          "rank's GPU 7 s after it was issued "
                          "(--collective-timeout 5): the kernels before it "
                          "on this rank have not finished",
                          0),
            0u)
      << message;
}
