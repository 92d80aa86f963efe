//===- CO2Rounds.h - CO2's outer rounds, run by the trainer -----*- C++ -*-===//
//
// Internal to the runtime. A CO2 artifact (loomc --co2) trains each rank's
// model locally; every `local_steps` steps the trainer runs an outer step:
//   1. wait for the previous round's all-reduce (the mean over ranks of the
//      parameters at the previous outer step), which ran on the
//      communication thread during this round's local steps;
//   2. copy the current parameters into the round buffer and start their
//      mean all-reduce (asynchronous: the next round's local steps hide it);
//   3. call the compiled `outer_step(round, co2.mean:*)`, which applies the
//      outer momentum to the stale mean (loom.co2_outer).
// Before the first step, outer_step(round = -1) sets the anchors. Every rank
// runs the same schedule (rounds are counted in steps), so the collectives
// match. See docs/co2.md.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CO2ROUNDS_H
#define LOOM_RUNTIME_SRC_CO2ROUNDS_H

#include "loom/runtime/Artifact.h"

#include <cstdint>
#include <vector>

namespace loom::rt {

class CO2Rounds {
public:
  /// `artifact` must be a CO2 artifact (manifest co2.local_steps > 0).
  explicit CO2Rounds(Artifact &artifact);
  /// Waits for a round still in flight.
  ~CO2Rounds();

  int64_t localSteps() const { return tau; }
  /// Sets the anchors from the current parameters (round -1).
  void start();
  /// After step `step` (1-based): whether an outer step follows.
  bool isBoundary(int64_t step) const { return step % tau == 0; }
  /// The outer step after step `step`. `lossSum` is this rank's loss summed
  /// over the round's steps; it travels with the round's all-reduce (no
  /// extra collective), so the mean over ranks and steps returned is the
  /// previous round's (NaN at the first outer step).
  double outerStep(int64_t step, double lossSum);
  /// Waits for the round in flight, if any; returns its mean loss (or NaN).
  double finish();

private:
  Artifact &artifact;
  int64_t tau;
  Entry &outer;
  /// The parameters, flat in manifest order, then the round's mean loss:
  /// what the all-reduce averages.
  std::vector<Tensor *> params;
  std::vector<Tensor *> means;
  std::vector<char> roundBuffer;
  int64_t elements = 0; ///< of the parameters (the buffer has one more)
  int64_t inFlight = 0; ///< handle of the round's all-reduce, 0: none
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CO2ROUNDS_H
