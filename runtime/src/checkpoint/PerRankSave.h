//===- PerRankSave.h - Writing a per-rank checkpoint ------------*- C++ -*-===//
//
// Internal to the runtime. A CO2 job's ranks train models of their own, and
// a ZeRO job's ranks each hold a slice of the optimizer state (ZeroShards.h),
// so each rank writes its part of a checkpoint (Checkpoint.h) and rank 0
// commits it once every part is there. The same sequence runs on the
// training thread (a synchronous save) and on every rank's writer thread
// over a communicator of its own (--save-async, BackgroundSave.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_PERRANKSAVE_H
#define LOOM_RUNTIME_SRC_PERRANKSAVE_H

#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace loom::rt {

class Communicator;
class Tensor;
struct ZeroPart;

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

/// Collective on `comm`, after rank 0 created `tmpDir`: every rank writes
/// its shards (ZeroShards.h) and hashes them, rank 0 the whole params (at
/// stage 3 gathered one at a time, every rank taking part); then, as
/// above, the ranks exchange their outcomes and records and rank 0 commits.
/// Throws Error on every rank, before any collective, if `comm` is not the
/// job the artifact splits its tensors over (World.h: checkZeroJob).
PerRankWrite writeZeroCheckpoint(Communicator &comm, const std::string &tmpDir,
                                 const std::string &path, const ZeroPart &part,
                                 const TrainerState &state);

/// One file of a rank's part of a per-rank checkpoint.
struct RankFile {
  /// Relative to the checkpoint directory (CheckpointLayout.h).
  std::string name;
  std::vector<SafeTensorView> tensors;
  std::map<std::string, std::string> metadata;
};

/// Writes rank `rank`'s `files` into `tmpDir` (creating its directory),
/// syncs them and returns their records, hashed here. Counts as a save for
/// LOOM_TEST_CRASH_IN_SAVE (Checkpoint.h), whose "write" point is after
/// the first file.
std::vector<FileRecord> writeRankFiles(const std::string &tmpDir, int rank,
                                       const std::vector<RankFile> &files);

/// `tensors` as safetensors views of their data.
std::vector<SafeTensorView> tensorViews(const std::vector<Tensor *> &tensors);

/// trainer.json's "model": the name, shape and dtype of each param
/// (`params`' data is not read).
nlohmann::json modelFingerprint(const std::vector<SafeTensorView> &params);

/// Rank 0's end of a ZeRO save, after it wrote model.safetensors and every
/// rank its shards (`rankRecords`): checks that every rank's files are there
/// as their writers said (as finishPerRankCheckpoint does) and writes
/// trainer.json with "per_rank": "zero", the `zero` record (ZeroShards.h)
/// and `model` (modelFingerprint of the whole params).
void finishZeroCheckpoint(const std::string &tmpDir,
                          const nlohmann::json &model,
                          const nlohmann::json &zero, const TrainerState &state,
                          const std::vector<FileRecord> &rankRecords);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_PERRANKSAVE_H
