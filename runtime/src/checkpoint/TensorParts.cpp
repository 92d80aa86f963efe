//===- TensorParts.cpp - Tensor-parallel parts made whole for a save -----===//
#include "checkpoint/TensorParts.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"

#include <cstring>
#include <map>

namespace loom::rt {

namespace {

/// The group id (abi.h) of the ranks that differ along `axis` only.
int64_t axisGroup(const MeshSpec &mesh, const std::string &axis) {
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    if (mesh.axes[i] == axis)
      return int64_t(1) << i;
  return 0;
}

/// Gathers `values` (`count` elements of `dtype` on every rank) from the
/// ranks that differ from this one along `axis` only, in their order along
/// it, into `gathered`: over the axis's group communicator where it is
/// connected, else over the job's.
void gatherAlong(Communicator &comm, const MeshSpec &mesh,
                 const std::string &axis, const void *values, int64_t count,
                 DType dtype, std::vector<char> &gathered) {
  const size_t bytes = count * dtypeSize(dtype);
  Communicator *group = currentGroupCommunicator(axisGroup(mesh, axis));
  Communicator &over = group ? *group : comm;
  std::vector<char> all(bytes * over.size());
  over.allGather(values, all.data(), count, dtype);
  if (group) {
    gathered = std::move(all);
    return;
  }
  const int64_t size = mesh.axisSize(axis);
  gathered.resize(bytes * size);
  for (int64_t p = 0; p < size; ++p)
    std::memcpy(gathered.data() + p * bytes,
                all.data() + mesh.withCoordinate(comm.rank(), axis, p) * bytes,
                bytes);
}

/// A ZeRO-sharded `tensor`'s slices from the data-parallel ranks put
/// together: its param's values (or state) on this rank, a tensor-parallel
/// part where the param is split.
std::unique_ptr<Tensor> unsharded(Communicator &comm, const Manifest &manifest,
                                  const Tensor &tensor) {
  const TensorSpec &spec = *shardedSpec(manifest, tensor);
  const Shape &shape = spec.param.empty()
                           ? spec.fullShape
                           : manifest.findParam(spec.param)->shape;
  std::vector<char> gathered;
  gatherAlong(comm, manifest.mesh, "dp", tensor.data(), tensor.numElements(),
              tensor.dtype(), gathered);
  auto part = std::make_unique<Tensor>(tensor.name(), tensor.role(), shape,
                                       tensor.dtype());
  std::memcpy(part->data(), gathered.data(), part->byteSize());
  return part;
}

} // namespace

std::vector<Tensor *>
wholeTensors(Communicator &comm, Artifact &artifact,
             const std::vector<Tensor *> &tensors,
             std::vector<std::unique_ptr<Tensor>> &wholes) {
  const Manifest &manifest = artifact.manifest();
  std::vector<Tensor *> result;
  std::vector<char> gathered;
  for (Tensor *tensor : tensors) {
    SliceOf mine = sliceOf(manifest, *tensor, comm.rank());
    if (manifest.zero.enabled() && !manifest.zeroSavesShards() &&
        shardedSpec(manifest, *tensor)) {
      // First the data-parallel ranks' slices, then the parts.
      wholes.push_back(unsharded(comm, manifest, *tensor));
      tensor = wholes.back().get();
      mine.first = 0;
    }
    if (!mine.split.enabled()) {
      result.push_back(tensor);
      continue;
    }
    const int64_t count = tensor->numElements();
    const size_t size = dtypeSize(tensor->dtype());
    // Over the split's group where it is connected (a pipelined artifact's
    // stages hold different tensors); part p is the one of the rank of
    // this rank's group at p.
    gatherAlong(comm, manifest.mesh, mine.split.axis, tensor->data(), count,
                tensor->dtype(), gathered);
    auto whole = std::make_unique<Tensor>(tensor->name(), tensor->role(),
                                          mine.wholeShape, tensor->dtype());
    for (int64_t p = 0; p < mine.split.parts; ++p) {
      SliceOf part = mine;
      part.part = p;
      const char *source = gathered.data() + p * count * size;
      part.forEachRun(count, [&](int64_t at, int64_t offset, int64_t length) {
        std::memcpy(static_cast<char *>(whole->data()) + at * size,
                    source + offset * size, length * size);
      });
    }
    result.push_back(whole.get());
    wholes.push_back(std::move(whole));
  }
  return result;
}

std::vector<Tensor *>
tensorsOfAllStages(Communicator &comm, Artifact &artifact,
                   const std::vector<Tensor *> &tensors,
                   const std::vector<TensorSpec> &all, ArgRole role,
                   std::vector<std::unique_ptr<Tensor>> &wholes) {
  const Manifest &manifest = artifact.manifest();
  if (!manifest.pipeline.enabled())
    return tensors;
  std::map<std::string, Tensor *> mine;
  for (Tensor *tensor : tensors)
    mine[tensor->name()] = tensor;
  std::vector<Tensor *> result;
  for (const TensorSpec &spec : all) {
    const int root = static_cast<int>(manifest.mesh.withCoordinate(
        0, manifest.pipeline.axis, spec.pipelineStages.front()));
    auto whole = std::make_unique<Tensor>(
        spec.name, role, artifact.manifestOfAllStages().wholeShape(spec),
        spec.dtype);
    auto own = mine.find(spec.name);
    if (own != mine.end())
      std::memcpy(whole->data(), own->second->data(), whole->byteSize());
    comm.broadcast(whole->data(), whole->numElements(), whole->dtype(), root);
    result.push_back(whole.get());
    wholes.push_back(std::move(whole));
  }
  return result;
}

} // namespace loom::rt
