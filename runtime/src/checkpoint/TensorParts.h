//===- TensorParts.h - Tensor-parallel parts made whole ----*- C++ -*-===//
//
// Internal to the runtime. A tensor-parallel artifact's split params and
// their optimizer state hold one rank's part each (Manifest.h,
// TensorSplitSpec); its checkpoint holds the whole tensors, as one rank's
// would, so that it loads under any layout. Before a save every rank
// gathers the parts of its group and puts the whole tensors together; the
// replicas check and rank 0's write then see what a replicated run holds.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CHECKPOINT_TENSORPARTS_H
#define LOOM_RUNTIME_SRC_CHECKPOINT_TENSORPARTS_H

#include "loom/runtime/Manifest.h"

#include <memory>
#include <vector>

namespace loom::rt {

class Artifact;
class Communicator;
class Tensor;

/// `tensors` (of `artifact`) as a checkpoint holds them: each split one
/// replaced by its whole tensor, put together from the parts of the ranks
/// of its group (kept alive in `wholes`); with ZeRO beside tensor or
/// pipeline parallelism, each sharded one first put together from the
/// slices of the data-parallel ranks; the others as they are. Collective
/// over `comm`, the job's communicator: one all-gather per sharded tensor
/// and one per split tensor, in `tensors`' order, on every rank.
std::vector<Tensor *>
wholeTensors(Communicator &comm, Artifact &artifact,
             const std::vector<Tensor *> &tensors,
             std::vector<std::unique_ptr<Tensor>> &wholes);

/// A pipelined artifact's `tensors` (this rank's stage's, made whole by
/// wholeTensors) and those of every other stage, in the order of `all`
/// (the manifest's list of every stage's params or state, their role
/// `role`): each broadcast from the first rank of the first stage that
/// holds it (kept alive in `wholes`). Collective over `comm`, the job's
/// communicator: one broadcast per tensor of `all`, in order, on every
/// rank. `tensors` as they are for an artifact without a pipeline.
std::vector<Tensor *>
tensorsOfAllStages(Communicator &comm, Artifact &artifact,
                   const std::vector<Tensor *> &tensors,
                   const std::vector<TensorSpec> &all, ArgRole role,
                   std::vector<std::unique_ptr<Tensor>> &wholes);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CHECKPOINT_TENSORPARTS_H
