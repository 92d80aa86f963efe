//===- SyncPolicy.cpp - Per-step synchronisation and the factory ---------===//
//
// PerStepSync, the policy of every artifact whose compiled step does its own
// collectives (plain and overlapped data parallelism, one rank), and the
// choice of a policy from the manifest. SyncPolicy.h says what a policy is.
//
//===----------------------------------------------------------------------===//

#include "train/SyncPolicy.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/abi.h"
#include "train/CO2Sync.h"

namespace loom::rt {

SyncPolicy::~SyncPolicy() = default;

namespace {

class PerStepSync final : public SyncPolicy {
public:
  /// `flush`: the artifact's zo_flush entry (zeroth-order training with
  /// offloaded parameters, docs/zo.md), or null.
  PerStepSync(Communicator &comm, Entry *flush) : comm(comm), flush(flush) {}

  void completeStep(int64_t, double, bool, StepSync &) override {
    // Compiled code waits for what it starts; this also keeps the
    // trainer's own reduction below out of the communication thread's way.
    waitForAllCollectives();
  }

  void agreeOnStep(double rankLoss, bool wantStop, StepSync &sync) override {
    // The loss of the global batch is the mean over ranks; the stop votes
    // ride on the reduction every step runs.
    double reduced[2] = {rankLoss, wantStop ? 1.0 : 0.0};
    comm.allReduceSum(reduced, 2);
    sync.loss = reduced[0] / comm.size();
    sync.stopping = reduced[1] > 0;
  }

  /// A step with offloaded parameters leaves its update for the next one
  /// to apply as it uploads them; whatever reads the parameters between
  /// steps (an evaluation, a save, the end) needs it applied first.
  void quiesce() override {
    if (flush)
      flush->call();
  }
  double finish() override {
    quiesce();
    return NAN;
  }

private:
  Communicator &comm;
  Entry *flush;
};

} // namespace

std::unique_ptr<SyncPolicy> makeSyncPolicy(Artifact &artifact,
                                           Communicator &comm) {
  if (artifact.manifest().co2.localSteps > 0)
    return makeCO2Sync(artifact, comm);
  return std::make_unique<PerStepSync>(
      comm, artifact.hasEntry(LOOM_ZO_FLUSH_ENTRY)
                ? &artifact.entry(LOOM_ZO_FLUSH_ENTRY)
                : nullptr);
}

} // namespace loom::rt
