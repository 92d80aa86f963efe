//===- TrainerSave.cpp - The trainer's checkpoint saves ---------*- C++ -*-===//
//
// How a training job saves: replicated checkpoints (the ranks check that
// their replicas agree, then rank 0 writes, now or in the background with
// --save-async) and CO2's per-rank ones (every rank writes its own part).
// Either way every rank learns whether the save failed.
//
//===----------------------------------------------------------------------===//

#include "CO2Rounds.h"
#include "Replicas.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Trainer.h"

#include <cstring>
#include <memory>
#include <optional>
#include <ostream>

namespace loom::rt {

void Trainer::save(TrainerState &state, CO2Rounds *co2) {
  if (co2)
    return savePerRank(state, *co2);
  artifact.downloadModel(); // a cuda artifact's params and state
  // Ranks must agree on what they save: a check, then rank 0 writes.
  std::string failure = compareReplicas(comm, artifact);
  if (!failure.empty())
    failTogether(comm, failure);
  if (comm.isRoot()) {
    try {
      if (background) {
        // One save at a time: the previous one is done first, and its
        // failure stops the job here, on every rank.
        failure = finishBackgroundSave();
        if (failure.empty()) {
          background->start(options.savePath, artifact, state);
          log << "saving checkpoint " << options.savePath << " (step "
              << state.step << ") in the background\n";
        }
      } else {
        saveCheckpoint(options.savePath, artifact, state);
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
  BackgroundSave::Outcome done = background->finish();
  if (!done.saved)
    return "";
  if (!done.error.empty())
    return formatString("the checkpoint of step %lld written in the "
                        "background failed: %s",
                        static_cast<long long>(done.step), done.error.c_str());
  log << formatString("saved checkpoint %s (step %lld; written in the "
                      "background in %.2f s)",
                      done.path.c_str(), static_cast<long long>(done.step),
                      done.seconds)
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

void Trainer::savePerRank(TrainerState &state, CO2Rounds &co2) {
  // The round in flight is part of the state: finish it (its result waits
  // for the next outer step as usual). Nothing is queued afterwards, so
  // the trainer's own collectives below cannot race the comm thread.
  co2.complete();
  std::string failure;
  if (!co2.sharded()) {
    std::vector<Tensor *> outer;
    for (Tensor *t : artifact.state())
      if (t->name().find(".co2_") != std::string::npos)
        outer.push_back(t);
    failure = compareReplicas(comm, outer,
                              "CO2 outer state (anchors, "
                              "outer momentum)");
    if (!failure.empty())
      failTogether(comm, failure);
  }
  // The consensus model for export: the mean of the ranks' models.
  std::vector<std::unique_ptr<Tensor>> consensus;
  std::vector<Tensor *> consensusList;
  for (const Tensor *p : artifact.params()) {
    consensus.push_back(std::make_unique<Tensor>(p->name(), ArgRole::Param,
                                                 p->shape(), p->dtype()));
    std::memcpy(consensus.back()->data(), p->data(), p->byteSize());
    comm.allReduce(consensus.back()->data(), p->numElements(), p->dtype(),
                   ReduceOp::Mean);
    consensusList.push_back(consensus.back().get());
  }
  // Rank 0 prepares the temp dir, every rank writes its part, rank 0
  // indexes and commits; each stage ends with every rank agreeing.
  std::string tmp;
  try {
    tmp = comm.isRoot() ? beginPerRankCheckpoint(options.savePath)
                        : checkpointTempPath(options.savePath);
  } catch (const std::exception &e) {
    failure = e.what();
  }
  agreeOnFailure(comm, failure);
  try {
    writeRankCheckpointFiles(tmp, comm.rank(), artifact, co2.stateTensors());
  } catch (const std::exception &e) {
    failure = e.what();
  }
  agreeOnFailure(comm, failure);
  if (comm.isRoot()) {
    try {
      finishPerRankCheckpoint(tmp, artifact, consensusList, state);
      commitCheckpoint(tmp, options.savePath);
      log << "saved checkpoint " << options.savePath << " (step " << state.step
          << ", " << comm.size() << " ranks' local models)\n";
    } catch (const std::exception &e) {
      failure = e.what();
    }
  }
  agreeAfterRootWrote(failure);
}

} // namespace loom::rt
