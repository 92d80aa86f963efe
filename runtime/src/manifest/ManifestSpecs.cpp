//===- ManifestSpecs.cpp - Names and lookups of the manifest's types ------===//
//
// What the rest of the runtime asks of a parsed manifest; the parsing and
// its checks are Manifest.cpp's.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Manifest.h"

namespace loom::rt {

const char *argRoleName(ArgRole role) {
  switch (role) {
  case ArgRole::Param:
    return "param";
  case ArgRole::State:
    return "state";
  case ArgRole::Step:
    return "step";
  case ArgRole::Input:
    return "input";
  case ArgRole::Output:
    return "output";
  }
  return "?";
}

const char *taskKindName(TaskSpec::Kind kind) {
  switch (kind) {
  case TaskSpec::Kind::LM:
    return "lm";
  case TaskSpec::Kind::Classify:
    return "classify";
  case TaskSpec::Kind::None:
    return "none";
  }
  return "?";
}

int64_t TaskSpec::tokensPerStep() const {
  switch (kind) {
  case Kind::LM:
    return batch * seq;
  case Kind::Classify:
    return batch;
  case Kind::None:
    return 1;
  }
  return 1;
}

int64_t MeshSpec::ranks() const {
  int64_t product = 1;
  for (int64_t size : shape)
    product *= size;
  return product;
}

std::pair<int64_t, int64_t> MeshSpec::dataPosition(int64_t rank,
                                                   int64_t ranks) const {
  int64_t inner = 1;
  for (size_t i = axes.size(); i-- > 0;) {
    if (i >= shape.size())
      continue;
    if (axes[i] == "dp")
      return {(rank / inner) % shape[i], shape[i]};
    inner *= shape[i];
  }
  return {rank, ranks};
}

std::string MeshSpec::describe() const {
  std::string text;
  for (size_t i = 0; i < axes.size() && i < shape.size(); ++i)
    text += (i ? "," : "") + axes[i] + "=" + std::to_string(shape[i]);
  return text;
}

/// The stride of `axis` in the row-major numbering of the ranks, and its
/// size; (0, 1) without that axis.
static std::pair<int64_t, int64_t> strideOf(const MeshSpec &mesh,
                                            const std::string &axis) {
  int64_t stride = 1;
  for (size_t i = mesh.shape.size(); i-- > 0;) {
    if (i < mesh.axes.size() && mesh.axes[i] == axis)
      return {stride, mesh.shape[i]};
    stride *= mesh.shape[i];
  }
  return {0, 1};
}

int64_t MeshSpec::coordinate(int64_t rank, const std::string &axis) const {
  auto [stride, size] = strideOf(*this, axis);
  return stride ? (rank / stride) % size : 0;
}

int64_t MeshSpec::withCoordinate(int64_t rank, const std::string &axis,
                                 int64_t value) const {
  auto [stride, size] = strideOf(*this, axis);
  return rank + (value - coordinate(rank, axis)) * stride;
}

int64_t MeshSpec::axisSize(const std::string &axis) const {
  return strideOf(*this, axis).second;
}

std::string MeshSpec::layout() const {
  std::string text, inner;
  for (size_t i = 0; i < axes.size() && i < shape.size(); ++i) {
    text += (i ? " x " : "") + axes[i] + "=" + std::to_string(shape[i]);
    if (shape[i] > 1)
      inner = axes[i];
  }
  if (!inner.empty() && inner != axes.front())
    text += ", each " + inner + " group consecutive ranks";
  return text;
}

int64_t CO2Spec::paramElements() const {
  int64_t total = 0;
  for (const CO2Shard &shard : layout)
    total += shard.elements;
  return total;
}

int64_t ZeroSpec::shardElements(int64_t elements) const {
  return ranks > 0 ? elements / ranks + (elements % ranks != 0) : elements;
}

std::pair<int, int64_t> CO2Spec::lossSlot() const {
  // The slices are full up to the last parameter element (parsing checked),
  // so the first one that is not has the slot right after its elements.
  for (size_t rank = 0; rank < layout.size(); ++rank)
    if (layout[rank].elements < shardElements)
      return {static_cast<int>(rank), layout[rank].elements};
  return {-1, 0};
}

const EntryArg *EntrySpec::findOutput(const std::string &outputName) const {
  for (const EntryArg &arg : args)
    if (arg.role == ArgRole::Output && arg.name == outputName)
      return &arg;
  return nullptr;
}

static const TensorSpec *findIn(const std::vector<TensorSpec> &list,
                                const std::string &name) {
  for (const TensorSpec &spec : list)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

const TensorSpec *Manifest::findParam(const std::string &name) const {
  return findIn(params, name);
}
const TensorSpec *Manifest::findState(const std::string &name) const {
  return findIn(state, name);
}
const Shape &Manifest::wholeShape(const TensorSpec &spec) const {
  if (spec.split.enabled())
    return spec.fullShape;
  if (!spec.sharded)
    return spec.shape;
  // A param names no param; parsing checked that a sharded state tensor's
  // exists.
  if (spec.param.empty())
    return spec.fullShape;
  return wholeShape(*findParam(spec.param));
}
int64_t Manifest::zeroRank(int64_t rank) const {
  return mesh.axes.size() > 1 ? mesh.coordinate(rank, "dp") : rank;
}
const TensorSpec *Manifest::findInput(const std::string &name) const {
  return findIn(inputs, name);
}
const EntrySpec *Manifest::findEntry(const std::string &name) const {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

} // namespace loom::rt
