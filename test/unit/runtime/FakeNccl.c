/*===- FakeNccl.c - A scripted libnccl.so.2 stand-in ----------------------===*
 *
 * NCCL's nonblocking mode (runtime/src/cuda/NcclComm.h) is what stops a job
 * from hanging when a rank never joins, and a real NCCL needs GPUs and
 * peers to show it: a peer that never arrives cannot be staged on one
 * machine. This library has every function the plugin resolves; each call
 * that can be nonblocking does what the test scripted for it (answer at
 * once, or report ncclInProgress for some polls of ncclCommGetAsyncError
 * and then an outcome, or forever), and counts what the plugin did.
 *
 *===----------------------------------------------------------------------===*/
#include <nccl.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

struct ncclComm {
  int unused;
};

/* What the next scripted call does. */
static ncclResult_t scriptResult = ncclSuccess;
static int scriptPolls = 0; /* < 0: ncclInProgress forever */
static ncclResult_t scriptOutcome = ncclSuccess;

/* The state ncclCommGetAsyncError reports. */
static int pendingPolls = 0;
static ncclResult_t pendingOutcome = ncclSuccess;

static struct ncclComm theComm;
static int version = 22803;
static const char *lastError = "";

struct FakeNcclCounts {
  int inits, polls, finalizes, destroys, aborts, lastBlocking, collectives;
};
static struct FakeNcclCounts counts;

FAKE_EXPORT void fakeNcclReset(void) {
  scriptResult = ncclSuccess;
  scriptPolls = 0;
  scriptOutcome = ncclSuccess;
  pendingPolls = 0;
  pendingOutcome = ncclSuccess;
  version = 22803;
  lastError = "";
  memset(&counts, 0, sizeof(counts));
  counts.lastBlocking = -1;
}

/* The next init, collective or finalize returns `result`; when that is
 * ncclInProgress, the state is ncclInProgress for `polls` polls (< 0:
 * always), then `outcome`. */
FAKE_EXPORT void fakeNcclScript(ncclResult_t result, int polls,
                                ncclResult_t outcome) {
  scriptResult = result;
  scriptPolls = polls;
  scriptOutcome = outcome;
}

FAKE_EXPORT void fakeNcclSetVersion(int code) { version = code; }

FAKE_EXPORT void fakeNcclCounts(struct FakeNcclCounts *out) { *out = counts; }

/* Applies the script to one call and resets it to "succeed at once". */
static ncclResult_t scripted(void) {
  ncclResult_t result = scriptResult;
  if (result == ncclInProgress) {
    pendingPolls = scriptPolls;
    pendingOutcome = scriptOutcome;
  } else if (result != ncclSuccess) {
    lastError = "fake NCCL: the call was rejected";
  }
  scriptResult = ncclSuccess;
  scriptPolls = 0;
  scriptOutcome = ncclSuccess;
  return result;
}

FAKE_EXPORT ncclResult_t ncclGetVersion(int *out) {
  *out = version;
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0x11, sizeof(*id));
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                                ncclUniqueId id, int rank,
                                                ncclConfig_t *config) {
  (void)nranks;
  (void)id;
  (void)rank;
  ++counts.inits;
  counts.lastBlocking = config ? config->blocking : -1;
  ncclResult_t result = scripted();
  /* A call rejected at once makes no communicator. */
  *comm = (result == ncclSuccess || result == ncclInProgress) ? &theComm : 0;
  return result;
}

FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm,
                                               ncclResult_t *state) {
  (void)comm;
  ++counts.polls;
  if (pendingPolls != 0) {
    if (pendingPolls > 0)
      --pendingPolls;
    *state = ncclInProgress;
    return ncclSuccess;
  }
  *state = pendingOutcome;
  if (pendingOutcome != ncclSuccess)
    lastError = "fake NCCL: a peer left";
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  (void)comm;
  ++counts.finalizes;
  return scripted();
}

FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  (void)comm;
  ++counts.destroys;
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  (void)comm;
  ++counts.aborts;
  pendingPolls = 0;
  pendingOutcome = ncclSuccess;
  return ncclSuccess;
}

FAKE_EXPORT const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclInProgress:
    return "in progress";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInvalidArgument:
    return "invalid argument";
  default:
    return "other error";
  }
}

FAKE_EXPORT const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return lastError;
}

static ncclResult_t collective(void) {
  ++counts.collectives;
  return scripted();
}

FAKE_EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv,
                                       size_t count, ncclDataType_t type,
                                       ncclRedOp_t op, ncclComm_t comm,
                                       cudaStream_t stream) {
  (void)send, (void)recv, (void)count, (void)type, (void)op, (void)comm,
      (void)stream;
  return collective();
}

FAKE_EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv,
                                           size_t count, ncclDataType_t type,
                                           ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream) {
  (void)send, (void)recv, (void)count, (void)type, (void)op, (void)comm,
      (void)stream;
  return collective();
}

FAKE_EXPORT ncclResult_t ncclAllGather(const void *send, void *recv,
                                       size_t count, ncclDataType_t type,
                                       ncclComm_t comm, cudaStream_t stream) {
  (void)send, (void)recv, (void)count, (void)type, (void)comm, (void)stream;
  return collective();
}

FAKE_EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv,
                                       size_t count, ncclDataType_t type,
                                       int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  (void)send, (void)recv, (void)count, (void)type, (void)root, (void)comm,
      (void)stream;
  return collective();
}
