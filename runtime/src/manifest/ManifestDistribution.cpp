//===- ManifestDistribution.cpp - The manifest's distribution objects -----===//
//
// How an artifact's ranks share the work, as manifest.json records it: the
// mesh, CO2's schedule and shard layout, ZeRO's stage and gradient
// compression's slots, each checked against the rest of the manifest.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/ManifestSchema.h"
#include "loom/runtime/abi.h"
#include "manifest/ManifestParser.h"

#include <algorithm>
#include <set>

namespace key = loom::manifest;

namespace loom::rt {

MeshSpec ManifestParser::mesh(const json &value, const std::string &path) {
  expectObject(value, path);
  MeshSpec mesh;
  std::string axesPath = join(path, key::mesh::axes);
  std::string shapePath = join(path, key::mesh::shape);
  const json &axes =
      expectArray(require(value, path, key::mesh::axes), axesPath);
  const json &shape =
      expectArray(require(value, path, key::mesh::shape), shapePath);
  if (axes.empty())
    error(axesPath, "must name at least one axis");
  if (axes.size() != shape.size())
    error(path, "axes has " + std::to_string(axes.size()) +
                    " names but shape has " + std::to_string(shape.size()) +
                    " sizes");
  std::set<std::string> seen;
  for (size_t i = 0; i < axes.size(); ++i) {
    std::string axis = string(axes[i], index(axesPath, i));
    if (!seen.insert(axis).second)
      error(index(axesPath, i), "duplicate axis \"" + axis + "\"");
    mesh.axes.push_back(axis);
    // Bounding every partial product keeps the rank count (ranks())
    // from overflowing, however many axes there are.
    int64_t size = integer(shape[i], index(shapePath, i), 1);
    if (size > LOOM_MAX_RANKS)
      error(index(shapePath, i),
            "axis size " + std::to_string(size) + " is implausibly large");
    mesh.shape.push_back(size);
    if (mesh.ranks() > LOOM_MAX_RANKS)
      error(shapePath, "the mesh has more than 2^20 ranks");
  }
  return mesh;
}

CO2Spec ManifestParser::co2(const json &value, const std::string &path,
                            int64_t ranks) {
  expectObject(value, path);
  CO2Spec co2;
  co2.localSteps = integer(require(value, path, key::co2::local_steps),
                           join(path, key::co2::local_steps), 1);
  if (const json *sharded = optional(value, key::co2::sharded)) {
    if (!sharded->is_boolean())
      error(join(path, key::co2::sharded), "expected true or false");
    co2.sharded = sharded->get<bool>();
  }
  if (!co2.sharded)
    return co2;
  std::string shardPath = join(path, key::co2::shard_elements);
  co2.shardElements =
      integer(require(value, path, key::co2::shard_elements), shardPath, 1);
  // The trainer's round buffer holds a shard per rank of the mesh.
  if (co2.shardElements > (int64_t(1) << 60) / ranks)
    error(shardPath, std::to_string(co2.shardElements) + " x " +
                         std::to_string(ranks) +
                         " ranks is implausibly large (more than 2^60 "
                         "elements)");
  std::string listPath = join(path, key::co2::params);
  const json &list =
      expectArray(require(value, path, key::co2::params), listPath);
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      error(index(listPath, i), "expected a name");
    co2.params.push_back(list[i].get<std::string>());
  }
  if (co2.params.empty())
    error(listPath, "a sharded CO2 artifact updates at least one param");
  co2.layout = co2Layout(value, path, co2.shardElements, ranks);
  return co2;
}

