//===- ZeroLoad.cpp - Loading a ZeRO checkpoint's shards ------------------===//
//
// Every rank checks every shard cheaply (there, stamped as this
// checkpoint's, of the recorded size: a header read each), so that a
// missing or foreign shard is named alike on every rank; then it verifies
// the sha256 of, and reads, only the shards its part of each tensor lies
// in. The shards are on a filesystem every rank sees, as they were when
// saved (PerRankSave.h).
//
//===----------------------------------------------------------------------===//

#include "checkpoint/CheckpointLayout.h"
#include "checkpoint/CheckpointRead.h"
#include "checkpoint/SafeTensorsStream.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;
using nlohmann::json;

namespace loom::rt {

namespace {

/// What trainer.json records of a ZeRO checkpoint's shards ("zero").
struct ZeroLayout {
  int64_t stage = 0;
  int64_t ranks = 0;
  /// The whole shape of every tensor the shards hold, by name.
  std::map<std::string, Shape> shapes;
};

/// trainer.json's "zero" (at `trainerPath`), of a checkpoint saved by
/// `ranks` ranks.
ZeroLayout readLayout(const json &trainer, const std::string &trainerPath,
                      int64_t ranks) {
  auto zero = trainer.find("zero");
  if (zero == trainer.end() || !zero->is_object())
    fail("%s: field 'zero' is missing or not an object", trainerPath.c_str());
  const std::string source = trainerPath + ": zero";
  ZeroLayout layout;
  layout.stage = integerField(*zero, "stage", source, 1, 3, "3");
  layout.ranks =
      integerField(*zero, "ranks", source, 1, LOOM_MAX_RANKS, "2^20");
  if (layout.ranks != ranks)
    fail("%s is corrupted: the shards' rank count %lld (zero.ranks) is not "
         "the job's %lld (ranks)",
         trainerPath.c_str(), static_cast<long long>(layout.ranks),
         static_cast<long long>(ranks));
  auto shapes = zero->find("shapes");
  if (shapes == zero->end() || !shapes->is_object())
    fail("%s: field 'shapes' is missing or not an object", source.c_str());
  for (const auto &[name, shape] : shapes->items()) {
    bool valid = shape.is_array();
    for (const json &size : valid ? shape : json::array())
      valid = valid && size.is_number_unsigned() &&
              size.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
    if (!valid)
      fail("%s: shapes.%s is not a shape", source.c_str(), name.c_str());
    layout.shapes[name] = shape.get<Shape>();
  }
  return layout;
}

/// Why the shard at `path` is not the one `expected` describes, or "" if it
/// is, or if its header cannot be read (then its size or sha256 says what
/// is wrong with it).
std::string whyForeign(const std::string &path, const ShardStamp &expected) {
  std::map<std::string, std::string> metadata;
  try {
    metadata = readSafeTensorsMetadata(path);
  } catch (const Error &) {
    return "";
  }
  return shardMismatch(ShardStamp::parse(metadata), expected);
}

/// Fails, naming the file, unless every rank's shards are there, stamped
/// as `expected` (but for the rank) and of the recorded sizes.
void checkShards(const std::string &dir, const json &files,
                 const ZeroLayout &layout, ShardStamp expected) {
  const std::string trainerPath = dir + "/" + kTrainerFile;
  for (int64_t r = 0; r < layout.ranks; ++r)
    for (const std::string &name :
         zeroRankFiles(static_cast<int>(r), layout.stage)) {
      const std::string path = dir + "/" + name;
      std::error_code error;
      if (!fs::is_regular_file(path, error))
        fail("checkpoint file %s is missing: each of the %lld ranks that "
             "saved this ZeRO checkpoint wrote its shard there",
             path.c_str(), static_cast<long long>(layout.ranks));
      expected.rank = r;
      const std::string why = whyForeign(path, expected);
      if (!why.empty())
        fail("checkpoint file %s is not a shard of this checkpoint: %s; put "
             "back the file its save wrote, or resume from another "
             "checkpoint",
             path.c_str(), why.c_str());
      checkFileSize(dir, files, name, trainerPath);
    }
}

/// Loads `tensors` (the artifact's of `role`) on rank `rank` from the
/// shards in every rank's `file` that hold its part of them: zeros, then
/// each piece copied from its shard.
void loadShards(const std::vector<Tensor *> &tensors, ArgRole role,
                const std::string &dir, const json &files,
                const ZeroLayout &layout, Artifact &artifact, int rank) {
  const std::string trainerPath = dir + "/" + kTrainerFile;
  const bool params = role == ArgRole::Param;
  // Where each part lies, checked against the recorded whole shapes
  // before any shard is read.
  std::vector<std::vector<ShardPiece>> pieces;
  std::vector<Shape> shardShapes;
  for (Tensor *tensor : tensors) {
    const SliceOf slice = sliceOf(artifact.manifest(), *tensor, rank);
    auto whole = layout.shapes.find(tensor->name());
    if (whole == layout.shapes.end())
      fail("%s: the checkpoint has no shards of tensor '%s', which the "
           "artifact expects (%s)",
           trainerPath.c_str(), tensor->name().c_str(),
           params ? "checkpoint of another model?"
                  : "saved with another optimizer?");
    if (whole->second != slice.wholeShape)
      fail("%s: tensor %s: checkpoint shape %s but artifact expects %s",
           trainerPath.c_str(), tensor->name().c_str(),
           shapeToString(whole->second).c_str(),
           shapeToString(slice.wholeShape).c_str());
    // Each run of the tensor in the whole (a tensor-parallel part has
    // several) from the shards it lies in.
    const int64_t n = numElements(slice.wholeShape);
    std::vector<ShardPiece> &mine = pieces.emplace_back();
    slice.forEachRun(
        tensor->numElements(), [&](int64_t whole, int64_t at, int64_t length) {
          for (ShardPiece piece : shardPieces(n, layout.ranks, whole, length)) {
            piece.at += at;
            mine.push_back(piece);
          }
        });
    shardShapes.push_back({ZeroSpec{0, layout.ranks}.shardElements(n)});
    std::memset(tensor->data(), 0, tensor->byteSize());
  }
  for (int64_t r = 0; r < layout.ranks; ++r) {
    std::vector<std::pair<size_t, const ShardPiece *>> wanted;
    for (size_t i = 0; i < tensors.size(); ++i)
      for (const ShardPiece &piece : pieces[i])
        if (piece.rank == r)
          wanted.push_back({i, &piece});
    if (wanted.empty())
      continue;
    const std::string name = rankDir(static_cast<int>(r)) + "/" +
                             (params ? kModelFile : kOptimizerFile);
    const std::string path = dir + "/" + name;
    verifyFile(dir, files, name, trainerPath);
    const SafeTensorsFile shard = SafeTensorsFile::read(path);
    checkKnownTensors(shard, artifact, role, path,
                      params ? "" : "'s optimizer");
    for (const auto &[i, piece] : wanted)
      copyElements(*tensors[i], piece->at,
                   matching(shard, *tensors[i], shardShapes[i], path),
                   piece->from, piece->count, path);
  }
}

/// What loading a checkpoint of `layout` into an artifact of `zero` did to
/// its shards, for the log ("" if they load as they were saved).
std::string reshardNote(const std::string &dir, const ZeroLayout &layout,
                        const ZeroSpec &zero) {
  if (zero.stage == layout.stage && zero.ranks == layout.ranks)
    return "";
  const std::string into =
      zero.enabled() ? formatString("for ZeRO stage %lld over %lld ranks",
                                    static_cast<long long>(zero.stage),
                                    static_cast<long long>(zero.ranks))
                     : std::string("into whole tensors (no ZeRO)");
  return formatString("resharded %s (ZeRO stage %lld, %lld ranks) %s",
                      dir.c_str(), static_cast<long long>(layout.stage),
                      static_cast<long long>(layout.ranks), into.c_str());
}

} // namespace

std::string
loadZeroCheckpoint(const std::string &dir, const json &trainer,
                   const TrainerState &state, Artifact &artifact, int rank,
                   const std::function<void(const std::string &)> &loadWhole) {
  const std::string trainerPath = dir + "/" + kTrainerFile;
  const ZeroLayout layout = readLayout(trainer, trainerPath, state.ranks);
  const json &files = trainer.at("files");
  auto model = trainer.find("model");
  if (model == trainer.end())
    fail("%s: field 'model' is missing", trainerPath.c_str());
  checkShards(dir, files, layout,
              {layout.stage, layout.ranks, 0, state.step, modelDigest(*model)});
  // Each rank verifies what it reads; rank 0 also the whole model, which a
  // stage-3 checkpoint keeps for PyTorch alone.
  if (layout.stage < 3 || rank == 0)
    verifyFile(dir, files, kModelFile, trainerPath);
  if (layout.stage < 3) {
    loadWhole(dir + "/" + kModelFile);
  } else {
    loadShards(artifact.params(), ArgRole::Param, dir, files, layout, artifact,
               rank);
    for (Tensor *param : artifact.params())
      checkFinite(*param, dir + "/rank-*/" + kModelFile,
                  sliceOf(artifact.manifest(), *param, rank));
  }
  loadShards(artifact.state(), ArgRole::State, dir, files, layout, artifact,
             rank);
  return reshardNote(dir, layout, artifact.manifest().zero);
}

} // namespace loom::rt
