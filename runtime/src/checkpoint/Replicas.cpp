//===- Replicas.cpp - Do all ranks hold the same model? ---------*- C++ -*-===//
//
// Digests of every rank's tensors, all-gathered.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/Replicas.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Sha256.h"

#include <cstring>
#include <vector>

namespace loom::rt {

namespace {

/// The first rank whose tensors differ from rank 0's, or 0 if none does.
/// Each rank hashes its tensors (SHA-256, in order) and the ranks all-gather
/// the digests, so every rank reaches the same verdict.
int firstDiverging(Communicator &comm, const std::vector<Tensor *> &tensors) {
  std::string digests;
  for (const Tensor *tensor : tensors)
    digests += sha256Hex(tensor->data(), tensor->byteSize());
  std::string digest = sha256Hex(digests.data(), digests.size());
  // 64 hex characters travel as 8 int64 values.
  constexpr int64_t kWords = 8;
  std::vector<int64_t> mine(kWords), all(kWords * comm.size());
  std::memcpy(mine.data(), digest.data(), 64);
  comm.allGather(mine.data(), all.data(), kWords, DType::I64);
  for (int peer = 1; peer < comm.size(); ++peer)
    if (std::memcmp(all.data(), all.data() + peer * kWords, 64) != 0)
      return peer;
  return 0;
}

} // namespace

std::string compareReplicas(Communicator &comm,
                            const std::vector<Tensor *> &params,
                            const std::vector<Tensor *> &optimizerState) {
  if (comm.size() == 1)
    return "";
  std::vector<Tensor *> tensors = params;
  tensors.insert(tensors.end(), optimizerState.begin(), optimizerState.end());
  if (int peer = firstDiverging(comm, tensors))
    return formatString(
        "the ranks' models have diverged: rank %d's params or optimizer "
        "state differ from rank 0's, so the artifact's collectives do not "
        "keep the data-parallel replicas identical (a compiler bug); not "
        "saving a checkpoint of rank 0's model alone",
        peer);
  return "";
}

std::string compareReplicas(Communicator &comm,
                            const std::vector<Tensor *> &tensors,
                            const char *what) {
  if (comm.size() == 1)
    return "";
  if (int peer = firstDiverging(comm, tensors))
    return formatString("rank %d's %s differs from rank 0's, though every "
                        "rank computes it from the same values (a bug); not "
                        "saving a checkpoint",
                        peer, what);
  return "";
}

} // namespace loom::rt
