//===- BackgroundSave.cpp - Checkpoints written while training goes on ----===//
//
// A thread per save: saves are minutes apart, so starting one costs nothing
// that matters, and a failed writer leaves nothing behind for the next.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/BackgroundSave.h"
#include "Clock.h"
#include "PerRankSave.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Error.h"

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

void BackgroundSave::start(const std::string &path, Artifact &artifact,
                           const TrainerState &state) {
  if (writer.joinable())
    fail("a checkpoint is still being written to %s; finish it first",
         current.path.c_str());
  checkSaveTarget(path);
  std::vector<Tensor *> paramCopy = copyTensors(artifact.params(), params);
  std::vector<Tensor *> stateCopy =
      copyTensors(artifact.state(), optimizerState);
  current = {};
  current.saved = true;
  current.path = path;
  current.step = state.step;
  writer = std::thread([this, path, state, paramCopy, stateCopy] {
    Clock::time_point started = Clock::now();
    try {
      saveCheckpoint(path, paramCopy, stateCopy, state);
      current.committed = true;
    } catch (const std::exception &e) {
      current.error = e.what();
    }
    current.seconds = secondsSince(started);
  });
}

void BackgroundSave::startPerRank(const std::string &path,
                                  const std::string &tmpDir, Artifact &artifact,
                                  const std::vector<Tensor *> &extra,
                                  const TrainerState &state,
                                  Communicator &writers) {
  if (writer.joinable())
    fail("a checkpoint is still being written to %s; finish it first",
         current.path.c_str());
  // The params copy is written first, then averaged in place into the
  // consensus model: no third copy of the model.
  RankPart part;
  part.params = copyTensors(artifact.params(), params);
  part.optimizerState = copyTensors(artifact.state(), optimizerState);
  part.extra = copyTensors(extra, extraState);
  part.consensus = part.params;
  current = {};
  current.saved = true;
  current.path = path;
  current.step = state.step;
  current.localModels = static_cast<int>(state.ranks);
  writer = std::thread([this, &writers, path, tmpDir, part, state] {
    Clock::time_point started = Clock::now();
    try {
      PerRankWrite wrote =
          writePerRankCheckpoint(writers, tmpDir, path, part, state);
      current.error = wrote.error;
      current.committed = wrote.committed;
    } catch (const std::exception &e) {
      current.error = e.what(); // a collective of the writers failed
    }
    current.seconds = secondsSince(started);
  });
}

} // namespace loom::rt
