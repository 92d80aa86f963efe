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
/// trainer.json's "per_rank" value: what the rank directories hold.
inline constexpr const char *kPerRankKind = "co2";

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
