//===- CO2Rounds.h - CO2's outer rounds, run by the trainer -----*- C++ -*-===//
//
// Internal to the runtime. A CO2 artifact (loomc --co2) trains each rank's
// model locally; every `local_steps` steps the trainer runs an outer step.
// Every rank runs the same schedule (rounds are counted in steps), so the
// collectives match. See docs/co2.md.
//
// Replicated outer state (entry `outer_step`, every rank holds the anchors
// and the outer momentum of every parameter). At outer step t:
//   1. wait for round t-1's all-reduce (the mean over ranks of the
//      parameters at outer step t-1), which ran on the communication thread
//      during round t's local steps, and copy it into outer_step's inputs;
//   2. copy the current parameters and this round's mean loss into the
//      round buffer and start their mean all-reduce;
//   3. call outer_step(t), which applies the outer momentum to the stale
//      mean (loom.co2_outer) and sets the parameters to the new anchor.
//
// Sharded outer state (entry `outer_shard`, rank r holds slice r of the
// flattened parameters' outer state, 1/N of it). The round's collective is
// a chain: a reduce-scatter of the parameters gives each rank the mean of
// its slice; the rank updates its slice (outer_shard, between two local
// steps: poll()); an all-gather of the new anchor slices gives every rank
// the whole new anchor. At outer step t the chain started at t-1 is
// finished and its anchor becomes the parameters; the update it ran is the
// one the replicated form runs at outer step t, on the same values, so the
// two train the same model. Round 0 (no mean yet) gathers the first anchor
// synchronously, once.
//
// Compressed outer round (loomc --co2 with --compress; replicated form
// only): the parameters the manifest's compression lists travel as their
// change since the round's anchor, each averaged by the installed
// GradientCompression (error feedback included), the others and the loss
// slot by one plain all-reduce; the mean is that anchor plus the mean
// change. The round buffer holds the compressed parameters first. A round
// is the compression's step: warm-up and L-GreCo's re-choices count rounds,
// and a plan is chosen at the outer step after a measured round, when
// nothing is in flight. Two more models per rank: the anchor the round in
// flight started from, and the next round's.
//
// Memory per rank beyond the model: replicated, the outer state (3 models)
// plus outer_step's mean inputs and the round buffer (a model each);
// sharded, the round buffer plus 5 slices of 1/N of a model (outer_shard's
// state, its input and its output).
//
// Checkpoints: complete() finishes whatever is in flight, after which
// checkpointTensors() says what the next outer step needs besides the
// params: the rank's own (inner optimizer state, its round's loss sum) and
// what every rank holds alike (the replicated form's outer state; the
// round buffer with the last round's mean, or the gathered anchor, and
// whether it holds one), which a per-rank checkpoint keeps once;
// restore() resumes from them.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CO2ROUNDS_H
#define LOOM_RUNTIME_SRC_CO2ROUNDS_H

#include "loom/runtime/Artifact.h"
#include "loom/runtime/Checkpoint.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace loom::rt {

class Communicator;

class CO2Rounds {
public:
  /// `artifact` must be a CO2 artifact (manifest co2.local_steps > 0) and
  /// `comm` the job's communicator (rank and size of the shards).
  CO2Rounds(Artifact &artifact, Communicator &comm);
  /// Whether the outer round is compressed (manifest compression).
  bool compressed() const { return compressedElements > 0; }
  /// Waits for a round still in flight.
  ~CO2Rounds();

  int64_t localSteps() const { return tau; }
  bool sharded() const { return isSharded; }
  /// Sets the anchors from the current parameters (round -1). Not after
  /// restore().
  void start();
  /// After step `step` (1-based): whether an outer step follows.
  bool isBoundary(int64_t step) const { return step % tau == 0; }
  /// Adds this rank's loss of an inner step to the round's sum.
  void addLoss(double loss);
  /// The outer step after step `step`. The round's mean loss travels with
  /// its collective (no extra one), so the mean over ranks and steps
  /// returned is the previous round's (NaN at the first outer step).
  /// `wantStop`: this rank's vote to stop the run (StopRequest.h), which a
  /// one-number all-reduce started after the round's collective carries
  /// to the next outer step.
  double outerStep(int64_t step, bool wantStop = false);
  /// Whether, at the last outer step, the votes of the round before it
  /// asked to stop: then every rank stops after that outer step.
  bool stopAgreed() const { return agreedStop; }
  /// Between two inner steps: advances a sharded round whose reduce-scatter
  /// is done (updates this rank's slice, starts the all-gather). Never
  /// blocks; nothing to do for the replicated form.
  void poll();
  /// Waits for everything in flight; returns the mean loss of the last
  /// round started (NaN if none). The round's result is kept for the next
  /// outer step.
  double complete();

