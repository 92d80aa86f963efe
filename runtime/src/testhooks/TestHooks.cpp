//===- TestHooks.cpp - Faults the end-to-end tests inject -------*- C++ -*-===//

#include "testhooks/TestHooks.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace loom::rt {

namespace {

/// Whether hook `env` names this step and rank (see the header).
bool hookAt(const char *env, int64_t step, int rank) {
  const char *spec = std::getenv(env);
  if (!spec || !*spec)
    return false;
  long long wantedStep = -1;
  int wantedRank = -1;
  char once[8] = "";
  if (std::sscanf(spec, "%lld,%d,%7s", &wantedStep, &wantedRank, once) < 2 ||
      wantedStep != step || wantedRank != rank)
    return false;
  const char *attempt = std::getenv("LOOM_RUN_ATTEMPT");
  return !(std::strcmp(once, "once") == 0 && attempt && std::atoi(attempt) > 1);
}

} // namespace

void killPointForTests(int64_t step, int rank) {
  if (!hookAt("LOOM_TEST_KILL_AT_STEP", step, rank))
    return;
  std::fprintf(stderr,
               "LOOM_TEST_KILL_AT_STEP: killing rank %d (pid %d) "
               "after step %lld\n",
               rank, static_cast<int>(getpid()), static_cast<long long>(step));
  std::fflush(stderr);
  std::raise(SIGKILL);
}

void stopSignalForTests(int64_t step, int rank) {
  if (!hookAt("LOOM_TEST_STOP_SIGNAL", step, rank))
    return;
  std::fprintf(stderr,
               "LOOM_TEST_STOP_SIGNAL: rank %d sends itself SIGUSR2 after "
               "step %lld\n",
               rank, static_cast<long long>(step));
  std::fflush(stderr);
  std::raise(SIGUSR2);
}

void strayCollectiveForTests(int64_t step, Communicator &comm) {
  if (!hookAt("LOOM_TEST_STRAY_BARRIER", step, comm.rank()))
    return;
  std::fprintf(stderr,
               "LOOM_TEST_STRAY_BARRIER: rank %d issues a barrier the others "
               "do not after step %lld\n",
               comm.rank(), static_cast<long long>(step));
  std::fflush(stderr);
  comm.barrier();
}

double lossForTests(int64_t step, int rank, double loss) {
  if (!hookAt("LOOM_TEST_NAN_LOSS", step, rank))
    return loss;
  std::fprintf(stderr,
               "LOOM_TEST_NAN_LOSS: rank %d's loss of step %lld is NaN\n", rank,
               static_cast<long long>(step));
  std::fflush(stderr);
  return std::nan("");
}

void failRankSaveForTests(int64_t step, int rank) {
  if (hookAt("LOOM_TEST_FAIL_RANK_SAVE", step, rank))
    fail("LOOM_TEST_FAIL_RANK_SAVE: rank %d cannot write its part of the "
         "checkpoint of step %lld: No space left on device",
         rank, static_cast<long long>(step));
}

void skewAlikeForTests(int64_t step, int rank, Tensor &alike) {
  if (!hookAt("LOOM_TEST_SKEW_OUTER", step, rank) || alike.numElements() == 0)
    return;
  std::fprintf(stderr,
               "LOOM_TEST_SKEW_OUTER: rank %d changes %s[0] before the save "
               "of step %lld\n",
               rank, alike.name().c_str(), static_cast<long long>(step));
  std::fflush(stderr);
  const double value = alike.get(0);
  alike.set(0, alike.dtype() == DType::F32
                   ? std::nextafter(static_cast<float>(value), INFINITY)
                   : std::nextafter(value, INFINITY));
}

} // namespace loom::rt
