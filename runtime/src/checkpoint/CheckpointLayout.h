//===- CheckpointLayout.h - The files of a checkpoint directory -*- C++ -*-===//
//
// Internal to the runtime: the names and versions that saving
// (Checkpoint.cpp) and loading (CheckpointLoad.cpp) share; Checkpoint.h
// describes the layout.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CHECKPOINTLAYOUT_H
#define LOOM_RUNTIME_SRC_CHECKPOINTLAYOUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

inline constexpr const char *kModelFile = "model.safetensors";
inline constexpr const char *kOptimizerFile = "optimizer.safetensors";
inline constexpr const char *kTrainerFile = "trainer.json";
/// Per-rank checkpoints: rank-local tensors beyond params and state.
inline constexpr const char *kRankStateFile = "co2.safetensors";
/// Per-rank checkpoints from version 2: a rank's share of what every rank
/// holds alike.
inline constexpr const char *kAlikeFile = "outer.safetensors";
inline constexpr int kAlikeFileVersion = 2;
/// What replicated checkpoints are written as (per-rank ones: the current).
inline constexpr int kReplicatedFormatVersion = 1;
/// trainer.json's "per_rank" value: what the rank directories hold, a
/// CO2 rank's own model and state or a ZeRO rank's shards (ZeroShards.h).
inline constexpr const char *kPerRankKind = "co2";
inline constexpr const char *kZeroKind = "zero";

inline std::string rankDir(int rank) { return "rank-" + std::to_string(rank); }

/// A rank's files of a per-rank checkpoint of `version`, relative to the
/// checkpoint directory: model, optimizer, round state, and from version 2
/// its share of the alike state.
inline std::vector<std::string> rankFiles(int rank, int64_t version) {
  std::string dir = rankDir(rank) + "/";
  std::vector<std::string> names{dir + kModelFile, dir + kOptimizerFile,
                                 dir + kRankStateFile};
  if (version >= kAlikeFileVersion)
    names.push_back(dir + kAlikeFile);
  return names;
}

/// A rank's files of a ZeRO checkpoint of `stage`, relative to the
/// checkpoint directory: its shard of the optimizer state, and at stage 3
/// of the params. (Both are names rankFiles has too.)
inline std::vector<std::string> zeroRankFiles(int rank, int64_t stage) {
  std::string dir = rankDir(rank) + "/";
  std::vector<std::string> names{dir + kOptimizerFile};
  if (stage == 3)
    names.push_back(dir + kModelFile);
  return names;
}

inline std::string trimSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

/// Where a save moves the previous checkpoint while it swaps in the new.
inline std::string oldPath(const std::string &path) {
  return trimSlashes(path) + ".old";
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CHECKPOINTLAYOUT_H
