//===- NcclJoin.cpp - The ranks' NCCL communicator, together ----*- C++ -*-===//
//
// See NcclJoin.h.
//
//===----------------------------------------------------------------------===//

#include "NcclJoin.h"
#include "NcclComm.h"
#include "loom/runtime/Error.h"

#include <cstring>

namespace loom::rt::cuda {

std::string sharedGpuError(const std::vector<CUuuid> &uuids) {
  for (size_t b = 1; b < uuids.size(); ++b)
    for (size_t a = 0; a < b; ++a) {
      if (std::memcmp(uuids[a].bytes, uuids[b].bytes, sizeof(CUuuid)) != 0)
        continue;
      std::string hex;
      for (char byte : uuids[a].bytes)
        hex += formatString("%02x", static_cast<unsigned char>(byte));
      return formatString(
          "ranks %zu and %zu would share GPU %s, and NCCL needs a GPU of its "
          "own for every rank: start at most as many ranks per machine as it "
          "has GPUs, or give each rank its own (CUDA_VISIBLE_DEVICES)",
          a, b, hex.c_str());
    }
  return "";
}

ncclComm_t joinNcclRanks(Communicator &host, const NcclJoinDevice &device,
                         const NcclLibrary *&nccl) {
  std::string failure;
  nccl = nullptr;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  static_assert(sizeof(CUuuid) == 2 * sizeof(int64_t),
                "a UUID travels as two int64 values");
  CUuuid mine;
  std::memset(&mine, 0, sizeof(mine));
  try {
    nccl = &loadNccl();
    mine = device.uuid();
    if (host.isRoot())
      nccl->check(nccl->ncclGetUniqueId(&id), "ncclGetUniqueId");
  } catch (const std::exception &e) {
    failure = e.what();
  }
  agreeOnFailure(host, failure);
  std::vector<CUuuid> uuids(static_cast<size_t>(host.size()));
  host.allGather(&mine, uuids.data(), 2, DType::I64);
  // Every rank sees the same UUIDs, so all fail here together.
  if (std::string shared = sharedGpuError(uuids); !shared.empty())
    failTogether(host, shared);
  static_assert(sizeof(ncclUniqueId) % sizeof(int64_t) == 0,
                "the id travels as int64 values");
  host.broadcast(&id, sizeof(id) / sizeof(int64_t), DType::I64, 0);
  // A rank that died after the broadcast, or that cannot reach the others,
  // ends the init on the others at the collective timeout (NcclComm.h).
  ncclComm_t comm = nullptr;
  try {
    device.bind();
    comm = makeNcclComm(*nccl, host.size(), id, host.rank(),
                        host.collectiveTimeout());
  } catch (const std::exception &e) {
    failure = e.what();
  }
  try {
    // A rank that joined waits here for the slowest, whose init may take
    // the whole timeout: the agreement gets twice as long, so that rank
    // reports its timeout rather than the others' watchdogs a hang.
    const double timeout = host.collectiveTimeout();
    ScopedCollectiveTimeout patience(host, timeout > 0 ? 2 * timeout : 0);
    agreeOnFailure(host, failure);
  } catch (...) {
    // Another rank failed: this one's communicator has no peers to talk to.
    if (comm)
      nccl->ncclCommAbort(comm);
    throw;
  }
  return comm;
}

} // namespace loom::rt::cuda
