//===- BufferRoots.h - Which buffers can overlap ----------------*- C++ -*-===//
//
// The loop-nest passes for GPUs (promote-accumulators, fuse-parallel-loops)
// need to know that two memrefs never overlap, and the CPU stage's
// hoist-deallocs and plan-buffers which allocation a view belongs to (so
// this lives in passes/Bufferize, which both of those libraries build on).
// Loom's functions get each buffer from an allocation or as an argument of
// an entry function, and the runtime gives every argument of an entry its
// own buffer (runtime/include/loom/runtime/abi.h): two views of different
// such roots are disjoint.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_BUFFERIZE_BUFFERROOTS_H
#define LOOM_PASSES_BUFFERIZE_BUFFERROOTS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::loom {

/// The buffer `value` views: its allocation or function argument.
Value rootBuffer(Value value);

/// Whether `root` is a buffer no other root overlaps: a fresh allocation,
/// or an argument of an entry function.
bool isDistinctBuffer(Value root);

/// The roots an op and the ops nested in it read and write.
struct BufferAccesses {
  llvm::SetVector<Value> reads, writes;
};

/// The accesses of `op` and everything nested in it, or failure if one of
/// them touches memory that is not a view of a distinct root (or has
/// effects it does not describe).
FailureOr<BufferAccesses> collectAccesses(Operation *op);

} // namespace mlir::loom

#endif // LOOM_PASSES_BUFFERIZE_BUFFERROOTS_H
