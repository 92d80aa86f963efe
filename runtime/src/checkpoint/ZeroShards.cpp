//===- ZeroShards.cpp - A ZeRO artifact's tensors in checkpoints --------===//
//
// All-gathers of the slices (host communicator, host buffers: a cuda
// artifact's tensors were downloaded first, as for any save).
//
//===----------------------------------------------------------------------===//

#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/World.h"

#include <cstring>

namespace loom::rt {

namespace {

/// The whole of sharded `slice` (`spec`) from every rank's slice: the
/// ranks' slices one after the other are the whole flattened tensor and
/// then the last slice's padding.
std::unique_ptr<Tensor> gatherWhole(Communicator &comm,
                                    const Manifest &manifest,
                                    const TensorSpec &spec, Tensor &slice,
                                    std::vector<char> &padded) {
  auto whole = std::make_unique<Tensor>(
      slice.name(), slice.role(), manifest.wholeShape(spec), slice.dtype());
  const size_t gatheredBytes = slice.byteSize() * comm.size();
  // Without padding the gather fills the whole tensor itself.
  void *into = whole->data();
  if (gatheredBytes != whole->byteSize()) {
    padded.resize(gatheredBytes);
    into = padded.data();
  }
  comm.allGather(slice.data(), into, slice.numElements(), slice.dtype());
  if (into != whole->data())
    std::memcpy(whole->data(), into, whole->byteSize());
  return whole;
}

} // namespace

std::vector<Tensor *>
wholeTensors(Communicator &comm, Artifact &artifact,
             const std::vector<Tensor *> &tensors,
             std::vector<std::unique_ptr<Tensor>> &gathered) {
  const Manifest &manifest = artifact.manifest();
  if (!manifest.zero.enabled())
    return tensors;
  // The gather's buffers hold zero.ranks slices; every rank fails alike.
  checkZeroJob(manifest, comm.size(), /*external=*/false);
  std::vector<Tensor *> whole;
  // One padded buffer for all tensors whose slices do not divide evenly.
  std::vector<char> padded;
  for (Tensor *tensor : tensors) {
    const TensorSpec *spec = shardedSpec(manifest, *tensor);
    if (!spec) {
      whole.push_back(tensor);
      continue;
    }
    gathered.push_back(gatherWhole(comm, manifest, *spec, *tensor, padded));
    whole.push_back(gathered.back().get());
  }
  return whole;
}

} // namespace loom::rt
