//===- CheckpointLoad.cpp - Loading training checkpoints --------*- C++ -*-===//
//
// Verify the sizes and sha256s recorded in trainer.json before reading any
// tensor, then copy each tensor by name, checking shapes: a checkpoint of
// another model, or saved with another optimizer, is refused naming the
// tensor. Checkpoint.h describes the layout and its versions. A ZeRO
// artifact's sharded tensors (state, and at stage 3 params) load each
// rank's slice of the whole tensors; a ZeRO checkpoint's shards are
// ZeroLoad.cpp's to reassemble (ZeroShards.h).
//
//===----------------------------------------------------------------------===//

#include "checkpoint/CheckpointLayout.h"
#include "checkpoint/CheckpointRead.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/SafeTensors.h"
#include "loom/runtime/Sha256.h"
#include "loom/runtime/abi.h"
#include "support/FileUtil.h"
#include "support/JsonParse.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;
using nlohmann::json;

namespace loom::rt {

std::string checkFileSize(const std::string &dir, const json &files,
                          const std::string &name,
                          const std::string &trainerPath) {
  std::string path = dir + "/" + name;
  auto entry = files.find(name);
  if (entry == files.end() || !entry->is_object() ||
      !entry->contains("sha256") || !(*entry)["sha256"].is_string() ||
      !entry->contains("bytes") || !(*entry)["bytes"].is_number_unsigned())
    fail("%s: files.%s: missing sha256/bytes record", trainerPath.c_str(),
         name.c_str());
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    fail("checkpoint file %s is missing", path.c_str());
  uint64_t expectedBytes = (*entry)["bytes"].get<uint64_t>();
  uint64_t actualBytes = fs::file_size(path, error);
  if (error)
    fail("cannot read %s: %s", path.c_str(), error.message().c_str());
  if (actualBytes != expectedBytes)
    fail("checkpoint file %s is %llu bytes but %llu were written (truncated "
         "or modified)",
         path.c_str(), static_cast<unsigned long long>(actualBytes),
         static_cast<unsigned long long>(expectedBytes));
  return (*entry)["sha256"].get<std::string>();
}

void verifyFile(const std::string &dir, const json &files,
                const std::string &name, const std::string &trainerPath) {
  const std::string expected = checkFileSize(dir, files, name, trainerPath);
  const std::string path = dir + "/" + name;
  const std::string actual = sha256FileHex(path);
  if (actual != expected)
    fail("checkpoint file %s is corrupted: its sha256 %s does not match %s "
         "recorded in %s",
         path.c_str(), actual.c_str(), expected.c_str(), kTrainerFile);
}

// An integer field in [min, max]: a negative data position indexed before
// the data file, and a step near 2^63 wrapped around when added to.
int64_t integerField(const json &object, const char *key,
                     const std::string &source, int64_t min, int64_t max,
                     const char *maxText) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer())
    fail("%s: field '%s' is missing or not an integer", source.c_str(), key);
  // Above INT64_MAX, nlohmann keeps it unsigned and get<int64_t> wraps.
  const bool tooLarge = it->is_number_unsigned() &&
                        it->get<uint64_t>() > static_cast<uint64_t>(max);
  if (tooLarge || it->get<int64_t>() < min || it->get<int64_t>() > max)
    fail("%s: field '%s' must be an integer from %lld to %s, got %s",
         source.c_str(), key, static_cast<long long>(min), maxText,
         it->dump().c_str());
  return it->get<int64_t>();
}

void copyElements(Tensor &tensor, int64_t at, const SafeTensorView &view,
                  int64_t from, int64_t count, const std::string &source) {
  if (view.dtype != tensor.dtype() &&
      (!view.dtype || !isFloat(*view.dtype) || !isFloat(tensor.dtype())))
    fail("%s: tensor '%s' has dtype %s but the artifact expects %s (only F32 "
         "and F64 can be loaded)",
         source.c_str(), view.name.c_str(), view.dtypeName.c_str(),
         dtypeSafeTensorsName(tensor.dtype()));
  if (count == 0)
    return;
  const size_t size = dtypeSize(tensor.dtype());
  const size_t viewSize = dtypeSize(*view.dtype);
  const char *bytes = static_cast<const char *>(view.data) + from * viewSize;
  if (*view.dtype == tensor.dtype()) {
    std::memcpy(static_cast<char *>(tensor.data()) + at * size, bytes,
                count * size);
    return;
  }
  // The file's bytes need not be aligned for the element type.
  for (int64_t i = 0; i < count; ++i) {
    if (*view.dtype == DType::F32) {
      float value;
      std::memcpy(&value, bytes + 4 * i, 4);
      tensor.set(at + i, value);
    } else {
      double value;
      std::memcpy(&value, bytes + 8 * i, 8);
      tensor.set(at + i, value);
    }
  }
}

