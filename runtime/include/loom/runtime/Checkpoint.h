//===- Checkpoint.h - Atomic training checkpoints ---------------*- C++ -*-===//
//
// A checkpoint is a directory:
//   model.safetensors      params (manifest names, shapes and dtypes)
//   optimizer.safetensors  optimizer state tensors
//   trainer.json           step, data position, seed, shuffle, the rank
//                          count, the rows of a global batch, the model
//                          fingerprint and the sha256 of both files
//
// Saving is atomic: files go into a sibling temp dir (fsynced), then
// PATH -> PATH.old, tmp -> PATH, remove PATH.old. At every instant PATH is
// the complete old or new checkpoint, or PATH is absent and PATH.old is the
// complete old one, and loading falls back to PATH.old in that case. A save
// killed before the swap leaves only a stray temp dir, which is never read.
//
// In a multi-rank job only rank 0 saves (data-parallel ranks hold identical
// models) and every rank loads and verifies the checkpoint itself.
//
// A ZeRO artifact's ranks hold slices of the optimizer state (and at stage
// 3 of the params): each rank writes its shards into rank-<r>/ of the temp
// dir and rank 0 the whole params into model.safetensors, with
// "per_rank": "zero" in trainer.json (format version 2); any rank count and
// stage loads it, each rank reassembling its slices from the shards
// (src/checkpoint/ZeroShards.h has the layout).
//
// Per-rank checkpoints (CO2, whose ranks train different local models
// between outer steps) add one directory per rank, written by that rank
// into the same temp dir before rank 0 commits it (so PATH must be on a
// filesystem every rank sees):
//   model.safetensors              the consensus model: the mean over ranks
//                                  of the params (loads into PyTorch, and
//                                  with --load PATH/model.safetensors)
//   rank-<r>/model.safetensors     rank r's params
//   rank-<r>/optimizer.safetensors rank r's optimizer state
//   rank-<r>/co2.safetensors       rank r's own CO2 round state
//   rank-<r>/outer.safetensors     rank r's share (alikeShare) of the CO2
//                                  state every rank holds alike (CO2Rounds.h:
//                                  anchors, outer momentum, the last round's
//                                  mean): kept once, the ranks split writing
//                                  it
//   trainer.json                   as above, with "per_rank": "co2" and the
//                                  sha256 of every file of every rank (each
//                                  rank hashes its own: PerRankSave.h)
// Each rank resumes from its own directory and every rank's share of the
// outer state. Format version 2; version 1 (which replicated checkpoints
// still write) kept all of the outer state in every rank's
// optimizer.safetensors and co2.safetensors, and loads as before.
//
// Test hook: LOOM_TEST_CRASH_IN_SAVE=N kills the process with SIGKILL in its
// N-th save after half the temp dir is written (model.safetensors only);
// LOOM_TEST_CRASH_IN_SAVE=N:swap right after PATH was moved to PATH.old. The
// lit tests use it to show that a crash at those points loses nothing.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_CHECKPOINT_H
#define LOOM_RUNTIME_CHECKPOINT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt {

class Artifact;
class Tensor;

/// The newest format this runtime reads and writes (per-rank checkpoints,
/// CO2's and ZeRO's; replicated ones are still written as version 1, which
/// it reads too).
constexpr int kCheckpointFormatVersion = 2;

/// Where a run stands, beyond the tensors.
struct TrainerState {
  /// Steps taken so far (the next step is step + 1).
  int64_t step = 0;
  /// Global batches consumed so far (the next batch is dataPosition).
  int64_t dataPosition = 0;
  uint64_t seed = 0;
  bool shuffle = false;
  /// The --data spec, informational.
  std::string data;
  /// Ranks of the job that saved it. A global batch is ranks x batch rows,
  /// so the data position only means the same data for the same rank count.
  /// Checkpoints without the field were saved by one rank.
  int64_t ranks = 1;
  /// Rows of one global batch (ranks x each rank's batch): with it a job
  /// of another rank count can find the data position in its own global
  /// batches. 0: unknown (checkpoints that predate the field).
  int64_t rowsPerStep = 0;
};

/// Saves the artifact's params and state plus `state` to directory `path`
/// atomically (see above). Throws Error on I/O failure.
void saveCheckpoint(const std::string &path, Artifact &artifact,
                    const TrainerState &state);
/// The same for tensors named and shaped like the artifact's params and
/// state (a copy of them: BackgroundSave.h).
void saveCheckpoint(const std::string &path,
                    const std::vector<Tensor *> &params,
                    const std::vector<Tensor *> &optimizerState,
                    const TrainerState &state);

/// Throws Error if saveCheckpoint(path) would have to replace something that
/// is not a checkpoint; lets the trainer refuse a bad --save before training.
void checkSaveTarget(const std::string &path);
/// checkSaveTarget, and also throws Error if no directory can be created
/// where the save would create PATH.tmp (a read-only or missing place).
void checkCanSaveTo(const std::string &path);

/// The two halves of saveCheckpoint, exposed so tests can simulate a save
/// that dies before the swap.
void writeCheckpointFiles(const std::string &dir, Artifact &artifact,
                          const TrainerState &state);
void writeCheckpointFiles(const std::string &dir,
                          const std::vector<Tensor *> &params,
                          const std::vector<Tensor *> &optimizerState,
                          const TrainerState &state);
void commitCheckpoint(const std::string &tmpDir, const std::string &path);
/// The temp dir saveCheckpoint writes into before the swap.
std::string checkpointTempPath(const std::string &path);

