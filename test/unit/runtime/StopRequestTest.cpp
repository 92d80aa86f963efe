//===- StopRequestTest.cpp - Tests of stop-on-request signals ---*- C++ -*-===//
//
// The handlers are process-wide and the request, once made, stays: each
// test runs in a death-test child, so this process never installs them.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/StopRequest.h"
#include "TestUtil.h"

#include <csignal>
#include <unistd.h>

using namespace loom::rt;

namespace {

/// Exits 7 when `signal` was recorded as the request and the process lives
/// on, else 1.
[[noreturn]] void exitRecorded(int signal) {
  _exit(stopSignal() == signal ? 7 : 1);
}

} // namespace

TEST(StopRequest, NothingIsRequestedAtFirst) {
  EXPECT_EXIT(
      {
        installStopHandlers(/*interrupts=*/true);
        exitRecorded(0);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(StopRequest, TheFirstInterruptAsksAndTheProcessGoesOn) {
  for (int signal : {SIGINT, SIGTERM, SIGUSR2})
    EXPECT_EXIT(
        {
          installStopHandlers(/*interrupts=*/true);
          raise(signal);
          exitRecorded(signal);
        },
        ::testing::ExitedWithCode(7), "")
        << stopSignalName(signal);
}

TEST(StopRequest, ASecondInterruptEndsTheProcessAsTheSignalWould) {
  for (int signal : {SIGINT, SIGTERM})
    EXPECT_EXIT(
        {
          installStopHandlers(/*interrupts=*/true);
          raise(SIGUSR2);
          raise(signal);
          _exit(1);
        },
        ::testing::KilledBySignal(signal), "")
        << stopSignalName(signal);
}

TEST(StopRequest, ARepeatedUsr2IsHarmlessAndTheFirstSignalStays) {
  EXPECT_EXIT(
      {
        installStopHandlers(/*interrupts=*/true);
        raise(SIGUSR2);
        raise(SIGUSR2);
        exitRecorded(SIGUSR2);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(StopRequest, UnderALauncherInterruptsStayFatal) {
  // mpirun follows its SIGTERM with SIGKILL a second later: a rank that
  // tried to save then would be killed in the middle of it.
  EXPECT_EXIT(
      {
        installStopHandlers(/*interrupts=*/false);
        raise(SIGUSR2);
        if (stopSignal() != SIGUSR2)
          _exit(1);
        raise(SIGTERM);
        _exit(2);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

TEST(StopRequest, NamesTheSignals) {
  EXPECT_STREQ(stopSignalName(SIGINT), "SIGINT");
  EXPECT_STREQ(stopSignalName(SIGTERM), "SIGTERM");
  EXPECT_STREQ(stopSignalName(SIGUSR2), "SIGUSR2");
  EXPECT_STREQ(stopSignalName(SIGHUP), "a signal");
}
