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

} // namespace

std::vector<Tensor *>
wholeTensors(Communicator &comm, Artifact &artifact,
             const std::vector<Tensor *> &tensors,
             std::vector<std::unique_ptr<Tensor>> &wholes) {
  const Manifest &manifest = artifact.manifest();
  std::vector<Tensor *> result;
  std::vector<char> gathered;
  for (Tensor *tensor : tensors) {
    const SliceOf mine = sliceOf(manifest, *tensor, comm.rank());
    if (!mine.split.enabled()) {
      result.push_back(tensor);
      continue;
    }
    const int64_t count = tensor->numElements();
    const size_t size = dtypeSize(tensor->dtype());
    // Over the split's group where it is connected (a pipelined artifact's
    // stages hold different tensors), its part p at p; else over the job.
    Communicator *group =
        currentGroupCommunicator(axisGroup(manifest.mesh, mine.split.axis));
    Communicator &over = group ? *group : comm;
    gathered.resize(count * size * over.size());
    over.allGather(tensor->data(), gathered.data(), count, tensor->dtype());
    auto whole = std::make_unique<Tensor>(tensor->name(), tensor->role(),
                                          mine.wholeShape, tensor->dtype());
    // Part p is the one of the rank of this rank's group at p.
    for (int64_t p = 0; p < mine.split.parts; ++p) {
      SliceOf part = mine;
      part.part = p;
      const int64_t from =
          group ? p
                : manifest.mesh.withCoordinate(comm.rank(), mine.split.axis, p);
      const char *source = gathered.data() + from * count * size;
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
        spec.name, role, spec.split.enabled() ? spec.fullShape : spec.shape,
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
