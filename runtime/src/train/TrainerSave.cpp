//===- TrainerSave.cpp - The trainer's checkpoint saves ---------*- C++ -*-===//
//
// How a training job saves: replicated checkpoints (the ranks check that
// their replicas agree, then rank 0 writes, now or in the background with
// --save-async), and per-rank ones, where every rank writes its own part:
// CO2's, and a ZeRO artifact's shards (ZeroShards.h). Either way every
// rank learns whether the save failed.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/PerRankSave.h"
#include "checkpoint/Replicas.h"
#include "checkpoint/TensorParts.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Trainer.h"
#include "testhooks/TestHooks.h"
#include "train/StepObserver.h"
#include "train/SyncPolicy.h"

#include <memory>
#include <optional>
#include <ostream>

namespace loom::rt {

namespace {

/// What a log line says of a per-rank checkpoint with `ranks` ranks (0:
/// a replicated one).
std::string localModels(int ranks) {
  return ranks > 0 ? formatString(", %d ranks' local models", ranks) : "";
}

} // namespace

std::unique_ptr<StepObserver> Trainer::saveObserver(TrainerState &state,
                                                    SyncPolicy &sync) {
  // A local class: it saves through the trainer's private members.
  class SaveObserver final : public StepObserver {
  public:
    SaveObserver(Trainer &trainer, TrainerState &state, SyncPolicy &sync)
        : trainer(trainer), state(state), sync(sync) {}
    void onStep(const StepEvent &event) override {
      const TrainOptions &options = trainer.options;
      if (options.savePath.empty() || options.saveEvery <= 0 ||
          event.record.step % options.saveEvery != 0)
        return;
      trainer.save(state, sync);
      lastSaved = state.step;
    }
    // The last step is saved, and the last save done, before the job
    // reports success.
    void onEnd() override {
      if (!trainer.options.savePath.empty() && lastSaved != state.step)
        trainer.save(state, sync);
      if (trainer.options.saveAsync)
        trainer.agreeAfterRootWrote(trainer.finishBackgroundSave());
    }

  private:
    Trainer &trainer;
    TrainerState &state;
    SyncPolicy &sync;
    int64_t lastSaved = -1;
  };
  return std::make_unique<SaveObserver>(*this, state, sync);
}

void Trainer::save(TrainerState &state, SyncPolicy &sync) {
  if (sync.savesPerRank())
    return savePerRank(state, sync);
  artifact.downloadModel(); // a cuda artifact's params and state
  if (artifact.manifest().zeroSavesShards())
    return saveShards(state);
  // A tensor-parallel rank's parts, made whole (TensorParts.h).
  std::vector<std::unique_ptr<Tensor>> wholes;
  std::vector<Tensor *> params =
      wholeTensors(comm, artifact, artifact.params(), wholes);
  std::vector<Tensor *> optimizerState =
      wholeTensors(comm, artifact, artifact.state(), wholes);
  // A pipeline stage's, with the other stages'.
  const Manifest &all = artifact.manifestOfAllStages();
  params = tensorsOfAllStages(comm, artifact, params, all.params,
                              ArgRole::Param, wholes);
  optimizerState = tensorsOfAllStages(comm, artifact, optimizerState, all.state,
                                      ArgRole::State, wholes);
  // Ranks must agree on what they save: a check, then rank 0 writes.
  std::string failure = compareReplicas(comm, params, optimizerState);
  if (!failure.empty())
    failTogether(comm, failure);
  if (comm.isRoot()) {
    try {
      if (background) {
        // One save at a time: the previous one is done first, and its
        // failure stops the job here, on every rank.
        failure = finishBackgroundSave();
        if (failure.empty()) {
          background->start(options.savePath, params, optimizerState, state);
          log << "saving checkpoint " << options.savePath << " (step "
              << state.step << ") in the background\n";
        }
      } else {
        saveCheckpoint(options.savePath, params, optimizerState, state);
        log << "saved checkpoint " << options.savePath << " (step "
            << state.step << ")\n";
      }
    } catch (const std::exception &e) {
      failure = e.what();
    }
  }
  agreeAfterRootWrote(failure);
}

std::string Trainer::finishBackgroundSave() {
  if (!background)
    return "";
  BackgroundSave::Outcome done = background->finish();
  if (!done.saved)
    return "";
  if (!done.error.empty())
    return formatString("the checkpoint of step %lld written in the "
                        "background failed: %s",
                        static_cast<long long>(done.step), done.error.c_str());
  if (done.committed)
    log << formatString("saved checkpoint %s (step %lld%s; written in the "
                        "background in %.2f s)",
                        done.path.c_str(), static_cast<long long>(done.step),
                        localModels(done.localModels).c_str(), done.seconds)
        << "\n";
  return "";
}

void Trainer::agreeAfterRootWrote(const std::string &failure) {
  // The other ranks wait for rank 0's write, however long it takes; a rank
  // that dies meanwhile is still noticed, and rank 0 itself waits for the
  // others with the normal timeout.
  std::optional<ScopedCollectiveTimeout> unlimited;
  if (!comm.isRoot())
    unlimited.emplace(comm, 0);
  agreeOnFailure(comm, failure);
}

std::string Trainer::beginSaveOnEveryRank() {
  // One save at a time: every rank's writer of the previous one is done
  // before rank 0 empties the temp dir, and its failure stops the job here.
  if (background)
    agreeAfterRootWrote(finishBackgroundSave());
  // Rank 0 prepares the temp dir; then every rank writes its part and
  // rank 0 commits (PerRankSave.h), now or on the writer threads.
  std::string tmp, failure;
  try {
    tmp = comm.isRoot() ? beginPerRankCheckpoint(options.savePath)
                        : checkpointTempPath(options.savePath);
  } catch (const std::exception &e) {
    failure = e.what();
  }
  agreeOnFailure(comm, failure);
  return tmp;
}

void Trainer::saveShards(const TrainerState &state) {
  // Rank 0 writes the params of stages 1 and 2 for all, and each rank its
  // range of anything the artifact does not shard: what every rank holds
  // alike must be alike.
  std::string failure =
      compareReplicas(comm, replicatedTensors(artifact), "copy of the params");
  if (!failure.empty())
    failTogether(comm, failure);
  const std::string tmp = beginSaveOnEveryRank();
  if (background) {
    background->startZero(options.savePath, tmp, artifact, state, *writers);
    if (comm.isRoot())
      log << "saving checkpoint " << options.savePath << " (step " << state.step
          << ") in the background\n";
    return;
  }
  ZeroPart part{&artifact.manifest(), artifact.params(), artifact.state()};
  PerRankWrite wrote =
      writeZeroCheckpoint(comm, tmp, options.savePath, part, state);
  if (wrote.committed)
    log << "saved checkpoint " << options.savePath << " (step " << state.step
        << ")\n";
  agreeAfterRootWrote(wrote.error);
}

void Trainer::savePerRank(TrainerState &state, SyncPolicy &sync) {
  // What the policy has in flight is part of the state: finish it (a CO2
  // round's result waits for the next outer step as usual). Nothing is
  // queued afterwards, so the trainer's own collectives below cannot race
  // the comm thread.
  sync.quiesce();
  // Each rank writes a share of what every rank holds alike, so it must be
  // alike.
  PerRankTensors tensors = sync.checkpointTensors();
  skewAlikeForTests(state.step, comm.rank(), *tensors.alike.front());
  std::string failure =
      compareReplicas(comm, tensors.alike, sync.alikeDescription().c_str());
  if (!failure.empty())
    failTogether(comm, failure);
  const std::string tmp = beginSaveOnEveryRank();
  // Each rank writes its share of what all hold alike (compared above).
  tensors.alike = alikeShare(tensors.alike, comm.rank(), comm.size());
  if (background) {
    background->startPerRank(options.savePath, tmp, artifact, tensors, state,
                             *writers);
    if (comm.isRoot())
      log << "saving checkpoint " << options.savePath << " (step " << state.step
          << localModels(comm.size()) << ") in the background\n";
    return;
  }
  // The consensus model for export, averaged from a copy of the params.
  std::vector<std::unique_ptr<Tensor>> consensus;
  RankPart part{artifact.params(), tensors,
                copyTensors(artifact.params(), consensus)};
  PerRankWrite wrote =
      writePerRankCheckpoint(comm, tmp, options.savePath, part, state);
  if (wrote.committed)
    log << "saved checkpoint " << options.savePath << " (step " << state.step
        << localModels(comm.size()) << ")\n";
  agreeAfterRootWrote(wrote.error);
}

} // namespace loom::rt
