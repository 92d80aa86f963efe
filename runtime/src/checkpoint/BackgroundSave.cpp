//===- BackgroundSave.cpp - Checkpoints written while training goes on ----===//
//
// A thread per save: saves are minutes apart, so starting one costs nothing
// that matters, and a failed writer leaves nothing behind for the next.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/BackgroundSave.h"
#include "checkpoint/PerRankSave.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "support/Clock.h"

namespace loom::rt {

BackgroundSave::~BackgroundSave() { finish(); }

BackgroundSave::Outcome BackgroundSave::finish() {
  if (!writer.joinable())
    return {};
  writer.join();
  Outcome done = current;
  current = {};
  // The copies stay for the next save, which overwrites them in place.
  return done;
}

void BackgroundSave::checkIdle() const {
  // The copies of the save in flight are still being written.
  if (writer.joinable())
    fail("a checkpoint is still being written to %s; finish it first",
         current.path.c_str());
}

void BackgroundSave::launch(const std::string &path, const TrainerState &state,
                            int localModels,
                            std::function<void(Outcome &)> write) {
  current = {};
  current.saved = true;
  current.path = path;
  current.step = state.step;
  current.localModels = localModels;
  writer = std::thread([this, write = std::move(write)] {
    Clock::time_point started = Clock::now();
    try {
      write(current);
    } catch (const std::exception &e) {
      current.error = e.what();
    }
    current.seconds = secondsSince(started);
  });
}

void BackgroundSave::start(const std::string &path, Artifact &artifact,
                           const TrainerState &state) {
  start(path, artifact.params(), artifact.state(), state);
}

void BackgroundSave::start(const std::string &path,
                           const std::vector<Tensor *> &paramsNow,
                           const std::vector<Tensor *> &stateNow,
                           const TrainerState &state) {
  checkIdle();
  checkSaveTarget(path);
  std::vector<Tensor *> paramCopy = copyTensors(paramsNow, params);
  std::vector<Tensor *> stateCopy = copyTensors(stateNow, optimizerState);
  launch(path, state, /*localModels=*/0,
         [path, state, paramCopy, stateCopy](Outcome &outcome) {
           saveCheckpoint(path, paramCopy, stateCopy, state);
           outcome.committed = true;
         });
}

void BackgroundSave::startPerRank(const std::string &path,
                                  const std::string &tmpDir, Artifact &artifact,
                                  const PerRankTensors &tensors,
                                  const TrainerState &state,
                                  Communicator &writers) {
  checkIdle();
  // The params copy is written first, then averaged in place into the
  // consensus model: no third copy of the model.
  RankPart part;
  part.params = copyTensors(artifact.params(), params);
  part.tensors.optimizerState =
      copyTensors(tensors.optimizerState, optimizerState);
  part.tensors.rankState = copyTensors(tensors.rankState, rankState);
  part.tensors.alike = copyTensors(tensors.alike, alikeState);
  part.consensus = part.params;
  launch(path, state, static_cast<int>(state.ranks),
         [&writers, path, tmpDir, part, state](Outcome &outcome) {
           PerRankWrite wrote =
               writePerRankCheckpoint(writers, tmpDir, path, part, state);
           outcome.error = wrote.error;
           outcome.committed = wrote.committed;
         });
}

void BackgroundSave::startZero(const std::string &path,
                               const std::string &tmpDir, Artifact &artifact,
                               const TrainerState &state,
                               Communicator &writers) {
  checkIdle();
  ZeroPart part;
  part.manifest = &artifact.manifest();
  // Below stage 3 the params are whole on every rank, and rank 0 writes
  // them.
  if (artifact.manifest().zero.stage == 3 || writers.isRoot())
    part.params = copyTensors(artifact.params(), params);
  part.state = copyTensors(artifact.state(), optimizerState);
  launch(path, state, /*localModels=*/0,
         [&writers, path, tmpDir, part, state](Outcome &outcome) {
           PerRankWrite wrote =
               writeZeroCheckpoint(writers, tmpDir, path, part, state);
           outcome.error = wrote.error;
           outcome.committed = wrote.committed;
         });
}

} // namespace loom::rt