const SafeTensorView &matching(const SafeTensorsFile &file,
                               const Tensor &tensor, const Shape &shape,
                               const std::string &source) {
  const SafeTensorView *view = file.find(tensor.name());
  if (!view)
    fail("%s has no tensor '%s', which the artifact expects (checkpoint of "
         "another model?)",
         source.c_str(), tensor.name().c_str());
  if (view->shape != shape)
    fail("%s: tensor %s: checkpoint shape %s but artifact expects %s",
         source.c_str(), tensor.name().c_str(),
         shapeToString(view->shape).c_str(), shapeToString(shape).c_str());
  return *view;
}

/// Whether `name` is a tensor another pipeline stage holds.
bool heldByAnotherStage(const Artifact &artifact, const std::string &name) {
  const Manifest &all = artifact.manifestOfAllStages();
  return &all != &artifact.manifest() &&
         (all.findParam(name) || all.findState(name));
}

void checkKnownTensors(const SafeTensorsFile &file, Artifact &artifact,
                       ArgRole role, const std::string &source,
                       const char *what) {
  for (const SafeTensorView &view : file.tensors())
    if (view.name == LOOM_ZO_PENDING_STATE || // zeros when saved (abi.h)
        heldByAnotherStage(artifact, view.name))
      continue;
    else if (!artifact.findTensor(view.name) ||
             artifact.findTensor(view.name)->role() != role)
      fail("%s has tensor '%s', which the artifact%s does not have (%s)",
           source.c_str(), view.name.c_str(), what,
           role == ArgRole::Param
               ? "checkpoint of another model?"
               : "saved with another optimizer? To start from its weights "
                 "with this artifact's optimizer, --load the directory's "
                 "model.safetensors");
}

void checkFinite(const Tensor &tensor, const std::string &source,
                 const SliceOf &slice) {
  if (!isFloat(tensor.dtype()))
    return;
  const int64_t count = tensor.numElements();
  for (int64_t i = 0; i < count; ++i) {
    const double value =
        tensor.dtype() == DType::F32   ? tensor.dataAs<float>()[i]
        : tensor.dtype() == DType::F64 ? tensor.dataAs<double>()[i]
                                       : tensor.get(i);
    if (!std::isfinite(value))
      fail("%s: tensor '%s' holds %s at element %lld (of %lld); these "
           "weights cannot be trained or evaluated",
           source.c_str(), tensor.name().c_str(),
           std::isnan(value) ? "NaN"
           : value > 0       ? "+inf"
                             : "-inf",
           static_cast<long long>(slice.wholeIndex(i)),
           static_cast<long long>(numElements(slice.wholeShape)));
  }
}

