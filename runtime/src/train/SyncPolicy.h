//===- SyncPolicy.h - How the ranks synchronise around a step ---*- C++ -*-===//
//
// Internal to the runtime. The trainer's step loop (Trainer.cpp) knows no
// training scheme: it fills a batch, calls the compiled train_step and then
// asks a SyncPolicy what the step means for the ranks. The policy decides
// which collectives the trainer itself issues after a step, what loss the
// step reports, when the ranks agree to stop, and what a checkpoint holds
// per rank. docs/trainer.md describes the contract and the policies:
//
//   - PerStepSync: the compiled step synchronises the ranks itself (its
//     all-reduces, overlapped or not, are in the compiled code); after it the
//     trainer waits for them and averages the loss, with the stop votes on
//     the same reduction. Replicated checkpoints.
//   - CO2Sync: CO2 local updating (CO2Rounds.h); inner steps do not talk, an
//     outer step every local_steps steps whose collective stays in flight
//     across the next round. Per-rank checkpoints.
//
// Every rank runs the same policy with the same schedule, so the trainer's
// collectives are issued in the same order on every rank.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_TRAIN_SYNCPOLICY_H
#define LOOM_RUNTIME_SRC_TRAIN_SYNCPOLICY_H

#include "loom/runtime/Checkpoint.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

namespace loom::rt {

class Artifact;
class Communicator;

/// What a step amounts to once the ranks synchronised.
struct StepSync {
  /// The loss the step reports (the mean over ranks where they agree on
  /// one; this rank's own where they do not talk every step).
  double loss = NAN;
  /// A loss over a longer span that arrived with this step (CO2: the
  /// previous round's mean over ranks and steps), NaN if none.
  double roundLoss = NAN;
  /// The ranks agreed to stop after this step (StopRequest.h).
  bool stopping = false;
};

class SyncPolicy {
public:
  virtual ~SyncPolicy();

  /// The line the trainer prints before the first step ("": none).
  virtual std::string describe() const { return ""; }

  /// Whether each rank saves a checkpoint part of its own (every rank
  /// writes), rather than a replica that rank 0 writes alone.
  virtual bool savesPerRank() const { return false; }
  /// With savesPerRank(): what a checkpoint holds besides the params, valid
  /// after quiesce() (Checkpoint.h); the loader fills these tensors.
  virtual PerRankTensors checkpointTensors() { return {}; }
  /// With savesPerRank(): what the replicas compared before a save are,
  /// for the message when they differ.
  virtual std::string alikeDescription() const { return ""; }

  /// Before the first step: `resumed` says whether checkpointTensors() were
  /// loaded from a checkpoint (then resume from them) or not (start from
  /// the current parameters).
  virtual void begin(bool resumed) { (void)resumed; }

  /// After train_step of `step` returned: the synchronisation that is part
  /// of the step (and of its measured time). `rankLoss` is this rank's loss,
  /// `wantStop` its vote to stop.
  virtual void completeStep(int64_t step, double rankLoss, bool wantStop,
                            StepSync &sync) = 0;
  /// After the step was timed: the ranks agree on its loss and on stopping.
  virtual void agreeOnStep(double rankLoss, bool wantStop, StepSync &sync) = 0;

  /// Where the ranks agree on a stop only later than the next step: what
  /// rank 0 says when it hears a request at `step` ("": nothing).
  virtual std::string stopNote(int64_t step) const {
    (void)step;
    return "";
  }

  /// Before the trainer's own collectives between steps (an evaluation, a
  /// save): finishes whatever the policy has in flight.
  virtual void quiesce() {}
  /// After the last step: finishes everything; returns a better final loss
  /// than the last step's (NaN: none).
  virtual double finish() { return NAN; }

  /// Whether a non-finite loss on one rank reaches the others with the
  /// step's own agreement; if not, that rank must stop the job alone.
  virtual bool lossIsShared() const { return true; }
};

/// The policy the artifact was compiled for (its manifest says which).
std::unique_ptr<SyncPolicy> makeSyncPolicy(Artifact &artifact,
                                           Communicator &comm);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_TRAIN_SYNCPOLICY_H
