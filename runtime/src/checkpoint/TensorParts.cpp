//===- TensorParts.cpp - Tensor-parallel parts made whole for a save -----===//
#include "checkpoint/TensorParts.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"

#include <cstring>

namespace loom::rt {

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
    gathered.resize(count * size * comm.size());
    comm.allGather(tensor->data(), gathered.data(), count, tensor->dtype());
    auto whole = std::make_unique<Tensor>(tensor->name(), tensor->role(),
                                          mine.wholeShape, tensor->dtype());
    // Part p is the one of the rank of this rank's group at p.
    for (int64_t p = 0; p < mine.split.parts; ++p) {
      SliceOf part = mine;
      part.part = p;
      const int64_t from =
          manifest.mesh.withCoordinate(comm.rank(), mine.split.axis, p);
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

} // namespace loom::rt
