//===- TestHooks.h - Faults the end-to-end tests inject ---------*- C++ -*-===//
//
// Internal to the runtime. Each hook is an environment variable
// "STEP,RANK[,once]" that names the rank and the step after which the fault
// happens; with "once", only in the first attempt of a job (LOOM_RUN_ATTEMPT,
// which `loom-run --max-restarts` sets). Unset, a hook costs one getenv per
// step.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_TESTHOOKS_H
#define LOOM_RUNTIME_SRC_TESTHOOKS_H

#include <cstdint>

namespace loom::rt {

class Communicator;
class Tensor;

/// LOOM_TEST_KILL_AT_STEP: kills this rank with SIGKILL after (and after the
/// save of) that step (test/e2e/dist/restart.test).
void killPointForTests(int64_t step, int rank);

/// LOOM_TEST_STOP_SIGNAL: this rank sends itself SIGUSR2 after that step,
/// as `kill -USR2` would, asking the job to stop (test/e2e/dist/stop.test).
void stopSignalForTests(int64_t step, int rank);

/// LOOM_TEST_STRAY_BARRIER: this rank issues a barrier the others do not,
/// so the ranks' schedules diverge (test/e2e/dist/watchdog.test).
void strayCollectiveForTests(int64_t step, Communicator &comm);

/// LOOM_TEST_NAN_LOSS: `loss` (this rank's loss of `step`), or NaN on the
/// named rank and step, as a diverging model would give
/// (test/e2e/dist/co2-nan.test).
double lossForTests(int64_t step, int rank, double loss);

/// LOOM_TEST_FAIL_RANK_SAVE: throws Error, as a full disk would, where the
/// named rank writes its part of the per-rank checkpoint of the named step
/// (test/e2e/co2/save-async.test).
void failRankSaveForTests(int64_t step, int rank);

/// LOOM_TEST_SKEW_OUTER: before the per-rank save of the named step, the
/// named rank changes the first value of `alike` (CO2's state every rank
/// holds alike) by one unit in the last place, as a rank that diverged
/// would have it (test/e2e/co2/checkpoint-format.test).
void skewAlikeForTests(int64_t step, int rank, Tensor &alike);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_TESTHOOKS_H