std::vector<CO2Shard> ManifestParser::co2Layout(const json &co2,
                                                const std::string &co2Path,
                                                int64_t shardElements,
                                                int64_t ranks) {
  std::string path = join(co2Path, key::co2::layout);
  std::string shardName = join(co2Path, key::co2::shard_elements);
  const json *value = optional(co2, key::co2::layout);
  if (!value)
    error(path, "missing required field (an artifact from an older loomc: "
                "compile the model again)");
  const json &list = expectArray(*value, path);
  if (static_cast<int64_t>(list.size()) != ranks)
    error(path, "has " + std::to_string(list.size()) +
                    " slices but the mesh has " + std::to_string(ranks) +
                    " ranks");
  std::vector<CO2Shard> layout;
  bool full = true; // every slice so far holds shard_elements
  for (size_t r = 0; r < list.size(); ++r) {
    std::string at = index(path, r);
    expectObject(list[r], at);
    std::string offsetPath = join(at, key::co2_shard::offset);
    std::string elementsPath = join(at, key::co2_shard::elements);
    CO2Shard shard;
    shard.offset =
        integer(require(list[r], at, key::co2_shard::offset), offsetPath, 0);
    shard.elements = integer(require(list[r], at, key::co2_shard::elements),
                             elementsPath, 0);
    const int64_t start = static_cast<int64_t>(r) * shardElements;
    if (shard.offset != start)
      error(offsetPath, "expected " + std::to_string(r) + " x " + shardName +
                            " = " + std::to_string(start) + ", got " +
                            std::to_string(shard.offset));
    if (shard.elements > shardElements)
      error(elementsPath, std::to_string(shard.elements) + " is more than " +
                              shardName + " (" + std::to_string(shardElements) +
                              ")");
    if (!full && shard.elements > 0)
      error(elementsPath, "a slice after one that is not full must be "
                          "empty (the slices follow each other)");
    full = shard.elements == shardElements;
    layout.push_back(shard);
  }
  if (full)
    error(path, "leaves no room for the loss slot (every slice holds " +
                    shardName + " parameter elements)");
  return layout;
}

ZeroSpec ManifestParser::zero(const json &value, const std::string &path,
                              const MeshSpec &mesh) {
  expectObject(value, path);
  ZeroSpec zero;
  std::string stagePath = join(path, key::zero::stage);
  zero.stage =
      integer(require(value, path, key::zero::stage), stagePath, INT64_MIN);
  if (zero.stage < 1 || zero.stage > 3)
    error(stagePath, "must be 1 (sharded optimizer state), 2 (sharded "
                     "optimizer state and gradients) or 3 (sharded "
                     "optimizer state, gradients and params), got " +
                         std::to_string(zero.stage));
  std::string ranksPath = join(path, key::zero::ranks);
  zero.ranks =
      integer(require(value, path, key::zero::ranks), ranksPath, INT64_MIN);
  if (zero.ranks < 2)
    error(ranksPath, "must be at least 2 (the ranks the optimizer state is "
                     "split over), got " +
                         std::to_string(zero.ranks));
  // Over the job's ranks, or with tensor or pipeline parallelism over the
  // data-parallel ones (Manifest::zeroRank).
  const bool grid = mesh.axes.size() > 1;
  const int64_t over = grid ? mesh.axisSize("dp") : mesh.ranks();
  if (zero.ranks != over)
    error(ranksPath,
          std::to_string(zero.ranks) + " ranks, but the artifact runs on " +
              (mesh.axes.empty() ? std::string("1 rank (no mesh)")
                                 : std::to_string(mesh.ranks()) + " (mesh " +
                                       mesh.describe() + ")") +
              (grid ? "; ZeRO splits the state over the ranks of the mesh's "
                      "dp axis"
                    : "; ZeRO splits the state over every rank of the job"));
  return zero;
}

