//===- NcclComm.h - NCCL communicators that cannot hang ---------*- C++ -*-===//
//
// Internal to libLoomCuda.so. A blocking ncclCommInitRank waits forever for
// a rank that died before joining (or that cannot reach this one), and
// nothing can interrupt it: the job hangs without a word. Loom's NCCL
// communicators are made in NCCL's nonblocking mode (ncclConfig_t.blocking
// = 0, NCCL 2.14+): every call may then return ncclInProgress, and the
// communicator's state (ncclCommGetAsyncError) is polled until NCCL is done,
// for at most the job's collective timeout; on a timeout or an error the
// communicator is aborted (ncclCommAbort returns even while the init waits
// for peers) and the call throws Error.
//
// NCCL_COMM_BLOCKING=1 in the environment overrides the config; the calls
// then block inside NCCL and no timeout applies.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_NCCLCOMM_H
#define LOOM_RUNTIME_SRC_CUDA_NCCLCOMM_H

#include "NcclLibrary.h"

namespace loom::rt::cuda {

/// A communicator of `ranks` ranks in which this process is `rank`, made in
/// nonblocking mode and waited for at most `timeoutSeconds` (0: forever).
/// Throws Error (after aborting what NCCL had made) on a failure or timeout.
ncclComm_t makeNcclComm(const NcclLibrary &nccl, int ranks,
                        const ncclUniqueId &id, int rank,
                        double timeoutSeconds);

/// Finishes a call on a nonblocking `comm` that returned `result`:
/// ncclInProgress waits until NCCL has done it, at most `timeoutSeconds`
/// (0: forever). Throws Error naming `call` when it failed or timed out;
/// the caller then aborts `comm`.
void finishNcclCall(const NcclLibrary &nccl, ncclComm_t comm,
                    ncclResult_t result, const char *call,
                    double timeoutSeconds);

/// Ends `comm`: after a failure (`failed`) ncclCommAbort, which does not
/// wait for peers; otherwise ncclCommFinalize, waited for like a call, then
/// ncclCommDestroy (an abort if the finalize fails). Never throws.
void closeNcclComm(const NcclLibrary &nccl, ncclComm_t comm, bool failed,
                   double timeoutSeconds);

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_NCCLCOMM_H