namespace {

/// Copies a safetensors tensor into an artifact tensor, converting between
/// F32 and F64: all of it, or the part `slice` says the artifact tensor
/// holds (a rank's slice of a ZeRO-sharded tensor, zeros past the end of
/// the file's; a tensor-parallel rank's part). Shapes have been checked by
/// the caller.
void copyInto(Tensor &tensor, const SafeTensorView &view,
              const std::string &source, const SliceOf &slice) {
  const int64_t count = slice.available(tensor.numElements());
  const size_t size = dtypeSize(tensor.dtype());
  if (count < tensor.numElements())
    std::memset(static_cast<char *>(tensor.data()) + count * size, 0,
                tensor.byteSize() - count * size);
  slice.forEachRun(count, [&](int64_t whole, int64_t at, int64_t length) {
    copyElements(tensor, at, view, whole, length, source);
  });
}

const SafeTensorView &matching(const SafeTensorsFile &file,
                               const Tensor &tensor,
                               const std::string &source) {
  return matching(file, tensor, tensor.shape(), source);
}

template <typename T>
T field(const json &object, const char *key, const std::string &source) {
  auto it = object.find(key);
  try {
    if (it != object.end())
      return it->get<T>();
  } catch (const json::exception &) {
  }
  fail("%s: field '%s' is missing or has the wrong type", source.c_str(), key);
}

/// Steps, data positions and rows beyond this are not a checkpoint any job
/// wrote (2^62 steps of one row each), and bounding them keeps the
/// trainer's sums and products of them in int64_t.
constexpr int64_t kMaxCount = int64_t(1) << 62;

/// Copies every tensor of `tensors` from `file`, each of which must be
/// there with its shape, after checking all of them. `artifact`'s
/// ZeRO-sharded tensors take rank `rank`'s slice of the file's whole ones
/// (ZeroShards.h). Returns where each tensor lies in the file's.
std::vector<SliceOf> loadTensors(const std::vector<Tensor *> &wanted,
                                 const std::string &path, ArgRole role,
                                 Artifact *artifact, const char *what,
                                 int rank = 0) {
  SafeTensorsFile file = SafeTensorsFile::read(path);
  std::vector<SliceOf> slices;
  // A pending zeroth-order update is zero when saved (abi.h): a checkpoint
  // of the same model trained without offloading lacks it.
  std::vector<Tensor *> tensors;
  for (Tensor *tensor : wanted)
    if (tensor->name() != LOOM_ZO_PENDING_STATE || file.find(tensor->name()))
      tensors.push_back(tensor);
    else
      std::memset(tensor->data(), 0, tensor->byteSize());
  for (Tensor *tensor : tensors) {
    slices.push_back(artifact ? sliceOf(artifact->manifest(), *tensor, rank)
                              : SliceOf{tensor->shape(), 0});
    matching(file, *tensor, slices.back().wholeShape, path);
  }
  if (artifact)
    checkKnownTensors(file, *artifact, role, path, what);
  for (size_t i = 0; i < tensors.size(); ++i)
    copyInto(*tensors[i], *file.find(tensors[i]->name()), path, slices[i]);
  return slices;
}

/// Loads `tensors` from the shares of the alike state that `ranks` ranks
/// wrote into `dir`, verifying those of ranks other than `verified`.
void loadAlike(const std::vector<Tensor *> &tensors, const std::string &dir,
               int64_t ranks, int verified, const json &files,
               const std::string &trainerPath) {
  std::vector<SafeTensorsFile> shares;
  std::vector<std::string> paths;
  for (int r = 0; r < ranks; ++r) {
    std::string name = rankDir(r) + "/" + kAlikeFile;
    if (r != verified)
      verifyFile(dir, files, name, trainerPath);
    paths.push_back(dir + "/" + name);
    shares.push_back(SafeTensorsFile::read(paths.back()));
  }
  // Every tensor is found (with its shape) before any is copied.
  std::vector<size_t> shareOf;
  for (Tensor *tensor : tensors) {
    size_t share = 0;
    while (share < shares.size() && !shares[share].find(tensor->name()))
      ++share;
    if (share == shares.size())
      fail("%s/rank-*/%s: no rank's share of the CO2 outer state has tensor "
           "'%s', which the artifact expects",
           dir.c_str(), kAlikeFile, tensor->name().c_str());
    matching(shares[share], *tensor, paths[share]);
    shareOf.push_back(share);
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    copyInto(*tensors[i], *shares[shareOf[i]].find(tensors[i]->name()),
             paths[shareOf[i]], SliceOf{tensors[i]->shape(), 0});
}

/// `tensors` less those in `less`.
std::vector<Tensor *> without(const std::vector<Tensor *> &tensors,
                              const std::vector<Tensor *> &less) {
  std::vector<Tensor *> kept;
  for (Tensor *tensor : tensors)
    if (std::find(less.begin(), less.end(), tensor) == less.end())
      kept.push_back(tensor);
  return kept;
}

/// The checkpoint directory's trainer.json, which must be a JSON object.
json readTrainerFile(const std::string &dir) {
  std::string trainerPath = dir + "/" + kTrainerFile;
  std::error_code error;
  if (!fs::exists(trainerPath, error))
    fail("%s is not a Loom checkpoint (it has no %s)", dir.c_str(),
         kTrainerFile);
  json trainer;
  std::string text = readFileText(trainerPath), problem;
  if (!parseJson(text.data(), text.data() + text.size(), trainer, problem))
    fail("%s is corrupted: %s", trainerPath.c_str(), problem.c_str());
  if (!trainer.is_object())
    fail("%s is corrupted: not a JSON object", trainerPath.c_str());
  return trainer;
}

/// trainer.json's "per_rank" (kPerRankKind, kZeroKind, or "" for a
/// replicated checkpoint), checked against its format `version` and
/// against whether the artifact resumes per-rank tensors of its own (`co2`).
std::string perRankKind(const json &trainer, const std::string &dir,
                        int64_t version, bool co2) {
  const std::string trainerPath = dir + "/" + kTrainerFile;
  std::string kind;
  if (trainer.contains("per_rank")) {
    kind = field<std::string>(trainer, "per_rank", trainerPath);
    if (kind != kPerRankKind && kind != kZeroKind)
      fail("%s: per_rank \"%s\" is not a kind of checkpoint this runtime "
           "reads (\"%s\" or \"%s\")",
           trainerPath.c_str(), kind.c_str(), kPerRankKind, kZeroKind);
  }
  if (version > kReplicatedFormatVersion && kind.empty())
    fail("%s is corrupted: format version %lld is that of per-rank "
         "checkpoints, and it has no \"per_rank\" field",
         trainerPath.c_str(), static_cast<long long>(version));
  if (kind == kPerRankKind && !co2)
    fail("%s was saved by a job whose ranks train different models (CO2), "
         "one directory per rank, and this artifact resumes a single "
         "replicated model; start from the checkpoint's consensus weights "
         "with --load %s/%s",
         dir.c_str(), dir.c_str(), kModelFile);
  if (kind != kPerRankKind && co2)
    fail("%s holds one %s (saved without CO2) and this CO2 artifact resumes "
         "per-rank checkpoints of a CO2 job; start from its weights with "
         "--load %s/%s",
         dir.c_str(),
         kind.empty() ? "replicated model" : "model sharded over its ranks",
         dir.c_str(), kModelFile);
  return kind;
}

/// The trainer state trainer.json records, checked.
TrainerState readTrainerState(const json &trainer,
                              const std::string &trainerPath) {
  TrainerState state;
  state.step = integerField(trainer, "step", trainerPath, 0, kMaxCount, "2^62");
  state.dataPosition =
      integerField(trainer, "data_position", trainerPath, 0, kMaxCount, "2^62");
  auto seed = trainer.find("seed");
  // --seed takes any unsigned 64-bit value; get<uint64_t> would wrap -1.
  if (seed == trainer.end() || !seed->is_number_unsigned())
    fail("%s: field 'seed' must be an integer from 0 to 2^64-1, got %s",
         trainerPath.c_str(),
         seed == trainer.end() ? "none" : seed->dump().c_str());
  state.seed = seed->get<uint64_t>();
  state.shuffle = field<bool>(trainer, "shuffle", trainerPath);
  state.data = field<std::string>(trainer, "data", trainerPath);
  if (trainer.contains("ranks"))
    state.ranks =
        integerField(trainer, "ranks", trainerPath, 1, LOOM_MAX_RANKS, "2^20");
  if (trainer.contains("rows_per_step"))
    state.rowsPerStep = integerField(trainer, "rows_per_step", trainerPath, 1,
                                     kMaxCount, "2^62");
  // The rows consumed, which a job of another rank count resumes from.
  int64_t rows = 0;
  if (__builtin_mul_overflow(state.dataPosition,
                             std::max<int64_t>(state.rowsPerStep, 1), &rows) ||
      rows > kMaxCount)
    fail("%s: data_position %lld x rows_per_step %lld is more than 2^62 rows",
         trainerPath.c_str(), static_cast<long long>(state.dataPosition),
         static_cast<long long>(state.rowsPerStep));
  return state;
}

/// The params of the whole-model file `path` (rank `rank`'s slice of each
/// ZeRO-sharded one), checked to be finite.
void loadParams(const std::string &path, Artifact &artifact, int rank) {
  const std::vector<SliceOf> slices =
      loadTensors(artifact.params(), path, ArgRole::Param, &artifact, "", rank);
  for (size_t i = 0; i < slices.size(); ++i)
    checkFinite(*artifact.params()[i], path, slices[i]);
}

/// A replicated (`kind` "") or CO2 (kPerRankKind) checkpoint's tensors.
void loadFiles(const std::string &dir, const json &files,
               const std::string &kind, int64_t version, int64_t ranks,
               Artifact &artifact, int rank,
               const PerRankTensors *rankTensors) {
  const std::string trainerPath = dir + "/" + kTrainerFile;
  const bool perRank = !kind.empty();
  std::vector<std::string> names{kModelFile, kOptimizerFile};
  if (perRank) {
    // A job with more ranks than saved it: the caller says so.
    if (rank >= ranks)
      return;
    names = rankFiles(rank, version);
    verifyFile(dir, files, kModelFile, trainerPath);
  }
  for (const std::string &name : names)
    verifyFile(dir, files, name, trainerPath);
  // Each file is checked whole before it is copied; a later file's mismatch
  // can still leave earlier tensors loaded, and the caller then fails.
  loadParams(dir + "/" + names[0], artifact, rank);
  if (!perRank) {
    loadTensors(artifact.state(), dir + "/" + names[1], ArgRole::State,
                &artifact, "'s optimizer", rank);
    return;
  }
  if (version >= kAlikeFileVersion) {
    loadTensors(rankTensors->optimizerState, dir + "/" + names[1],
                ArgRole::State, &artifact, "'s optimizer");
    loadTensors(rankTensors->rankState, dir + "/" + names[2], ArgRole::State,
                nullptr, "");
    loadAlike(rankTensors->alike, dir, ranks, rank, files, trainerPath);
    return;
  }
  // Version 1: every rank kept all of the artifact state, and the alike
  // tensors beyond it with its own.
  loadTensors(artifact.state(), dir + "/" + names[1], ArgRole::State, &artifact,
              "'s optimizer");
  std::vector<Tensor *> roundState = rankTensors->rankState;
  for (Tensor *tensor : without(rankTensors->alike, artifact.state()))
    roundState.push_back(tensor);
  loadTensors(roundState, dir + "/" + names[2], ArgRole::State, nullptr, "");
}

LoadResult loadFull(const std::string &dir, Artifact &artifact, int rank,
                    const PerRankTensors *rankTensors) {
  std::string trainerPath = dir + "/" + kTrainerFile;
  json trainer = readTrainerFile(dir);
  int64_t version = field<int64_t>(trainer, "format_version", trainerPath);
  if (version < 1 || version > kCheckpointFormatVersion)
    fail("%s: checkpoint format version %lld is not supported (this runtime "
         "reads versions 1 to %d)",
         trainerPath.c_str(), static_cast<long long>(version),
         kCheckpointFormatVersion);
  json files = field<json>(trainer, "files", trainerPath);
  const std::string kind =
      perRankKind(trainer, dir, version, rankTensors != nullptr);
  LoadResult result;
  result.full = true;
  result.path = dir;
  result.state = readTrainerState(trainer, trainerPath);
  if (kind != kZeroKind) {
    loadFiles(dir, files, kind, version, result.state.ranks, artifact, rank,
              rankTensors);
    return result;
  }
  result.note = loadZeroCheckpoint(
      dir, trainer, result.state, artifact, rank,
      [&](const std::string &path) { loadParams(path, artifact, rank); });
  return result;
}

/// The params of the weights file `path`, rank `rank`'s slice of each
/// ZeRO-sharded one.
LoadResult loadWeights(const std::string &path, Artifact &artifact, int rank) {
  SafeTensorsFile file = SafeTensorsFile::read(path);
  std::vector<SliceOf> slices;
  for (Tensor *param : artifact.params()) {
    slices.push_back(sliceOf(artifact.manifest(), *param, rank));
    matching(file, *param, slices.back().wholeShape, path);
  }
  LoadResult result;
  result.full = false;
  result.path = path;
  std::string ignored;
  int64_t ignoredCount = 0;
  for (const SafeTensorView &view : file.tensors()) {
    Tensor *tensor = artifact.findTensor(view.name);
    if ((tensor && tensor->role() == ArgRole::Param) ||
        heldByAnotherStage(artifact, view.name))
      continue;
    if (++ignoredCount <= 3)
      ignored += (ignored.empty() ? "" : ", ") + view.name;
  }
  for (size_t i = 0; i < slices.size(); ++i) {
    Tensor &param = *artifact.params()[i];
    copyInto(param, *file.find(param.name()), path, slices[i]);
    checkFinite(param, path, slices[i]);
  }
  if (ignoredCount)
    result.note = "ignored " + std::to_string(ignoredCount) + " tensor" +
                  (ignoredCount == 1 ? "" : "s") + " of " + path +
                  " that the model does not have (" + ignored +
                  (ignoredCount > 3 ? ", ..." : "") + ")";
  return result;
}

} // namespace

DataResume resumeUnderOtherRanks(const LoadResult &loaded, int ranks,
                                 int64_t rowsPerStep, bool co2,
                                 bool externalLauncher) {
  const long long savedRanks = loaded.state.ranks;
  if (co2 || loaded.state.rowsPerStep < 1 || rowsPerStep < 1)
    fail("checkpoint %s was saved by a %lld-rank job but this job has %d%s; "
         "resume it with %s %lld, or start from its weights only with "
         "--load %s/model.safetensors (fresh optimizer state and data "
         "position)",
         loaded.path.c_str(), savedRanks, ranks,
         co2 ? " (a CO2 job's ranks hold models of their own)"
             : " (the checkpoint does not record its global batch)",
         externalLauncher ? "-np" : "--ranks", savedRanks, loaded.path.c_str());
  int64_t rows = 0;
  if (__builtin_mul_overflow(loaded.state.dataPosition,
                             loaded.state.rowsPerStep, &rows))
    fail("checkpoint %s: data_position %lld x rows_per_step %lld overflows",
         loaded.path.c_str(), static_cast<long long>(loaded.state.dataPosition),
         static_cast<long long>(loaded.state.rowsPerStep));
  DataResume resume;
  resume.position = rows / rowsPerStep + (rows % rowsPerStep != 0);
  const long long next = resume.position * rowsPerStep;
  resume.note = formatString(
      "resuming a %lld-rank checkpoint (global batches of %lld rows) with %d "
      "%s (%lld rows): the data goes on at row %lld",
      savedRanks, static_cast<long long>(loaded.state.rowsPerStep), ranks,
      ranks == 1 ? "rank" : "ranks", static_cast<long long>(rowsPerStep), next);
  if (next != rows)
    resume.note += formatString(", skipping rows %lld..%lld so that batches "
                                "stay aligned",
                                static_cast<long long>(rows), next - 1);
  resume.note += "; the learning-rate schedule goes on by step";
  return resume;
}

namespace {

/// Where `path` names a checkpoint: a weights file, a directory, or (a save
/// died between moving PATH aside and moving the new one in) PATH.old, with
/// a note saying so. Fails if there is none.
struct ResolvedCheckpoint {
  std::string path;
  bool weightsFile = false;
  std::string note;
};

ResolvedCheckpoint resolveCheckpoint(const std::string &path) {
  ResolvedCheckpoint resolved;
  resolved.path = trimSlashes(path);
  std::error_code error;
  if (fs::is_regular_file(resolved.path, error)) {
    resolved.weightsFile = true;
    return resolved;
  }
  if (fs::is_directory(resolved.path, error))
    return resolved;
  std::string old = oldPath(resolved.path);
  if (!fs::exists(resolved.path, error) && fs::is_directory(old, error)) {
    resolved.note = resolved.path +
                    " is missing; loaded the previous checkpoint " + old +
                    " left by an interrupted save";
    resolved.path = old;
    return resolved;
  }
  fail("no checkpoint at %s (expected a checkpoint directory written by "
       "--save or a .safetensors weights file)",
       resolved.path.c_str());
}

/// `result` with the resolution's note in front of its own.
LoadResult withNote(LoadResult result, const ResolvedCheckpoint &resolved) {
  if (!resolved.note.empty())
    result.note =
        resolved.note + (result.note.empty() ? "" : "; " + result.note);
  return result;
}

} // namespace

LoadResult loadCheckpoint(const std::string &path, Artifact &artifact, int rank,
                          const PerRankTensors *perRank) {
  ResolvedCheckpoint resolved = resolveCheckpoint(path);
  if (resolved.weightsFile)
    return loadWeights(resolved.path, artifact, rank);
  return withNote(loadFull(resolved.path, artifact, rank, perRank), resolved);
}

std::optional<CheckpointPeek> peekCheckpoint(const std::string &path) {
  std::error_code error;
  if (!fs::exists(trimSlashes(path), error) &&
      !fs::is_directory(oldPath(path), error))
    return std::nullopt;
  ResolvedCheckpoint resolved = resolveCheckpoint(path);
  CheckpointPeek peek;
  peek.path = resolved.path;
  if (resolved.weightsFile)
    return peek;
  json trainer = readTrainerFile(resolved.path);
  peek.step =
      field<int64_t>(trainer, "step", resolved.path + "/" + kTrainerFile);
  peek.trainerJson = trainer.dump();
  return peek;
}

LoadResult loadModelWeights(const std::string &path, Artifact &artifact,
                            int rank) {
  ResolvedCheckpoint resolved = resolveCheckpoint(path);
  return withNote(loadWeights(resolved.weightsFile
                                  ? resolved.path
                                  : resolved.path + "/model.safetensors",
                              artifact, rank),
                  resolved);
}

} // namespace loom::rt
