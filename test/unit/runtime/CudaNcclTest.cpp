//===- CudaNcclTest.cpp - Finding and loading NCCL --------------*- C++ -*-===//
//
// NCCL is dlopen'ed (runtime/src/cuda/NcclLibrary.h). ncclGetVersion and
// ncclGetUniqueId work without a GPU, so the search, the symbol table and the
// error for a missing library are all checked here. (Where no NCCL is
// installed the loading tests skip.) The nonblocking communicators of
// NcclComm.h are driven through a scripted stand-in, FakeNccl.c.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "cuda/CudaDevice.h"
#include "cuda/NcclComm.h"
#include "cuda/NcclJoin.h"
#include "cuda/NcclLibrary.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/World.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <sys/wait.h>

using namespace loom::rt::cuda;
using namespace loom::rt::test;

namespace {

/// LOOM_NCCL_LIBRARY set to `value` (nullptr: unset) for a scope.
struct ScopedNcclEnv : ScopedEnv {
  explicit ScopedNcclEnv(const char *value)
      : ScopedEnv("LOOM_NCCL_LIBRARY", value) {}
};

} // namespace

TEST(NcclLibrary, SearchOrder) {
  {
    ScopedNcclEnv env(nullptr);
    std::vector<std::string> candidates = ncclCandidates();
    ASSERT_FALSE(candidates.empty());
    EXPECT_EQ(candidates[0], "libnccl.so.2"); // the dynamic loader first
    for (size_t i = 1; i < candidates.size(); ++i)
      EXPECT_EQ(candidates[i].rfind("/libnccl.so.2"), candidates[i].size() - 13)
          << candidates[i];
  }
  ScopedNcclEnv env("/opt/nccl/lib/libnccl.so.2");
  EXPECT_EQ(ncclCandidates(),
            std::vector<std::string>{"/opt/nccl/lib/libnccl.so.2"});
}

TEST(NcclLibrary, LoadsEveryFunction) {
  ScopedNcclEnv env(nullptr);
  NcclLibrary nccl;
  try {
    nccl = openNccl();
  } catch (const loom::rt::Error &e) {
    GTEST_SKIP() << "no NCCL on this machine: " << e.what();
  }
#define LOOM_NCCL_CHECK(name) EXPECT_TRUE(nccl.name) << #name;
  LOOM_NCCL_FUNCTIONS(LOOM_NCCL_CHECK)
#undef LOOM_NCCL_CHECK
  EXPECT_GE(nccl.version, kMinNcclVersion);
  int version = 0;
  ASSERT_EQ(nccl.ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, nccl.version);
  EXPECT_NE(nccl.path.find("libnccl.so"), std::string::npos) << nccl.path;
  EXPECT_STREQ(nccl.ncclGetErrorString(ncclInvalidArgument),
               "invalid argument (run with NCCL_DEBUG=WARN for details)");
  EXPECT_NE(nccl.errorText(ncclSystemError, "ncclAllReduce")
                .rfind("ncclAllReduce failed: ", 0),
            std::string::npos);
  EXPECT_TRUE(
      throwsError([&] { nccl.check(ncclInvalidUsage, "ncclBroadcast"); },
                  {"ncclBroadcast failed: "}));
}

TEST(NcclLibrary, ExplicitPathIsTheOnlyCandidate) {
  ScopedNcclEnv env("/nonexistent/libnccl.so.2");
  EXPECT_TRUE(throwsError(
      [] { openNccl(); },
      {"cannot load NCCL", "/nonexistent/libnccl.so.2", "LOOM_NCCL_LIBRARY"}));
}

TEST(NcclLibrary, ReportsEveryAttempt) {
  // A library without NCCL's functions, and a file that is not one.
  EXPECT_TRUE(throwsError(
      [] {
        openNccl({"libm.so.6", "/nonexistent/libnccl.so.2"});
      },
      {"tried:", "libm.so.6: has no ncclGetVersion",
       "/nonexistent/libnccl.so.2", "pip install nvidia-nccl-cu13"}));
}

/// A pip-style nvidia.nccl namespace package (no __init__.py, as the
/// nvidia-nccl-cu13 wheel ships it) whose lib/libnccl.so.2 is not a
/// library, where python3 finds it (PYTHONPATH).
class FakeNcclWheel : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::system("python3 -c '' 2>/dev/null") != 0)
      GTEST_SKIP() << "no python3";
    std::filesystem::create_directories(dir.file("nvidia/nccl/lib"));
    writeText(path, "not a library");
  }
  TempDir dir;
  std::string path = dir.file("nvidia/nccl/lib/libnccl.so.2");
  ScopedEnv pythonPath{"PYTHONPATH", dir.path().c_str()};
};