CompressionSpec ManifestParser::compression(const json &value,
                                            const std::string &path,
                                            const Manifest &manifest) {
  expectObject(value, path);
  CompressionSpec spec;
  auto field = [&](const char *key) -> const json & {
    return require(value, path, key);
  };
  std::string methodPath = join(path, key::compression::method);
  spec.method = string(field(key::compression::method), methodPath);
  static const std::set<std::string> methods{"bf16", "powersgd", "quant",
                                             "topk", "lgreco"};
  if (!methods.count(spec.method))
    error(methodPath, "unknown method \"" + spec.method +
                          "\" (expected bf16, powersgd, quant, topk or "
                          "lgreco)");
  spec.rank = integer(field(key::compression::rank),
                      join(path, key::compression::rank), 0);
  spec.bits = integer(field(key::compression::bits),
                      join(path, key::compression::bits), 0);
  spec.density = number(field(key::compression::density),
                        join(path, key::compression::density));
  spec.warmupSteps = integer(field(key::compression::warmup_steps),
                             join(path, key::compression::warmup_steps), 0);
  spec.resolveEvery = integer(field(key::compression::resolve_every),
                              join(path, key::compression::resolve_every), 0);
  std::string objectivePath = join(path, key::compression::objective);
  spec.objective = string(field(key::compression::objective), objectivePath);
  if (spec.objective != "time" && spec.objective != "bytes")
    error(objectivePath,
          "expected \"time\" or \"bytes\", got \"" + spec.objective + "\"");
  spec.errorMeasure = "absolute";
  if (const json *measure = optional(value, key::compression::error)) {
    std::string at = join(path, key::compression::error);
    spec.errorMeasure = string(*measure, at);
    if (spec.errorMeasure != "relative" && spec.errorMeasure != "absolute")
      error(at, "expected \"relative\" or \"absolute\", got \"" +
                    spec.errorMeasure + "\"");
  }
  spec.linkGbps = number(field(key::compression::link_gbps),
                         join(path, key::compression::link_gbps));
  if (!(spec.linkGbps > 0))
    error(join(path, key::compression::link_gbps), "must be positive");
  spec.linkLatencyUs = number(field(key::compression::link_latency_us),
                              join(path, key::compression::link_latency_us));
  if (!(spec.linkLatencyUs >= 0))
    error(join(path, key::compression::link_latency_us),
          "must not be negative");
  if (spec.method == "lgreco" && spec.warmupSteps < 1)
    error(join(path, key::compression::warmup_steps),
          "lgreco measures after at least one warm-up step");
  std::string slotsPath = join(path, key::compression::slots);
  const json &list = expectArray(field(key::compression::slots), slotsPath);
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = index(slotsPath, i);
    expectObject(list[i], at);
    CompressionSpec::Slot slot;
    slot.param = string(require(list[i], at, key::compression_slot::param),
                        join(at, key::compression_slot::param));
    slot.rows = integer(require(list[i], at, key::compression_slot::rows),
                        join(at, key::compression_slot::rows), 1);
    slot.cols = integer(require(list[i], at, key::compression_slot::cols),
                        join(at, key::compression_slot::cols), 1);
    const TensorSpec *param = manifest.findParam(slot.param);
    if (!param)
      error(join(at, key::compression_slot::param),
            "no param named \"" + slot.param + "\"");
    else if (numElements(param->shape) != slot.rows * slot.cols)
      error(at, "param \"" + slot.param + "\" has shape " +
                    shapeToString(param->shape) + ", not " +
                    std::to_string(slot.rows) + " x " +
                    std::to_string(slot.cols) + " elements");
    spec.slots.push_back(std::move(slot));
  }
  return spec;
}

