//===- CudaNcclTest.cpp - Finding and loading NCCL --------------*- C++ -*-===//
//
// NCCL is dlopen'ed (runtime/src/cuda/NcclLibrary.h). ncclGetVersion and
// ncclGetUniqueId work without a GPU, so the search, the symbol table and the
// error for a missing library are all checked here. (Where no NCCL is
// installed the loading tests skip.)
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "cuda/CudaDevice.h"
#include "cuda/NcclLibrary.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>

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