TEST_F(FakeNcclWheel, PythonFindsTheWheelsNamespacePackage) {
  EXPECT_EQ(pythonNcclPath(), path);
}

TEST_F(FakeNcclWheel, AsksPythonOnceWhenItsLibraryDoesNotLoad) {
  // Used to ask python3 again and again, forever.
  std::string message;
  try {
    searchNccl({"/nonexistent/libnccl.so.2"}, /*askPython=*/true);
  } catch (const loom::rt::Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find("/nonexistent/libnccl.so.2"), std::string::npos)
      << message;
  size_t first = message.find(path);
  ASSERT_NE(first, std::string::npos) << message;
  EXPECT_EQ(message.find(path, first + 1), std::string::npos)
      << "python3's library tried once: " << message;
}

TEST(NcclLibrary, VersionText) {
  EXPECT_EQ(ncclVersionText(22809), "2.28.9");
  EXPECT_EQ(ncclVersionText(21300), "2.13.0");
  EXPECT_EQ(ncclVersionText(2804), "2.8.4");
}

namespace {
CUuuid uuidOf(char last) {
  CUuuid id;
  std::memset(&id, 0x5a, sizeof(id));
  id.bytes[15] = last;
  return id;
}
} // namespace

TEST(NcclLibrary, RanksSharingAGpuAreNamed) {
  // Distinct GPUs, e.g. one visible GPU per rank under srun: fine.
  EXPECT_EQ(sharedGpuError({uuidOf(1), uuidOf(2), uuidOf(3)}), "");
  EXPECT_EQ(sharedGpuError({uuidOf(1)}), "");
  // Ranks 1 and 3 were given the same GPU.
  std::string message =
      sharedGpuError({uuidOf(1), uuidOf(2), uuidOf(3), uuidOf(2)});
  EXPECT_NE(message.find("ranks 1 and 3 would share GPU "
                         "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a02"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Nonblocking communicators (NcclComm.h), against FakeNccl.c: a rank that
// never joins cannot be staged with a real NCCL on one machine.
//===----------------------------------------------------------------------===//

namespace {

struct FakeNcclCounts {
  int inits, polls, finalizes, destroys, aborts, lastBlocking, collectives;
};

class NcclComm : public ::testing::Test {
protected:
  void SetUp() override {
    // The test's own handle keeps the library (and its script) loaded
    // while openNccl loads it again.
    handle = ::dlopen(LOOM_TEST_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    reset = symbol<void (*)()>("fakeNcclReset");
    script =
        symbol<void (*)(ncclResult_t, int, ncclResult_t)>("fakeNcclScript");
    setVersion = symbol<void (*)(int)>("fakeNcclSetVersion");
    readCounts = symbol<void (*)(FakeNcclCounts *)>("fakeNcclCounts");
    reset();
    nccl = openNccl({LOOM_TEST_FAKE_NCCL});
  }
  void TearDown() override {
    if (handle)
      ::dlclose(handle);
  }
  template <typename Fn>
  Fn symbol(const char *name) {
    void *address = ::dlsym(handle, name);
    EXPECT_NE(address, nullptr) << name;
    return reinterpret_cast<Fn>(address);
  }
  FakeNcclCounts counts() {
    FakeNcclCounts out;
    readCounts(&out);
    return out;
  }
  ncclComm_t make(double timeout) {
    ncclUniqueId id;
    std::memset(&id, 0, sizeof(id));
    return makeNcclComm(nccl, 4, id, 1, timeout);
  }

  void *handle = nullptr;
  void (*reset)() = nullptr;
  void (*script)(ncclResult_t, int, ncclResult_t) = nullptr;
  void (*setVersion)(int) = nullptr;
  void (*readCounts)(FakeNcclCounts *) = nullptr;
  NcclLibrary nccl;
};

} // namespace

TEST_F(NcclComm, InitIsNonblockingAndWaitedFor) {
  script(ncclInProgress, 5, ncclSuccess);
  EXPECT_NE(make(/*timeout=*/30), nullptr);
  FakeNcclCounts c = counts();
  EXPECT_EQ(c.inits, 1);
  EXPECT_EQ(c.lastBlocking, 0) << "the config asks for nonblocking mode";
  EXPECT_EQ(c.polls, 6) << "polled until NCCL was done, and no longer";
  EXPECT_EQ(c.aborts, 0);
}

TEST_F(NcclComm, InitThatNeverFinishesTimesOutAndAborts) {
  // A peer that never calls ncclCommInitRank: the blocking call hung.
  script(ncclInProgress, -1, ncclSuccess);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(throwsError([&] { make(/*timeout=*/0.2); },
                          {"ncclCommInitRank did not finish within 0.2 s",
                           "--collective-timeout", "another rank may have died",
                           "NCCL_DEBUG=INFO"}));
  double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_GE(waited, 0.2);
  FakeNcclCounts c = counts();
  EXPECT_GT(c.polls, 1);
  EXPECT_EQ(c.aborts, 1) << "the half-made communicator is aborted";
  EXPECT_EQ(c.destroys, 0);
}

TEST_F(NcclComm, InitThatFailsLaterIsReportedAndAborted) {
  script(ncclInProgress, 3, ncclRemoteError);
  EXPECT_TRUE(throwsError(
      [&] { make(/*timeout=*/0); },
      {"ncclCommInitRank failed: remote process exited or there was a "
       "network error",
       "fake NCCL: a peer left"}));
  FakeNcclCounts c = counts();
  EXPECT_EQ(c.polls, 4);
  EXPECT_EQ(c.aborts, 1);
}

TEST_F(NcclComm, InitRejectedAtOnceHasNothingToAbort) {
  script(ncclInvalidArgument, 0, ncclSuccess);
  EXPECT_TRUE(throwsError([&] { make(/*timeout=*/30); },
                          {"ncclCommInitRank failed: invalid argument",
                           "fake NCCL: the call was rejected"}));
  FakeNcclCounts c = counts();
  EXPECT_EQ(c.polls, 0);
  EXPECT_EQ(c.aborts, 0);
}

TEST_F(NcclComm, CollectivesInProgressAreWaitedFor) {
  ncclComm_t comm = make(/*timeout=*/30);
  ASSERT_NE(comm, nullptr);
  float value = 1;
  auto allReduce = [&] {
    return nccl.ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comm,
                              nullptr);
  };
  // Finished at once: nothing to poll.
  finishNcclCall(nccl, comm, allReduce(), "ncclAllReduce", 30);
  EXPECT_EQ(counts().polls, 0);
  // Enqueued in the background: polled until done; 0 waits without limit.
  script(ncclInProgress, 2, ncclSuccess);
  finishNcclCall(nccl, comm, allReduce(), "ncclAllReduce", 0);
  EXPECT_EQ(counts().polls, 3);
  // Never done (a peer that stopped taking part): the timeout.
  script(ncclInProgress, -1, ncclSuccess);
  EXPECT_TRUE(throwsError(
      [&] { finishNcclCall(nccl, comm, allReduce(), "ncclAllReduce", 0.1); },
      {"ncclAllReduce did not finish within 0.1 s"}));
  // Failed in the background.
  script(ncclInProgress, 1, ncclRemoteError);
  EXPECT_TRUE(throwsError(
      [&] { finishNcclCall(nccl, comm, allReduce(), "ncclAllReduce", 30); },
      {"ncclAllReduce failed: remote process exited"}));
  EXPECT_EQ(counts().collectives, 4);
}

TEST_F(NcclComm, CloseFinalizesThenDestroysUnlessFailed) {
  ncclComm_t comm = make(/*timeout=*/30);
  script(ncclInProgress, 2, ncclSuccess);
  closeNcclComm(nccl, comm, /*failed=*/false, 30);
  FakeNcclCounts c = counts();
  EXPECT_EQ(c.finalizes, 1);
  EXPECT_EQ(c.destroys, 1);
  EXPECT_EQ(c.aborts, 0);

  reset();
  closeNcclComm(nccl, make(30), /*failed=*/true, 30);
  c = counts();
  EXPECT_EQ(c.finalizes, 0) << "after a failure peers may never finalize";
  EXPECT_EQ(c.aborts, 1);
  EXPECT_EQ(c.destroys, 0);

  // A finalize that never ends (a peer gone) falls back to the abort.
  reset();
  comm = make(30);
  script(ncclInProgress, -1, ncclSuccess);
  closeNcclComm(nccl, comm, /*failed=*/false, 0.1);
  c = counts();
  EXPECT_EQ(c.finalizes, 1);
  EXPECT_EQ(c.destroys, 0);
  EXPECT_EQ(c.aborts, 1);
}

TEST_F(NcclComm, NcclWithoutNonblockingModeIsRefused) {
  setVersion(21308);
  EXPECT_TRUE(throwsError([] { openNccl({LOOM_TEST_FAKE_NCCL}); },
                          {"NCCL 2.13.8 is older than 2.14.0"}));
}

//===----------------------------------------------------------------------===//
// Several ranks making their communicator (NcclJoin.h): LoomNcclJoinCheck
// (NcclJoinCheck.cpp) on 3 MPI ranks, with the scripted NCCL and stand-in
// GPUs. Every rank must end, and a failed join must end every rank with one
// message: a rank left waiting would hang the job.
//===----------------------------------------------------------------------===//

namespace {

/// The lines LoomNcclJoinCheck's ranks printed in `scenario`.
std::string joinRanks(const char *scenario) {
  ScopedNcclEnv library(LOOM_TEST_FAKE_NCCL);
  ScopedEnv which("LOOM_TEST_NCCL_JOIN", scenario);
  ScopedEnv timeout("LOOM_TEST_COLLECTIVE_TIMEOUT", "1");
  MpiexecRun run = runUnderMpiexec(3, {LOOM_TEST_NCCL_JOIN_CHECK});
  EXPECT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0)
      << run.output;
  return run.output;
}

bool has(const std::string &output, const std::string &line) {
  return output.find(line + "\n") != std::string::npos;
}

class NcclJoin : public ::testing::Test {
protected:
  void SetUp() override {
    if (!loom::rt::haveMpi() || loom::rt::defaultMpiexec().empty())
      GTEST_SKIP() << "runtime built without MPI";
  }
};

} // namespace

TEST_F(NcclJoin, EveryRankJoinsInNonblockingMode) {
  std::string out = joinRanks("ok");
  for (int rank = 0; rank < 3; ++rank) {
    std::string r = "rank " + std::to_string(rank) + ": ";
    EXPECT_TRUE(has(out, r + "joined")) << out;
    EXPECT_TRUE(has(out, r + "inits 1 aborts 0 blocking 0")) << out;
  }
}

TEST_F(NcclJoin, RanksSharingAGpuStopWithOneMessage) {
  std::string out = joinRanks("shared-gpu");
  EXPECT_NE(out.find("rank 0: error: ranks 0 and 1 would share GPU "
                     "42424242424242424242424242424200"),
            std::string::npos)
      << out;
  EXPECT_TRUE(has(out, "rank 1: stopped")) << out;
  EXPECT_TRUE(has(out, "rank 2: stopped")) << out;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_TRUE(has(out, "rank " + std::to_string(rank) +
                             ": inits 0 aborts 0 blocking -1"))
        << "no rank reached NCCL's init: " << out;
}

TEST_F(NcclJoin, ARankWithoutNcclStopsEveryRankBeforeTheInit) {
  std::string out = joinRanks("no-nccl-on-rank-1");
  // The lowest failing rank reports, naming itself.
  EXPECT_NE(out.find("rank 1: error: rank 1: cannot load NCCL"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("/nonexistent/libnccl.so.2"), std::string::npos) << out;
  EXPECT_TRUE(has(out, "rank 0: stopped")) << out;
  EXPECT_TRUE(has(out, "rank 2: stopped")) << out;
  EXPECT_EQ(out.find("inits 1"), std::string::npos) << out;
}

TEST_F(NcclJoin, AFailedInitAbortsTheOthersCommunicators) {
  std::string out = joinRanks("init-fails-on-rank-1");
  EXPECT_NE(out.find("rank 1: error: rank 1: ncclCommInitRank failed: remote "
                     "process exited or there was a network error"),
            std::string::npos)
      << out;
  EXPECT_TRUE(has(out, "rank 0: stopped")) << out;
  EXPECT_TRUE(has(out, "rank 2: stopped")) << out;
  // Ranks 0 and 2 had joined: their communicators are aborted, not left.
  EXPECT_TRUE(has(out, "rank 0: inits 1 aborts 1 blocking 0")) << out;
  EXPECT_TRUE(has(out, "rank 2: inits 1 aborts 1 blocking 0")) << out;
  EXPECT_TRUE(has(out, "rank 1: inits 1 aborts 1 blocking 0")) << out;
}

TEST_F(NcclJoin, AnInitThatNeverEndsTimesOutOnEveryRank) {
  // Rank 0's NCCL waits forever (a peer it cannot reach): the blocking
  // init hung the whole job, the others waiting for rank 0.
  std::string out = joinRanks("init-hangs-on-rank-0");
  EXPECT_NE(out.find("rank 0: error: ncclCommInitRank did not finish within "
                     "1 s (--collective-timeout)"),
            std::string::npos)
      << out;
  EXPECT_TRUE(has(out, "rank 1: stopped")) << out;
  EXPECT_TRUE(has(out, "rank 2: stopped")) << out;
  EXPECT_EQ(out.find("has waited"), std::string::npos)
      << "the others wait for rank 0's report, not for the watchdog: " << out;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_TRUE(has(out, "rank " + std::to_string(rank) +
                             ": inits 1 aborts 1 blocking 0"))
        << out;
}
