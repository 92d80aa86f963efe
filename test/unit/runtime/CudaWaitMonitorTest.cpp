//===- CudaWaitMonitorTest.cpp - Waits for a GPU that never end -*- C++ -*-===//
//
// The CUDA plugin's WaitMonitor needs no GPU: waits are plain scopes here,
// held longer or shorter than the limit, and the limit's rules are checked
// against communicators of one and two ranks. Gpu.AKernelThatNeverEnds-
// StopsTheJob (CudaDeviceTest.cpp) runs it against a real hung kernel.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "cuda/WaitMonitor.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Flags.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

using namespace loom::rt;
using namespace loom::rt::cuda;
using namespace loom::rt::test;

namespace {

using Seconds = std::chrono::duration<double>;

/// A monitor that looks every 10 ms and records its first failure.
class Monitor {
public:
  explicit Monitor(double limit) {
    WaitMonitor::Options options;
    options.limit = limit;
    options.checkEvery = 0.01;
    options.fail = [this](const std::string &reason) {
      failure.set_value(reason);
    };
    monitor = std::make_unique<WaitMonitor>(std::move(options));
  }

  /// The failure within `seconds`, or "" if none came.
  std::string failureWithin(double seconds) {
    if (reported.wait_for(Seconds(seconds)) != std::future_status::ready)
      return "";
    return reported.get();
  }

  WaitMonitor &operator*() { return *monitor; }

private:
  std::promise<std::string> failure;
  std::future<std::string> reported = failure.get_future();
  std::unique_ptr<WaitMonitor> monitor; // stopped before the promise goes
};

} // namespace

TEST(WaitMonitor, StopsTheJobWhenAWaitOutlastsTheLimit) {
  Monitor monitor(0.2);
  auto start = std::chrono::steady_clock::now();
  WaitMonitor::Wait wait(*monitor, "the compute stream");
  std::string failure = monitor.failureWithin(10);
  double waited = Seconds(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failure.rfind("waiting for the compute stream has not ended "
                          "after ",
                          0),
            0u)
      << failure;
  EXPECT_NE(failure.find(" s (LOOM_GPU_WAIT_LIMIT_S: 0.2 s): a kernel that "
                         "does not finish, or a GPU or driver that has "
                         "stopped responding (nvidia-smi says more). "
                         "Stopping the job"),
            std::string::npos)
      << failure;
  EXPECT_GE(waited, 0.2);
}

TEST(WaitMonitor, ShortWaitsAndTimeBetweenWaitsDoNotCount) {
  Monitor monitor(0.3);
  // Eight waits of 50 ms, 400 ms in all, then 400 ms of no wait.
  for (int i = 0; i < 8; ++i) {
    WaitMonitor::Wait wait(*monitor, "the compute stream");
    std::this_thread::sleep_for(Seconds(0.05));
  }
  EXPECT_EQ(monitor.failureWithin(0.4), "");
}

TEST(WaitMonitor, NamesTheOldestWait) {
  Monitor monitor(0.2);
  std::promise<void> release;
  std::thread other([&, done = release.get_future()] {
    WaitMonitor::Wait wait(*monitor, "the communication stream");
    done.wait();
  });
  std::this_thread::sleep_for(Seconds(0.05));
  std::string failure;
  {
    WaitMonitor::Wait wait(*monitor, "the compute stream");
    failure = monitor.failureWithin(10);
  }
  release.set_value();
  other.join();
  EXPECT_NE(failure.find("waiting for the communication stream has not "
                         "ended"),
            std::string::npos)
      << failure;
}

TEST(WaitMonitor, ALimitOfZeroIsNone) {
  Monitor monitor(0.05);
  (*monitor).setLimit(0); // as connect() does for such a job
  {
    WaitMonitor::Wait wait(*monitor, "the compute stream");
    std::this_thread::sleep_for(Seconds(0.3));
  }
  EXPECT_EQ(monitor.failureWithin(0.1), "");
}

TEST(WaitMonitorDeathTest, StopsTheProcessByDefault) {
  setToolName("loom-run");
  auto hang = [] {
    WaitMonitor::Options options;
    options.limit = 0.1;
    options.checkEvery = 0.01;
    WaitMonitor monitor(std::move(options));
    WaitMonitor::Wait wait(monitor, "the compute stream");
    std::this_thread::sleep_for(Seconds(30));
  };
  EXPECT_EXIT(hang(), ::testing::ExitedWithCode(1),
              "loom-run: error: waiting for the compute stream has not "
              "ended after [0-9.]+ s \\(LOOM_GPU_WAIT_LIMIT_S: 0.1 s\\)");
}

// Two ranks as loom-run --ranks 2 makes them: IdleRanks(0, 2, timeout).
TEST(WaitMonitor, TheLimitFollowsTheCollectiveTimeout) {
  LocalCommunicator one;
  EXPECT_EQ(gpuWaitLimit(std::nullopt, one), kDefaultGpuWaitLimit);
  EXPECT_EQ(gpuWaitLimit(std::nullopt, IdleRanks(0, 2, 60)),
            kDefaultGpuWaitLimit);
  // Never before a collective's own timeout could report it.
  EXPECT_EQ(gpuWaitLimit(std::nullopt, IdleRanks(0, 2, 900)),
            900 + kGpuWaitSlack);
  // Ranks told to wait for each other forever wait for their GPU so too.
  EXPECT_EQ(gpuWaitLimit(std::nullopt, IdleRanks(0, 2, 0)), 0);
  // A setting is taken as it is, unless it undercuts the collectives'.
  EXPECT_EQ(gpuWaitLimit(5.0, one), 5.0);
  EXPECT_EQ(gpuWaitLimit(0.0, IdleRanks(0, 2, 60)), 0);
  EXPECT_EQ(gpuWaitLimit(90.0, IdleRanks(0, 2, 60)), 90);
  EXPECT_EQ(gpuWaitLimit(20.0, IdleRanks(0, 2, 0)), 20);
  EXPECT_TRUE(throwsError([] { gpuWaitLimit(30.0, IdleRanks(0, 2, 60)); },
                          {"LOOM_GPU_WAIT_LIMIT_S=30 would end a rank waiting "
                           "for its GPU before --collective-timeout (60 s)",
                           "set it above 60, or to 0 for no limit"}));
}

TEST(WaitMonitor, ReadsItsSetting) {
  {
    ScopedEnv unset("LOOM_GPU_WAIT_LIMIT_S", nullptr);
    EXPECT_EQ(gpuWaitLimitSetting(), std::nullopt);
  }
  {
    ScopedEnv set("LOOM_GPU_WAIT_LIMIT_S", "2.5");
    EXPECT_EQ(gpuWaitLimitSetting(), 2.5);
  }
  for (const char *bad : {"", "-1", "ten", "nan"}) {
    ScopedEnv set("LOOM_GPU_WAIT_LIMIT_S", bad);
    EXPECT_THROW(gpuWaitLimitSetting(), UsageError) << bad;
  }
}
