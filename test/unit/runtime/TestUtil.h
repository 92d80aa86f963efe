//===- TestUtil.h - Helpers shared by the runtime unit tests ----*- C++ -*-===//
//
// Temporary directories, the hand-written softmax test artifact, a
// communicator whose collectives do nothing, and a matcher for the
// runtime's error messages.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TEST_UNIT_RUNTIME_TESTUTIL_H
#define LOOM_TEST_UNIT_RUNTIME_TESTUTIL_H

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
/// Each test gets its own, so lit may run tests in parallel.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

/// Rank `rank` of `size` whose collectives do nothing, for tests of what
/// stands around them (timeouts, aborts). abort() exits the process.
class IdleRanks : public Communicator {
public:
  IdleRanks(int rank, int size, double timeout = 0)
      : myRank(rank), mySize(size), timeout(timeout) {}
  int rank() const override { return myRank; }
  int size() const override { return mySize; }
  const char *backend() const override { return "idle"; }
  void allReduce(void *, int64_t, DType, ReduceOp) override {}
  void reduceScatter(const void *, void *, int64_t, DType, ReduceOp) override {}
  void allGather(const void *, void *, int64_t, DType) override {}
  void broadcast(void *, int64_t, DType, int) override {}
  void barrier() override {}
  double collectiveTimeout() const override { return timeout; }
  [[noreturn]] void abort(int status) override;

private:
  int myRank, mySize;
  double timeout;
};

/// Sets (or with nullptr unsets) an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name;
  std::optional<std::string> previous;
};

void writeBytes(const std::string &path, const std::vector<char> &bytes);
void writeText(const std::string &path, const std::string &text);
std::vector<char> readBytes(const std::string &path);

/// The manifest of the softmax test artifact (SoftmaxArtifact.c):
/// classify, batch 16, features 8, classes 4, SGD + momentum.
nlohmann::json softmaxManifest(bool f64 = true);

/// softmaxManifest() as loomc --dp=`ranks` --zero=`stage` would write it:
/// mesh dp=`ranks`, and each momentum buffer a rank's slice of
/// ceil(n / ranks) elements (in "state" and in the entries' arguments); at
/// stage 3 each param too, with its "full_shape". For manifest and
/// checkpoint tests only: the softmax library's entries take whole tensors.
nlohmann::json zeroManifest(int ranks, int stage = 1);

/// The manifest of the bigram test artifact (BigramArtifact.c): lm, batch 4,
/// seq 16, vocab 256, plain SGD (no optimizer state), train_step only.
nlohmann::json bigramManifest();

/// Where the test artifacts (`<variant>.so`) are: $LOOM_TEST_ARTIFACT_DIR
/// if set (scripts/gpu-checks.sh runs the tests on a machine where the
/// build tree has another path), else the build tree's directory.
std::string testArtifactDir();

/// Creates `<parent>/<name>/` holding model.so (a copy of the `variant`
/// build: softmax_{f64,f32,badgrad,nan} or bigram) and `manifest` as
/// manifest.json.
std::string makeArtifactDir(const std::string &parent, const std::string &name,
                            const std::string &variant,
                            const nlohmann::json &manifest);

/// Runs `fn` and checks that it throws loom::rt::Error whose message contains
/// every string of `parts`.
::testing::AssertionResult throwsError(const std::function<void()> &fn,
                                       const std::vector<std::string> &parts);

/// Parses `manifest` and checks that it is refused with an error whose
/// message contains every string of `parts`.
::testing::AssertionResult
manifestRejected(const nlohmann::json &manifest,
                 const std::vector<std::string> &parts);

/// softmaxManifest with W split over 2 tp ranks, and pipelined over 2
/// stages (ManifestLayoutsTest.cpp).
nlohmann::json tensorParallelManifest();
nlohmann::json pipelineManifest();

/// What a job under the runtime's MPI launcher printed (stdout and stderr)
/// and its wait status.
struct MpiexecRun {
  int status = -1;
  std::string output;
};

/// Runs `args` (the executable first) on `ranks` ranks under
/// defaultMpiexec(); the environment is inherited.
MpiexecRun runUnderMpiexec(int ranks, const std::vector<std::string> &args);

} // namespace loom::rt::test

#endif // LOOM_TEST_UNIT_RUNTIME_TESTUTIL_H
