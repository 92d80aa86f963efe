//===- MpiCommTest.cpp - The MPI backend in a real multi-rank job -*- C++
//-*-===//
//
// Runs LoomCommCheck (CommCheck.cpp) under the MPI launcher the runtime was
// built with, on 3 ranks (an odd count, so sums are not just pairs), and
// expects every rank to pass. Skipped in a runtime built without MPI.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/Launcher.h"
#include "loom/runtime/World.h"

#include <sys/wait.h>

using namespace loom::rt;

namespace {

/// Runs LoomCommCheck on 3 ranks and expects every rank to pass.
void runCommCheck() {
  test::MpiexecRun run = test::runUnderMpiexec(3, {LOOM_TEST_COMM_CHECK});
  const std::string &output = run.output;
  ASSERT_TRUE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0) << output;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(output.find("rank " + std::to_string(rank) + " of 3 (mpi): "),
              std::string::npos)
        << output;
  EXPECT_EQ(output.find("FAIL"), std::string::npos) << output;
}

} // namespace

TEST(MpiCommunicator, CollectivesAreExactForEveryTypeAndOp) {
  if (!haveMpi() || defaultMpiexec().empty())
    GTEST_SKIP() << "runtime built without MPI";
  runCommCheck();
}

TEST(MpiCommunicator, CollectivesInPiecesAreExact) {
  // All-reduces and reduce-scatters go in pieces (8 MiB by default, larger
  // than any message here): with 100-byte pieces every message of more
  // than a few elements splits, at boundaries inside the buffer (and
  // inside each rank's block of a reduce-scatter), blocking and on the
  // communication thread alike.
  if (!haveMpi() || defaultMpiexec().empty())
    GTEST_SKIP() << "runtime built without MPI";
  test::ScopedEnv pieces("LOOM_MPI_PIECE_BYTES", "100");
  runCommCheck();
}