void ManifestParser::tensorSplit(const json &value, const std::string &path,
                                 const MeshSpec &mesh, TensorSpec &spec,
                                 const TensorSpec *owner) {
  const json *found = optional(value, key::tensor::tensor_split);
  const std::string splitPath = join(path, key::tensor::tensor_split);
  if (owner && owner->split.enabled() != bool(found))
    error(found ? splitPath : path, "the state of param '" + owner->name +
                                        "' must be split as the " + "param is" +
                                        (found ? " (it is not)" : ""));
  if (!found)
    return;
  expectObject(*found, splitPath);
  TensorSplitSpec &split = spec.split;
  split.dim = integer(require(*found, splitPath, key::tensor_split::dim),
                      join(splitPath, key::tensor_split::dim), 0);
  split.blocks = integer(require(*found, splitPath, key::tensor_split::blocks),
                         join(splitPath, key::tensor_split::blocks), 1);
  split.axis = string(require(*found, splitPath, key::tensor_split::axis),
                      join(splitPath, key::tensor_split::axis));
  split.parts = mesh.axisSize(split.axis);
  // ZeRO-1 and 2 shard the optimizer state of a rank's part over the
  // data-parallel ranks: a slice of the part, whose shape is the param's.
  if (spec.sharded && !(owner && !owner->sharded))
    error(splitPath, "a param is split by ZeRO (sharded) or by tensor "
                     "parallelism, not both");
  const Shape &part = spec.sharded ? owner->shape : spec.shape;
  if (split.dim >= static_cast<int64_t>(part.size()) ||
      part[split.dim] % split.blocks != 0)
    error(splitPath, "dimension " + std::to_string(split.dim) + " of " +
                         shapeToString(part) + " is not " +
                         std::to_string(split.blocks) + " equal blocks");
  if (split.parts < 2)
    error(join(splitPath, key::tensor_split::axis),
          "\"" + split.axis +
              "\" is not an axis of the mesh of 2 ranks or "
              "more");
  if (owner &&
      (owner->split.dim != split.dim || owner->split.blocks != split.blocks ||
       owner->split.axis != split.axis))
    error(splitPath, "the state of param '" + owner->name +
                         "' must be split as the param is");
  spec.fullShape = part;
  spec.fullShape[split.dim] *= split.parts;
}

PipelineSpec ManifestParser::pipeline(const json &value,
                                      const std::string &path,
                                      const MeshSpec &mesh) {
  expectObject(value, path);
  PipelineSpec spec;
  spec.stages = integer(require(value, path, key::pipeline::stages),
                        join(path, key::pipeline::stages), 2);
  spec.microBatches =
      integer(require(value, path, key::pipeline::micro_batches),
              join(path, key::pipeline::micro_batches), 1);
  std::string axisPath = join(path, key::pipeline::axis);
  spec.axis = string(require(value, path, key::pipeline::axis), axisPath);
  if (mesh.axisSize(spec.axis) != spec.stages ||
      std::find(mesh.axes.begin(), mesh.axes.end(), spec.axis) ==
          mesh.axes.end())
    error(axisPath, "\"" + spec.axis + "\" is not a mesh axis of " +
                        std::to_string(spec.stages) + " ranks (the stages)");
  return spec;
}

void ManifestParser::pipelineStages(const json &value, const std::string &path,
                                    const PipelineSpec &pipeline,
                                    TensorSpec &spec, const TensorSpec *owner) {
  const json *found = optional(value, key::tensor::pipeline_stages);
  const std::string stagesPath = join(path, key::tensor::pipeline_stages);
  if (!found) {
    if (pipeline.enabled() && (!owner || !owner->pipelineStages.empty()))
      error(path, "a tensor of a pipelined artifact needs pipeline_stages");
    return;
  }
  if (!pipeline.enabled())
    error(stagesPath, "pipeline_stages without a pipeline");
  const json &list = expectArray(*found, stagesPath);
  for (size_t i = 0; i < list.size(); ++i) {
    int64_t stage = integer(list[i], index(stagesPath, i), 0);
    if (stage >= pipeline.stages ||
        (!spec.pipelineStages.empty() && stage <= spec.pipelineStages.back()))
      error(index(stagesPath, i), "stages are increasing and below " +
                                      std::to_string(pipeline.stages));
    spec.pipelineStages.push_back(stage);
  }
  if (spec.pipelineStages.empty())
    error(stagesPath, "a tensor is held by at least one stage");
  if (owner && owner->pipelineStages != spec.pipelineStages)
    error(stagesPath, "the state of param '" + owner->name +
                          "' is held by the stages that hold the param");
}

} // namespace loom::rt
