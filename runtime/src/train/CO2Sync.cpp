//===- CO2Sync.cpp - CO2 local updating as a synchronisation policy -------===//
//
// Adapts CO2Rounds (the outer rounds and their collectives) to the trainer's
// SyncPolicy: the ranks do not talk within a round, so a step's loss is the
// rank's own and a stop request travels with the next outer round.
//
//===----------------------------------------------------------------------===//

#include "train/CO2Sync.h"
#include "loom/runtime/Error.h"
#include "train/CO2Rounds.h"

namespace loom::rt {

namespace {

class CO2Sync final : public SyncPolicy {
public:
  CO2Sync(Artifact &artifact, Communicator &comm) : rounds(artifact, comm) {}

  std::string describe() const override {
    const int64_t tau = rounds.localSteps();
    return formatString("co2: an outer step every %lld steps, its %s "
                        "overlapping the next %lld",
                        static_cast<long long>(tau),
                        rounds.sharded() ? "reduce-scatter, update of this "
                                           "rank's shard and all-gather"
                        : rounds.compressed()
                            ? "compressed averaging of the changes since "
                              "the anchor (a round is one compression step)"
                            : "all-reduce",
                        static_cast<long long>(tau));
  }

  bool savesPerRank() const override { return true; }
  PerRankTensors checkpointTensors() override {
    return rounds.checkpointTensors();
  }
  std::string alikeDescription() const override {
    return rounds.sharded() ? "CO2 round state (the last round's anchor)"
                            : "CO2 outer state (anchors, outer momentum, the "
                              "last round's mean)";
  }

  // The anchors come from the checkpoint, or from the starting weights.
  void begin(bool resumed) override {
    if (resumed)
      rounds.restore();
    else
      rounds.start();
  }

  // The round stays in flight: inner steps do not communicate and the
  // trainer reduces only at outer steps.
  void completeStep(int64_t step, double rankLoss, bool wantStop,
                    StepSync &sync) override {
    rounds.addLoss(rankLoss);
    if (rounds.isBoundary(step)) {
      sync.roundLoss = rounds.outerStep(step, wantStop);
      sync.stopping = rounds.stopAgreed();
    } else {
      rounds.poll();
    }
  }

  // The ranks' models differ within a round and the ranks do not talk: the
  // loss is this rank's; at an outer step, round_loss is the previous
  // round's mean over ranks and steps, which arrives with that round's
  // collective.
  void agreeOnStep(double rankLoss, bool, StepSync &sync) override {
    sync.loss = rankLoss;
  }

  // Votes travel with the next outer step's round and are read at the one
  // after it.
  std::string stopNote(int64_t step) const override {
    const int64_t tau = rounds.localSteps();
    const int64_t voted = (step + tau - 1) / tau * tau;
    return formatString("CO2 ranks agree on it at outer steps; stopping "
                        "after step %lld at the latest",
                        static_cast<long long>(voted + tau));
  }

  // The trainer's collectives must not race the communication thread; at an
  // outer step every rank then holds the new anchor, between them its local
  // model.
  void quiesce() override { rounds.complete(); }
  // The last round's mean loss arrives with its collective.
  double finish() override { return rounds.complete(); }

  // A rank's loss is its own, and the others, in local steps without
  // collectives, cannot learn of it.
  bool lossIsShared() const override { return false; }

private:
  CO2Rounds rounds;
};

} // namespace

std::unique_ptr<SyncPolicy> makeCO2Sync(Artifact &artifact,
                                        Communicator &comm) {
  return std::make_unique<CO2Sync>(artifact, comm);
}

} // namespace loom::rt
