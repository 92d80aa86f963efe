//===- ZeroShards.h - A ZeRO artifact's checkpoints, per rank ---*- C++ -*-===//
//
// Internal to the runtime. Each rank of a ZeRO artifact holds a slice of
// every sharded tensor (Manifest.h: ZeroSpec): of the optimizer state, and
// at stage 3 of the params too. Its checkpoints keep them so, written by
// every rank at once (docs/zero.md):
//
//   model.safetensors              the whole params, as plain data
//                                  parallelism saves them (rank 0; at stage
//                                  3 gathered one param at a time)
//   rank-<r>/optimizer.safetensors rank r's shard of every state tensor
//   rank-<r>/model.safetensors     stage 3: rank r's shard of every param
//   trainer.json                   "per_rank": "zero", "zero": {stage,
//                                  ranks, the whole shape of every tensor
//                                  the shards hold}, and the sha256 of
//                                  every file (each rank hashes its own)
//
// Rank r's shard of a tensor of n elements saved by N ranks is elements
// [r·s, r·s + s) of its row-major flattening, s = ceil(n / N), zeros past
// n: the slice that rank holds. Each shard's safetensors metadata stamps
// it with the save (stage, ranks, rank, step, and the sha256 of the model
// trainer.json records), so a shard of another checkpoint or model is
// named as such. A load reassembles each rank's part of every tensor from
// the shards it overlaps (shardPieces), whatever rank count and stage the
// loading artifact has, plain data parallelism and one rank included.
// PerRankSave.h's writeZeroCheckpoint runs a save; ZeroLoad.cpp loads.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CHECKPOINT_ZEROSHARDS_H
#define LOOM_RUNTIME_SRC_CHECKPOINT_ZEROSHARDS_H

#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt {

class Artifact;
class Communicator;
class Tensor;

/// What one rank of a ZeRO job writes of a checkpoint: its tensors as the
/// artifact holds them (or copies of them, for a background save).
struct ZeroPart {
  const Manifest *manifest = nullptr;
  /// The params: whole at stages 1 and 2, where only rank 0's are written
  /// (the other ranks may leave this empty); slices at stage 3.
  std::vector<Tensor *> params;
  /// The optimizer state.
  std::vector<Tensor *> state;
};

/// A run of elements that part of a tensor takes from one rank's shard.
struct ShardPiece {
  /// Whose shard.
  int64_t rank = 0;
  /// Where the run starts in the shard.
  int64_t from = 0;
  /// Where it starts in the part.
  int64_t at = 0;
  int64_t count = 0;
};

/// Where elements [first, first + count) of a tensor of `elements` elements
/// lie in its shards over `ranks` ranks: in order, those below `elements`
/// only (the rest of the part is padding, zeros).
std::vector<ShardPiece> shardPieces(int64_t elements, int64_t ranks,
                                    int64_t first, int64_t count);

/// What a shard's metadata says of the save that wrote it.
struct ShardStamp {
  int64_t stage = 0;
  int64_t ranks = 0;
  int64_t rank = 0;
  int64_t step = 0;
  /// modelDigest of the params.
  std::string model;

  /// As safetensors metadata (with "format": "pt").
  std::map<std::string, std::string> metadata() const;
  /// From safetensors metadata; nullopt unless every field is there.
  static std::optional<ShardStamp>
  parse(const std::map<std::string, std::string> &metadata);
};

/// Why a shard stamped `found` (nullopt: not stamped) is not the one
/// `expected` describes, as a clause ("it was saved at step 8, ..."); ""
/// if it is.
std::string shardMismatch(const std::optional<ShardStamp> &found,
                          const ShardStamp &expected);

/// The sha256 of trainer.json's "model" (modelFingerprint) as JSON text,
/// which every shard records.
std::string modelDigest(const nlohmann::json &model);

/// The artifact's whole params as checkpoints hold them (names, whole
/// shapes, dtypes; no data).
std::vector<SafeTensorView> wholeParams(const Manifest &manifest);

/// trainer.json's "zero" for a save of `manifest`'s artifact.
nlohmann::json zeroRecord(const Manifest &manifest);

/// The tensors every rank of the ZeRO artifact holds alike, which a save
/// takes from one rank: the params at stages 1 and 2, and any tensor the
/// artifact does not shard.
std::vector<Tensor *> replicatedTensors(Artifact &artifact);

/// Rank `rank`'s files of a ZeRO checkpoint, in `tmpDir`: its shards,
/// stamped (writeRankFiles), whose records it returns; on rank 0 at stages
/// 1 and 2 also model.safetensors, from its whole params.
std::vector<FileRecord> writeZeroRankFiles(const std::string &tmpDir, int rank,
                                           const ZeroPart &part,
                                           const TrainerState &state);

/// Stage 3, collective: every param gathered whole in turn, rank 0 writing
/// each into the model file `path` as it arrives, unless `error` holds its
/// failure already (then it only gathers); a write's failure goes into
/// `error`. Every rank takes part in every gather whatever failed.
void writeGatheredModel(Communicator &comm, const ZeroPart &part,
                        const std::string &path, std::string &error);

/// Loads the ZeRO checkpoint in `dir` (its trainer.json `trainer`, and the
/// trainer state `state` read from it) into rank `rank`'s tensors of
/// `artifact`, whatever its rank count and stage: every rank checks that
/// every shard is there and stamped as this checkpoint's, then verifies
/// (sha256) and reads the shards its part of each tensor lies in. The
/// params come from the shards of a stage-3 checkpoint, else from its
/// model.safetensors, which `loadWhole` loads given its path. Returns a
/// note when the shards were resharded ("" if not). Throws Error naming
/// the file and the first problem.
std::string
loadZeroCheckpoint(const std::string &dir, const nlohmann::json &trainer,
                   const TrainerState &state, Artifact &artifact, int rank,
                   const std::function<void(const std::string &)> &loadWhole);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CHECKPOINT_ZEROSHARDS_H
