//===- ZeroShards.cpp - A ZeRO artifact's checkpoints, per rank -----------===//
//
// The shards' arithmetic and stamps, and what each rank writes (host
// buffers: a cuda artifact's tensors were downloaded first, as for any
// save). Loading is ZeroLoad.cpp.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/ZeroShards.h"
#include "checkpoint/CheckpointLayout.h"
#include "checkpoint/PerRankSave.h"
#include "checkpoint/SafeTensorsStream.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Sha256.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

using nlohmann::json;

namespace loom::rt {

namespace {

/// The metadata of every file a checkpoint writes for PyTorch's tools.
const std::map<std::string, std::string> kExportMetadata = {
    {"format", "pt"}, {"generator", "loom"}};

/// ShardStamp's metadata keys.
constexpr const char *kStageKey = "loom_zero_stage";
constexpr const char *kRanksKey = "loom_zero_ranks";
constexpr const char *kRankKey = "loom_zero_rank";
constexpr const char *kStepKey = "loom_step";
constexpr const char *kModelKey = "loom_model_sha256";

/// Metadata value `key` as a non-negative integer, or nullopt.
std::optional<int64_t> count(const std::map<std::string, std::string> &meta,
                             const char *key) {
  auto it = meta.find(key);
  if (it == meta.end() || it->second.empty() || it->second[0] == '-')
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (errno || *end)
    return std::nullopt;
  return value;
}

/// Rank `rank`'s shard of `tensor` as its file holds it: the tensor itself
/// where the artifact shards it, else its elements [rank·s, rank·s + s)
/// copied into a tensor that `copies` owns.
SafeTensorView shardOf(const Manifest &manifest, Tensor &tensor, int rank,
                       std::vector<std::unique_ptr<Tensor>> &copies) {
  Tensor *shard = &tensor;
  if (!shardedSpec(manifest, tensor)) {
    const int64_t n = tensor.numElements();
    const int64_t s = manifest.zero.shardElements(n);
    copies.push_back(std::make_unique<Tensor>(tensor.name(), tensor.role(),
                                              Shape{s}, tensor.dtype()));
    shard = copies.back().get();
    const int64_t first = std::min<int64_t>(rank * s, n);
    const size_t size = dtypeSize(tensor.dtype());
    std::memcpy(shard->data(), tensor.dataAs<char>() + first * size,
                std::min(s, n - first) * size);
  }
  return makeSafeTensorView(shard->name(), shard->dtype(), shard->shape(),
                            shard->data());
}

std::vector<SafeTensorView>
shardsOf(const Manifest &manifest, const std::vector<Tensor *> &tensors,
         int rank, std::vector<std::unique_ptr<Tensor>> &copies) {
  std::vector<SafeTensorView> shards;
  for (Tensor *tensor : tensors)
    shards.push_back(shardOf(manifest, *tensor, rank, copies));
  return shards;
}

} // namespace

std::vector<ShardPiece> shardPieces(int64_t elements, int64_t ranks,
                                    int64_t first, int64_t count) {
  const int64_t s = ZeroSpec{0, ranks}.shardElements(elements);
  const int64_t end = std::min(first + count, elements);
  std::vector<ShardPiece> pieces;
  for (int64_t i = first; i < end;) {
    const int64_t rank = i / s, from = i - rank * s;
    const int64_t length = std::min(s - from, end - i);
    pieces.push_back({rank, from, i - first, length});
    i += length;
  }
  return pieces;
}

std::map<std::string, std::string> ShardStamp::metadata() const {
  std::map<std::string, std::string> meta = kExportMetadata;
  meta[kStageKey] = std::to_string(stage);
  meta[kRanksKey] = std::to_string(ranks);
  meta[kRankKey] = std::to_string(rank);
  meta[kStepKey] = std::to_string(step);
  meta[kModelKey] = model;
  return meta;
}

std::optional<ShardStamp>
ShardStamp::parse(const std::map<std::string, std::string> &metadata) {
  auto stage = count(metadata, kStageKey), ranks = count(metadata, kRanksKey),
       rank = count(metadata, kRankKey), step = count(metadata, kStepKey);
  auto model = metadata.find(kModelKey);
  if (!stage || !ranks || !rank || !step || model == metadata.end())
    return std::nullopt;
  return ShardStamp{*stage, *ranks, *rank, *step, model->second};
}

std::string shardMismatch(const std::optional<ShardStamp> &found,
                          const ShardStamp &expected) {
  if (!found)
    return "it is not stamped as a ZeRO checkpoint's shard";
  if (found->model != expected.model)
    return "it is a shard of another model (its params' names, shapes or "
           "dtypes are not the ones trainer.json records)";
  if (found->ranks != expected.ranks || found->stage != expected.stage)
    return formatString("it was saved by %lld ranks at ZeRO stage %lld, and "
                        "this checkpoint by %lld ranks at stage %lld",
                        static_cast<long long>(found->ranks),
                        static_cast<long long>(found->stage),
                        static_cast<long long>(expected.ranks),
                        static_cast<long long>(expected.stage));
  if (found->rank != expected.rank)
    return formatString("it is rank %lld's shard, not rank %lld's",
                        static_cast<long long>(found->rank),
                        static_cast<long long>(expected.rank));
  if (found->step != expected.step)
    return formatString("it was saved at step %lld, and this checkpoint at "
                        "step %lld",
                        static_cast<long long>(found->step),
                        static_cast<long long>(expected.step));
  return "";
}

std::string modelDigest(const json &model) {
  const std::string text = model.dump();
  return sha256Hex(text.data(), text.size());
}

std::vector<SafeTensorView> wholeParams(const Manifest &manifest) {
  std::vector<SafeTensorView> params;
  for (const TensorSpec &spec : manifest.params)
    params.push_back(makeSafeTensorView(spec.name, spec.dtype,
                                        manifest.wholeShape(spec), nullptr));
  return params;
}

json zeroRecord(const Manifest &manifest) {
  json shapes = json::object();
  for (const TensorSpec &spec : manifest.state)
    shapes[spec.name] = manifest.wholeShape(spec);
  if (manifest.zero.stage == 3)
    for (const TensorSpec &spec : manifest.params)
      shapes[spec.name] = manifest.wholeShape(spec);
  return {{"stage", manifest.zero.stage},
          {"ranks", manifest.zero.ranks},
          {"shapes", shapes}};
}

std::vector<Tensor *> replicatedTensors(Artifact &artifact) {
  std::vector<Tensor *> alike;
  for (const std::vector<Tensor *> *tensors :
       {&artifact.params(), &artifact.state()})
    for (Tensor *tensor : *tensors)
      if (!shardedSpec(artifact.manifest(), *tensor))
        alike.push_back(tensor);
  return alike;
}

std::vector<FileRecord> writeZeroRankFiles(const std::string &tmpDir, int rank,
                                           const ZeroPart &part,
                                           const TrainerState &state) {
  const Manifest &manifest = *part.manifest;
  const ShardStamp stamp{manifest.zero.stage, manifest.zero.ranks, rank,
                         state.step,
                         modelDigest(modelFingerprint(wholeParams(manifest)))};
  const std::vector<std::string> names =
      zeroRankFiles(rank, manifest.zero.stage);
  std::vector<std::unique_ptr<Tensor>> copies;
  std::vector<RankFile> files{{names[0],
                               shardsOf(manifest, part.state, rank, copies),
                               stamp.metadata()}};
  if (manifest.zero.stage == 3)
    files.push_back({names[1], shardsOf(manifest, part.params, rank, copies),
                     stamp.metadata()});
  std::vector<FileRecord> records = writeRankFiles(tmpDir, rank, files);
  // Every rank holds the whole params below stage 3; rank 0 writes them.
  if (rank == 0 && manifest.zero.stage < 3)
    writeSafeTensors(tmpDir + "/" + kModelFile, tensorViews(part.params),
                     kExportMetadata);
  return records;
}

void writeGatheredModel(Communicator &comm, const ZeroPart &part,
                        const std::string &path, std::string &error) {
  const Manifest &manifest = *part.manifest;
  std::optional<SafeTensorsWriter> model;
  // Rank 0's writes, until one fails; the gathers go on regardless.
  auto write = [&](const std::function<void()> &step) {
    if (!comm.isRoot() || !error.empty())
      return;
    try {
      step();
    } catch (const std::exception &e) {
      error = e.what();
      model.reset();
    }
  };
  write([&] { model.emplace(path, wholeParams(manifest), kExportMetadata); });
  // One whole param at a time: the padding of the last rank's slice
  // follows the param's elements and is not written.
  std::vector<char> gathered;
  for (Tensor *param : part.params) {
    const void *whole = param->data();
    if (shardedSpec(manifest, *param)) {
      gathered.resize(param->byteSize() * comm.size());
      comm.allGather(param->data(), gathered.data(), param->numElements(),
                     param->dtype());
      whole = gathered.data();
    }
    write([&] { model->append(whole); });
  }
  write([&] { model->finish(); });
}

} // namespace loom::rt
