//===- ProgressTest.cpp - Tests of progress formatting ----------*- C++ -*-===//
//
// The progress line format is what users (and scripts) read.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Progress.h"
#include "TestUtil.h"

#include <cmath>

using namespace loom::rt;

TEST(Progress, FormatsCountsAndDurations) {
  EXPECT_EQ(formatCount(812), "812");
  EXPECT_EQ(formatCount(45200), "45.2k");
  EXPECT_EQ(formatCount(1234), "1.23k");
  EXPECT_EQ(formatCount(123456), "123k");
  EXPECT_EQ(formatCount(1.3e6), "1.30M");
  EXPECT_EQ(formatDuration(100), "0:01:40");
  EXPECT_EQ(formatDuration(3725), "1:02:05");
}

TEST(Progress, LineFormatAndCadence) {
  // 1000 steps of 2 ms with 64 tokens each: 32k tok/s.
  ProgressReporter progress(1, 1000, 10, 64);
  std::string first = progress.step(1, 2.34121, 3e-4, 0.002);
  EXPECT_EQ(first, "step 1/1000 | loss 2.3412 | lr 3.00e-04 | 32.0k tok/s | "
                   "2.00 ms/step | ETA 0:00:02");
  EXPECT_EQ(progress.step(2, 2.3, 3e-4, 0.002), "");
  for (int step = 3; step < 10; ++step)
    progress.step(step, 2.3, 3e-4, 0.002);
  EXPECT_NE(progress.step(10, 2.3, 3e-4, 0.002), "");
  // No lr output: the field is omitted.
  ProgressReporter noLr(1, 1, 10, 1);
  EXPECT_EQ(noLr.step(1, 1.0, NAN, 0.5).find("lr"), std::string::npos);
}

TEST(Progress, AStepTheRunStopsAfterGetsALine) {
  // A run stopped on request ends before its last step: its last step
  // still gets a line, with the speed averaged since the previous one.
  ProgressReporter progress(1, 1000, 0, 64);
  EXPECT_NE(progress.step(1, 2.3, NAN, 0.002), "");
  EXPECT_EQ(progress.step(2, 2.3, NAN, 0.002), "");
  std::string last = progress.step(3, 2.25, NAN, 0.004, /*final=*/true);
  EXPECT_EQ(
      last.rfind("step 3/1000 | loss 2.2500 | 21.3k tok/s | 3.00 ms/step", 0),
      0u)
      << last;
}
