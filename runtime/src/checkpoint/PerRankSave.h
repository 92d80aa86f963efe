//===- PerRankSave.h - Writing a per-rank checkpoint ------------*- C++ -*-===//
//
// Internal to the runtime. A CO2 job's ranks train models of their own, so
// each writes its part of a checkpoint (Checkpoint.h) and rank 0 commits it
// once every part is there. The same sequence runs on the training thread
// (a synchronous save) and on every rank's writer thread over a
// communicator of its own (--save-async, BackgroundSave.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_PERRANKSAVE_H
#define LOOM_RUNTIME_SRC_PERRANKSAVE_H

#include "loom/runtime/Checkpoint.h"

#include <string>
#include <vector>

namespace loom::rt {

class Communicator;
class Tensor;

/// What became of one rank's writes.
struct PerRankWrite {
  /// This rank's own failure (its part, or on rank 0 the commit); "" if
  /// none. Another rank's failure leaves it empty: that rank reports it.
  std::string error;
  /// Rank 0: the checkpoint was committed to its path.
  bool committed = false;
};

/// What one rank writes of a per-rank checkpoint.
struct RankPart {
  std::vector<Tensor *> params;
  /// The rest (Checkpoint.h), with this rank's share of the alike state.
  PerRankTensors tensors;
  /// Averaged over the ranks in place into the consensus model; may be
  /// `params` itself, which are written first.
  std::vector<Tensor *> consensus;
};

/// Collective on `comm`, after rank 0 created `tmpDir`
/// (beginPerRankCheckpoint): every rank writes its part there and hashes
/// it, then the ranks average the consensus model and exchange whether
/// each part was written and its files' records; if every part was, rank 0
/// writes the consensus model and trainer.json and commits to `path`. A
/// failed write still takes part in every collective, so the ranks never
/// mismatch.
PerRankWrite writePerRankCheckpoint(Communicator &comm,
                                    const std::string &tmpDir,
                                    const std::string &path,
                                    const RankPart &part,
                                    const TrainerState &state);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_PERRANKSAVE_H
