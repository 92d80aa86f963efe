//===- PromoteAccumulators.cpp - Reduction accumulators in registers ------===//
//
// A reduction lowered to loops reads and writes its output element in every
// iteration. The compiler cannot keep it in a register, because the loads
// of the input might alias the store; on a GPU each iteration then waits
// for its load, unpipelined. Where the buffers are provably distinct, the
// accumulator becomes a loop-carried value, loaded once and stored once.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/BufferRoots.h"
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "loom-promote-accumulators"

namespace mlir::loom {
#define GEN_PASS_DEF_PROMOTEACCUMULATORSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// The load of `store`'s element that makes it an accumulator of `loop`
/// (whose accesses are all to views of distinct buffers): both in the
/// loop's body, the load first, at the same loop-invariant indices, and
/// nothing else in the loop touching that buffer. Null otherwise.
memref::LoadOp accumulatorLoad(scf::ForOp loop, memref::StoreOp store) {
  if (!loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
      !llvm::all_of(store.getIndices(), [&](Value index) {
        return loop.isDefinedOutsideOfLoop(index);
      }))
    return {};
  Value root = rootBuffer(store.getMemRef());
  memref::LoadOp load;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (op == store || !effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    if (llvm::none_of(instances, [&](const MemoryEffects::EffectInstance &e) {
          return e.getValue() && rootBuffer(e.getValue()) == root;
        }))
      return WalkResult::advance();
    auto read = dyn_cast<memref::LoadOp>(op);
    if (!read || load || read->getBlock() != store->getBlock() ||
        read.getMemRef() != store.getMemRef() ||
        read.getIndices() != store.getIndices() ||
        !read->isBeforeInBlock(store))
      return WalkResult::interrupt();
    load = read;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return {};
  return load;
}

struct PromoteAccumulatorsPass
    : impl::PromoteAccumulatorsPassBase<PromoteAccumulatorsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Innermost loops first: their accumulator's load and store then sit
    // in the enclosing loop's body, which promotes it again.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      while (promoteOne(rewriter, loop))
        ;
  }

  /// Promotes one accumulator of `loop` (updated to the new loop); false
  /// when there is none left.
  bool promoteOne(IRRewriter &rewriter, scf::ForOp &loop) {
    if (failed(collectAccesses(loop)))
      return false;
    for (Operation &op : *loop.getBody()) {
      auto store = dyn_cast<memref::StoreOp>(op);
      if (!store)
        continue;
      memref::LoadOp load = accumulatorLoad(loop, store);
      if (!load)
        continue;
      rewriter.setInsertionPoint(loop);
      Value initial =
          memref::LoadOp::create(rewriter, load.getLoc(), load.getMemRef(),
                                 load.getIndices(), load.getNontemporal());
      auto grown = cast<scf::ForOp>(
          *cast<LoopLikeOpInterface>(loop.getOperation())
               .replaceWithAdditionalYields(
                   rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
                   [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                     return SmallVector<Value>{store.getValueToStore()};
                   }));
      rewriter.replaceOp(load, grown.getRegionIterArgs().back());
      rewriter.setInsertionPointAfter(grown);
      memref::StoreOp::create(rewriter, store.getLoc(),
                              grown.getResults().back(), store.getMemRef(),
                              store.getIndices(), store.getNontemporal());
      rewriter.eraseOp(store);
      loop = grown;
      ++numPromoted;
      return true;
    }
    return false;
  }
};

} // namespace
} // namespace mlir::loom
