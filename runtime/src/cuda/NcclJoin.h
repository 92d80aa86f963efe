//===- NcclJoin.h - The ranks' NCCL communicator, made together -*- C++ -*-===//
//
// Internal to libLoomCuda.so. With several ranks every rank must reach
// every step of making the communicator, or the others wait for it forever.
// joinNcclRanks checks each step on every rank before the next (over the
// host communicator, MPI), so a rank that cannot go on ends all of them
// with one message.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_NCCLJOIN_H
#define LOOM_RUNTIME_SRC_CUDA_NCCLJOIN_H

#include "NcclLibrary.h"
#include "loom/runtime/Communicator.h"

#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

namespace loom::rt::cuda {

/// What joining needs from this rank's GPU: its UUID, and making it the
/// calling thread's (CudaDevice; stand-ins in tests).
struct NcclJoinDevice {
  std::function<CUuuid()> uuid;
  std::function<void()> bind;
};

/// The ranks of `host` (several) make one NCCL communicator:
///   1. every rank loads NCCL and reads its GPU's UUID; rank 0 makes the
///      ncclUniqueId;
///   2. the UUIDs are gathered: two ranks on one GPU fail every rank (NCCL
///      refuses them; comparing UUIDs rather than counting GPUs also
///      accepts launchers that show each rank only its own GPU);
///   3. rank 0's id is broadcast and every rank joins (makeNcclComm, for at
///      most the host's collective timeout).
/// After steps 1 and 3 the ranks agree on whether any failed
/// (agreeOnFailure: JobError on the lowest failing rank, SilentError on the
/// others; a communicator made meanwhile is aborted). Returns the
/// communicator and, in `nccl`, the library it belongs to.
ncclComm_t joinNcclRanks(Communicator &host, const NcclJoinDevice &device,
                         const NcclLibrary *&nccl);

/// Why ranks cannot each have their own GPU: "" when the UUIDs (one per
/// rank, in rank order) are distinct, else the two lowest ranks that share
/// one and what to do.
std::string sharedGpuError(const std::vector<CUuuid> &uuids);

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_NCCLJOIN_H
