//===- ZOOffload.h - The zeroth-order step with offloaded parameters --*- C++
//-*-===//
//
// ZO2's schedule (Wang et al., "ZO2: Scalable Zeroth-Order Fine-Tuning for
// Extremely Large Language Models with Limited GPU Memory", 2025) as
// --loom-zo{offload} builds it: the parameters stay in host memory; each is
// uploaded once a step (comm.transfer_start), takes the previous step's
// update there (deferred: the projected gradient g is only known at the end
// of a step, and is carried to the next in the state "zo.pending"), is
// offloaded back, and serves both perturbed forward passes, which run
// interleaved op by op so that a parameter's uploaded copy lives only while
// its layer computes. Uploads run ahead of their first use by at most a
// byte budget. docs/zo.md describes it; the values are bit for bit those
// of the step without offloading.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TRAIN_ZOOFFLOAD_H
#define LOOM_PASSES_TRAIN_ZOOFFLOAD_H

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/runtime/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::loom {

/// The state that carries a step's (g, 1) (with directions=rank,
/// (g_0, .., g_N-1, 1)) to the next step's deferred update (zeros: nothing
/// pending).
constexpr StringLiteral kZOPendingState = LOOM_ZO_PENDING_STATE;
/// The entry that applies a pending update to every parameter (the
/// runtime calls it before a save, an evaluation and at the end).
constexpr StringLiteral kZOFlushEntry = LOOM_ZO_FLUSH_ENTRY;

/// What the schedule needs of the step being built.
struct ZOOffloadContext {
  mutable ModuleOp module;
  mutable func::FuncOp loss;
  ArrayRef<ParamOp> params;
  /// Each parameter's stream (its position in the manifest's params).
  const llvm::DenseMap<StringAttr, int64_t> &stream;
  double eps, lr, weightDecay;
  int64_t seed;
  /// The upload budget in bytes; 0: one layer's (defaultPrefetchBytes).
  int64_t prefetchBytes;
  /// The directions a step's update moves along: 1, or N with
  /// directions=rank.
  int64_t directions = 1;
  /// directions=rank: the forward passes' direction (this rank's index),
  /// the `offset` of their loom.perturb; null otherwise.
  Value ownDirection = {};
};

/// The losses at theta + s z for each scale s of `scales` (scalar tensors:
/// eps and -eps, or one pass at +-eps on each rank of a perturbation pair),
/// appended to `body` (the step's block; argument 0 is the step, then
/// @loss's inputs), with the previous step's deferred update applied to
/// every parameter first.
SmallVector<Value> buildOffloadedForwards(OpBuilder &b,
                                          const ZOOffloadContext &ctx,
                                          Block *body, ValueRange scales);

/// Rewrites @loss (the evaluation entry) to read each parameter from a
/// device copy uploaded before its first use, as the step does; call it
/// once the step is built (the step is a copy of @loss).
void offloadLossEntry(OpBuilder &b, const ZOOffloadContext &ctx);

/// Makes `gs` (scalar tensors, one per direction) the update the next step
/// applies.
void deferUpdate(OpBuilder &b, Location loc, ValueRange gs);

/// @zo_flush(%step): applies the pending update (of step %step) to every
/// parameter and clears it.
void buildFlushEntry(OpBuilder &b, const ZOOffloadContext &ctx);

/// One layer's bytes: the largest group of parameters whose names agree up
/// to their first all-digit component ("transformer.h.3" of
/// "transformer.h.3.attn.c_attn.weight"); a parameter without one is a
/// group of its own.
int64_t defaultPrefetchBytes(ArrayRef<ParamOp> params);

} // namespace mlir::loom

#endif // LOOM_PASSES_TRAIN_ZOOFFLOAD_H
