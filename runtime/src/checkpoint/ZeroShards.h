//===- ZeroShards.h - A ZeRO artifact's tensors in checkpoints --*- C++ -*-===//
//
// Internal to the runtime. Each rank of a ZeRO artifact holds a slice of
// every sharded tensor (Manifest.h: ZeroSpec): of the optimizer state, and
// at stage 3 of the params too. Its checkpoints are those of plain data
// parallelism: rank 0 writes the whole tensors, named and shaped as an
// artifact without ZeRO has them. So a checkpoint moves between ZeRO and
// plain data parallelism, and between rank counts, as it is. A save
// all-gathers the slices into whole tensors (wholeTensors); a load copies
// each rank's slice out of the whole one (CheckpointLoad.cpp, through
// sliceOf in Artifact.h, which initialisation uses too).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CHECKPOINT_ZEROSHARDS_H
#define LOOM_RUNTIME_SRC_CHECKPOINT_ZEROSHARDS_H

#include "loom/runtime/Artifact.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace loom::rt {

class Artifact;
class Communicator;
class Tensor;
struct Manifest;

/// `tensors` (the artifact's params, or its state) as a checkpoint holds
/// them, in their order: each sharded one all-gathered over `comm` into a
/// whole one (its wholeShape, the padding dropped) that `gathered` owns
/// (appended to), the others as they are. Collective where any of them is
/// sharded: every rank calls it at the same point with the same list, and
/// gathers the same tensors in the same order. The whole tensors take as
/// much memory as those of a replicated artifact; the caller drops them
/// after the save. Throws Error (on every rank) if `comm` is not the job
/// the artifact splits its tensors over (World.h: checkZeroJob).
std::vector<Tensor *>
wholeTensors(Communicator &comm, Artifact &artifact,
             const std::vector<Tensor *> &tensors,
             std::vector<std::unique_ptr<Tensor>> &gathered);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_CHECKPOINT_ZEROSHARDS_H