/// What trainer.json records of one file, by its path relative to the
/// checkpoint directory.
struct FileRecord {
  std::string name;
  /// Lower-case hex, 64 characters.
  std::string sha256;
  uint64_t bytes = 0;
};

/// A CO2 rank's tensors beyond its params, by where a per-rank checkpoint
/// keeps them.
struct PerRankTensors {
  /// The rank's own artifact state (rank-<r>/optimizer.safetensors): the
  /// artifact's state less what is in `alike`.
  std::vector<Tensor *> optimizerState;
  /// The rank's own tensors beyond params and state
  /// (rank-<r>/co2.safetensors).
  std::vector<Tensor *> rankState;
  /// What every rank holds alike, artifact state or not: all of it to
  /// load; to write, this rank's share (alikeShare) in its outer.safetensors.
  std::vector<Tensor *> alike;
};

/// Rank `rank`'s share of `alike` of `ranks` ranks: a contiguous run of
/// about 1/ranks of the bytes, so that the ranks write about as much each.
std::vector<Tensor *> alikeShare(const std::vector<Tensor *> &alike, int rank,
                                 int ranks);

/// Per-rank checkpoints, in the order a job calls them: rank 0 empties the
/// temp dir (beginPerRankCheckpoint returns it), every rank writes and
/// hashes its own files (writeRankCheckpointFiles returns their records;
/// `tensors.alike` is the rank's share), then rank 0 writes the consensus model
/// and trainer.json with every rank's records (finishPerRankCheckpoint, which
/// checks that every rank's files are there with the sizes recorded) and
/// commits. Each rank hashes its own files, so the commit does not read N
/// ranks' files on rank 0. The consensus tensors are named and shaped like
/// the params.
std::string beginPerRankCheckpoint(const std::string &path);
std::vector<FileRecord>
writeRankCheckpointFiles(const std::string &tmpDir, int rank,
                         const std::vector<Tensor *> &params,
                         const PerRankTensors &tensors);
void finishPerRankCheckpoint(const std::string &tmpDir,
                             const std::vector<Tensor *> &consensus,
                             const TrainerState &state,
                             const std::vector<FileRecord> &rankRecords);

struct LoadResult {
  /// True for a directory checkpoint (params, state and trainer state were
  /// restored; per-rank: this rank's and the outer state); false for a
  /// weights-only .safetensors file (params restored, state untouched, trainer
  /// state zero).
  bool full = false;
  TrainerState state;
  /// The path actually read (PATH or PATH.old).
  std::string path;
  /// Human-readable remarks (fallback to PATH.old, ignored tensors, dtype
  /// conversions, ZeRO shards resharded for another rank count or stage),
  /// empty if none.
  std::string note;
};

/// Where a job goes on in the data of checkpoint `loaded`, saved by a job of
/// another rank count, and a note that says so.
struct DataResume {
  /// In the new job's global batches.
  int64_t position = 0;
  std::string note;
};

/// The replicated model and optimizer state of a checkpoint load under any
/// rank count; its data position does not. Every row has a global index
/// (Data.h: globalRow), so the saved job consumed its position times its
/// rows per step, and a job of `ranks` ranks and `rowsPerStep` rows goes
/// on at the first of its batches that starts at or after them (exactly
/// there for equal global batches; otherwise the rows up to that boundary
/// are skipped, never repeated). Throws Error naming the fix where the
/// state cannot move: a CO2 job's checkpoint (`co2`: its ranks hold models
/// of their own), one without rows_per_step, or arithmetic that overflows.
DataResume resumeUnderOtherRanks(const LoadResult &loaded, int ranks,
                                 int64_t rowsPerStep, bool co2,
                                 bool externalLauncher);

/// Loads `path` into the artifact: a directory is a full checkpoint (sha256s
/// verified, fingerprint must match), a file is a safetensors weights file
/// (every param by name and shape; F32/F64 converted; extras ignored).
/// A ZeRO artifact's sharded tensors (state; params at stage 3) take rank
/// `rank`'s slice of the checkpoint's whole ones (zeros past their end),
/// and a ZeRO checkpoint's shards are reassembled into whatever slices (or
/// whole tensors) rank `rank` of the artifact holds. A
/// per-rank checkpoint loads rank `rank`'s files and the outer state into
/// `perRank`'s tensors (which must be given exactly then; nothing is
/// loaded when the checkpoint has fewer ranks, the caller reports the rank
/// count). Throws Error naming the file and the first problem.
LoadResult loadCheckpoint(const std::string &path, Artifact &artifact,
                          int rank = 0,
                          const PerRankTensors *perRank = nullptr);

/// What loadCheckpoint(path) would resume from, read without an artifact
/// (the launcher's restarts): the path it would read (PATH or PATH.old), the
/// step (0 for a weights file) and trainer.json as written (a later save
/// changes it). nullopt when there is nothing at PATH or PATH.old; throws
/// Error for a corrupted trainer.json.
struct CheckpointPeek {
  std::string path;
  int64_t step = 0;
  std::string trainerJson;
};
std::optional<CheckpointPeek> peekCheckpoint(const std::string &path);

/// The model alone: a .safetensors file, or a checkpoint directory's
/// model.safetensors (a per-rank CO2 checkpoint's is the ranks' mean), with
/// the same fallback to PATH.old as loadCheckpoint. Optimizer state and
/// trainer state are untouched. A ZeRO-3 artifact's params take rank
/// `rank`'s slice, as in loadCheckpoint.
LoadResult loadModelWeights(const std::string &path, Artifact &artifact,
                            int rank = 0);

} // namespace loom::rt

#endif // LOOM_RUNTIME_CHECKPOINT_H