  /// What a checkpoint must hold besides the artifact's params, valid
  /// after complete(): the artifact's state, split into the rank's own and
  /// the outer state every rank holds alike (replicated form), plus the
  /// round buffer, whether it holds a result (both alike) and the loss sum
  /// of the round under way (the rank's own). The tensors that are not
  /// artifact state are named "co2.*".
  PerRankTensors checkpointTensors();
  /// After checkpointTensors() were loaded from a checkpoint: resumes there.
  void restore();

private:
  /// Where a round stands. Replicated: None -> AllReduce -> Done. Sharded:
  /// None -> ReduceScatter -> (poll) AllGather -> Done.
  enum class Phase { None, AllReduce, ReduceScatter, AllGather, Done };

  double roundLossOfBuffer() const;
  void setBufferLoss(double loss);
  void outerReplicated(int64_t round);
  /// Compressed: the slots, the buffer's order and the anchors.
  void setUpCompression();
  /// Compressed: the round's changes since `anchor` into the buffer, the
  /// compression's plan re-chosen first if the last round measured; starts
  /// the round's collectives.
  void startCompressedRound(int64_t round);
  /// Compressed: the anchor the next round starts from (the parameters the
  /// outer step just set).
  void keepAnchor();
  void outerSharded(int64_t round);
  /// Sharded: runs outer_shard for `round` (it updates its state in place).
  void updateShard(int64_t round);
  /// Sharded: the reduce-scatter is done; update and start the all-gather.
  void advanceShard();

  Artifact &artifact;
  Communicator &comm;
  int64_t tau;
  bool isSharded;
  int rank, ranks;
  Entry &outer;
  DType dtype;
  /// Replicated: outer_step's co2.mean:<param> inputs, in params' order
  /// (declared first: the constructor fills both at once).
  std::vector<Tensor *> means;
  /// The parameters the outer step updates, flat in this order.
  std::vector<Tensor *> params;
  int64_t elements = 0; ///< of the parameters; the loss slot follows
  /// Compressed: each parameter's slot in the manifest's compression (-1:
  /// sent plainly), the compressed ones first in `params`; the elements
  /// they span at the buffer's start.
  std::vector<int64_t> slots;
  int64_t compressedElements = 0;
  /// Compressed: the anchor of the next round, and of the round in flight.
  std::unique_ptr<Tensor> anchor;
  std::vector<float> sentAnchor;
  /// Compressed: the handles of the round's collectives.
  std::vector<int64_t> handles;
  /// Replicated: the parameters and the loss slot, all-reduced. Sharded:
  /// ranks x shard elements, reduce-scattered, then all-gathered into.
  Tensor roundBuffer;
  /// 1 when roundBuffer holds a finished round for the next outer step.
  Tensor roundDone{"co2.round_done", ArgRole::State, {}, DType::I64};
  Tensor lossSum{"co2.round_loss_sum", ArgRole::State, {}, DType::F64};
  Phase phase = Phase::None;
  int64_t handle = 0; ///< of the collective in flight
  /// The stop votes in flight beside the round (sent as 0 or 1, summed
  /// over the ranks) and their collective's handle, 0 once waited for.
  double stopVotes = 0;
  int64_t voteHandle = 0;
  bool votesArrived = false, agreedStop = false;
  int64_t roundInFlight = 0; ///< sharded: the round whose chain runs
  /// Sharded: outer_shard's input, output and the state it keeps in place
  /// (artifact state, saved with the optimizer's).
  int64_t shardElements = 0;
  Tensor *shardMean = nullptr, *shardOut = nullptr;
  Tensor *shardPrevAnchor = nullptr;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CO2ROUNDS_H
