//===- NcclComm.cpp - NCCL communicators that cannot hang -------*- C++ -*-===//
//
// See NcclComm.h.
//
//===----------------------------------------------------------------------===//

#include "NcclComm.h"
#include "loom/runtime/Error.h"
#include "support/Clock.h"

#include <thread>

namespace loom::rt::cuda {

void finishNcclCall(const NcclLibrary &nccl, ncclComm_t comm,
                    ncclResult_t result, const char *call,
                    double timeoutSeconds) {
  if (result != ncclInProgress) {
    nccl.check(result, call);
    return;
  }
  Clock::time_point start = Clock::now();
  usePreciseSleeps();
  int sleeps = 0;
  for (;;) {
    ncclResult_t state = ncclInProgress;
    nccl.check(nccl.ncclCommGetAsyncError(comm, &state),
               "ncclCommGetAsyncError");
    if (state == ncclSuccess)
      return;
    if (state != ncclInProgress)
      throw Error(nccl.errorText(state, call));
    if (timeoutSeconds > 0 && secondsSince(start) >= timeoutSeconds)
      fail("%s did not finish within %g s (--collective-timeout): another "
           "rank may have died or cannot reach this one (NCCL_DEBUG=INFO "
           "shows how far NCCL got)",
           call, timeoutSeconds);
    // A collective's launch finishes in microseconds (NCCL may run it on
    // a thread of its own and report ncclInProgress meanwhile), an init in
    // up to seconds: yield for the first 100 us, so a launch costs no
    // sleep's wake-up latency, then sleep 20 us, then 1 ms.
    if (Clock::now() - start < std::chrono::microseconds(100)) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(sleeps++ < 100 ? 20 : 1000));
  }
}

ncclComm_t makeNcclComm(const NcclLibrary &nccl, int ranks,
                        const ncclUniqueId &id, int rank,
                        double timeoutSeconds) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t result =
      nccl.ncclCommInitRankConfig(&comm, ranks, id, rank, &config);
  // Named as users know it: the config variant is an implementation detail.
  const char *call = "ncclCommInitRank";
  if (!comm) { // NCCL made nothing: no state to poll, nothing to abort
    bool claimsSuccess = result == ncclSuccess || result == ncclInProgress;
    throw Error(
        nccl.errorText(claimsSuccess ? ncclInternalError : result, call));
  }
  try {
    finishNcclCall(nccl, comm, result, call, timeoutSeconds);
  } catch (...) {
    nccl.ncclCommAbort(comm);
    throw;
  }
  return comm;
}

void closeNcclComm(const NcclLibrary &nccl, ncclComm_t comm, bool failed,
                   double timeoutSeconds) {
  if (!comm)
    return;
  if (!failed) {
    try {
      finishNcclCall(nccl, comm, nccl.ncclCommFinalize(comm),
                     "ncclCommFinalize", timeoutSeconds);
      nccl.ncclCommDestroy(comm);
      return;
    } catch (const std::exception &) {
      // A peer that left early: the abort below does not wait for it.
    }
  }
  nccl.ncclCommAbort(comm);
}

} // namespace loom::rt::cuda
