//===- Collectives.h - The communicator behind loom_rt_* --------*- C++ -*-===//
//
// Compiled code calls the abi.h collectives (loom_rt_all_reduce, ...) with no
// communicator argument, so the process has a current one
// (CurrentCommunicator.h): the Trainer (or a tool) installs its communicator
// for as long as compiled code may run, and without one the collectives use a
// LocalCommunicator (one rank), which is why single-process runs need no MPI
// initialisation.
//
// The collectives also count the time spent inside them and the time the
// caller spent blocked on them, which the trainer reports per step as
// comm_time_s and exposed_comm_s. In a multi-rank job they run on a
// communication thread in issue order (src/comm/CommQueue.h), which is what
// lets the asynchronous ones (loom_rt_*_start / loom_rt_wait) overlap with
// compute.
//
// Called from a cuda artifact's entry point (src/device/Device.h), the
// collectives take device buffers instead and go to a device communicator
// (NCCL), which enqueues them on the GPU's communication stream: nothing
// blocks the host, the starts overlap with the kernels issued before their
// waits, and the counters above get the collectives' GPU time and the
// compute stream's stalls for them (measured with events) when
// waitForAllCollectives drains the device.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_COLLECTIVES_H
#define LOOM_RUNTIME_COLLECTIVES_H

#include "loom/runtime/Communicator.h"
#include "loom/runtime/CurrentCommunicator.h"

#include <cstdint>

namespace loom::rt {

class Communicator;
class CommQueue;
class DeviceCommunicator;
struct MeshGroups;
struct MeshSpec;

/// Makes `comm` current until destroyed, then restores the previous one.
/// For a multi-rank `comm` that allows it, also starts the communication
/// thread that runs the loom_rt_* collectives (and stops it, after running
/// what is queued, when destroyed). While a cuda artifact is loaded it
/// instead connects the device communicator for them over `comm` (with
/// several ranks a collective call, which throws JobError/SilentError on
/// every rank if any rank cannot connect).
class ScopedCurrentCommunicator {
public:
  /// With a `mesh` of several axes, also connects the communicators of its
  /// groups (src/artifact/MeshGroups.h), which collectives of a group
  /// other than 0 run on.
  explicit ScopedCurrentCommunicator(Communicator &comm,
                                     const MeshSpec *mesh = nullptr);
  ~ScopedCurrentCommunicator();
  ScopedCurrentCommunicator(const ScopedCurrentCommunicator &) = delete;
  ScopedCurrentCommunicator &
  operator=(const ScopedCurrentCommunicator &) = delete;

private:
  Communicator *previous;
  CommQueue *previousQueue;
  CommQueue *ownQueue = nullptr;
  DeviceCommunicator *previousDevice = nullptr;
  DeviceCommunicator *ownDevice = nullptr;
  MeshGroups *previousGroups = nullptr;
  MeshGroups *ownGroups = nullptr;
};

/// Total seconds this process has spent inside loom_rt_* collectives (on
/// the communication thread when there is one; on a GPU, the collectives'
/// GPU time, counted at waitForAllCollectives).
double collectiveSeconds();

/// Total seconds the calling side has spent blocked on loom_rt_*
/// collectives: in loom_rt_wait, synchronous collectives and
/// waitForAllCollectives (on a GPU, the compute stream's stalls for them).
/// Communication not hidden behind compute.
double blockedCollectiveSeconds();

/// Whether loom_rt_*_start hands its collective to the communication
/// thread (true, the default) or, false, runs it on the caller at once, as
/// the synchronous form would (loom-run --async-collectives). The values
/// and the order of the collectives are the same either way; only where the
/// time goes differs. Set between steps, alike on every rank: MPI matches a
/// blocking collective with a blocking one only.
void setAsyncCollectives(bool async);
/// How many loom_rt_*_start calls on host buffers this process has made.
int64_t asyncStartsIssued();

/// Blocks until every collective issued so far has finished (counted as
/// blocked time); returns at once without a communication thread. With a
/// device communicator, waits until the GPU has finished them and its
/// kernels (not counted as blocked: the GPU's own stalls are).
void waitForAllCollectives();

/// The communicator of the current mesh's group `group` (0: every rank;
/// else the bit set of the mesh axes it spans, abi.h), or nullptr when no
/// such group is connected (no ScopedCurrentCommunicator with a mesh of
/// several axes).
Communicator *currentGroupCommunicator(int64_t group);

/// Whether the asynchronous collective `handle` (from a loom_rt_*_start
/// call) has finished. Never blocks: for work that advances between steps.
bool collectiveFinished(int64_t handle);

/// loom_rt_reduce_scatter_start without its copy of `send`: the caller keeps
/// `send` (count * ranks elements) untouched until the collective is done.
/// For a buffer as large as the model (CO2's sharded rounds), where the copy
/// would cost another model's worth of memory.
int64_t reduceScatterStartInPlace(const void *send, void *recv, int64_t count,
                                  DType dtype, ReduceOp op);
/// loom_rt_all_gather_start without its copy of `send` (count elements),
/// which the caller keeps untouched until the collective is done.
int64_t allGatherStartInPlace(const void *send, void *recv, int64_t count,
                              DType dtype);

} // namespace loom::rt

#endif // LOOM_RUNTIME_COLLECTIVES_H
