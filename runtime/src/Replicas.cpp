//===- Replicas.cpp - Do all ranks hold the same model? ---------*- C++ -*-===//
//
// Each rank hashes its params and state (SHA-256, in manifest order) and the
// ranks all-gather the digests, so every rank reaches the same verdict.
//
//===----------------------------------------------------------------------===//

#include "Replicas.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Sha256.h"

#include <cstring>
#include <vector>

namespace loom::rt {

std::string compareReplicas(Communicator &comm, Artifact &artifact) {
  if (comm.size() == 1)
    return "";
  std::string digests;
  for (auto *list : {&artifact.params(), &artifact.state()})
    for (const Tensor *tensor : *list)
      digests += sha256Hex(tensor->data(), tensor->byteSize());
  std::string digest = sha256Hex(digests.data(), digests.size());
  // 64 hex characters travel as 8 int64 values.
  constexpr int64_t kWords = 8;
  std::vector<int64_t> mine(kWords), all(kWords * comm.size());
  std::memcpy(mine.data(), digest.data(), 64);
  comm.allGather(mine.data(), all.data(), kWords, DType::I64);
  for (int peer = 1; peer < comm.size(); ++peer)
    if (std::memcmp(all.data(), all.data() + peer * kWords, 64) != 0)
      return formatString(
          "the ranks' models have diverged: rank %d's params or optimizer "
          "state differ from rank 0's, so the artifact's collectives do not "
          "keep the data-parallel replicas identical (a compiler bug); not "
          "saving a checkpoint of rank 0's model alone",
          peer);
  return "";
}

} // namespace loom::rt
