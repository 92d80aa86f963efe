//===- SplitDeallocs.cpp - Free a block's own allocations one by one ------===//
//
// Ownership-based deallocation ends a training step with one
// `bufferization.dealloc` listing every buffer the step allocated. Upstream
// simplification splits it after a may-alias query per pair of buffers,
// which made the bufferization stage quadratic in the model's depth. Buffers
// that are distinct allocations cannot alias, so their frees need no query.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "loom-split-deallocs"

namespace mlir::loom {
#define GEN_PASS_DEF_SPLITDEALLOCSPASS
#include "passes/Bufferize/Passes.h.inc"

namespace {

/// Whether `dealloc` unconditionally frees distinct allocations and keeps
/// nothing: then each of its buffers can simply be freed.
bool freesOwnAllocations(bufferization::DeallocOp dealloc) {
  if (!dealloc.getRetained().empty())
    return false;
  if (!llvm::all_of(dealloc.getConditions(),
                    [](Value c) { return matchPattern(c, m_One()); }))
    return false;
  llvm::SmallDenseSet<Value, 16> seen;
  return llvm::all_of(dealloc.getMemrefs(), [&](Value memref) {
    return memref.getDefiningOp<memref::AllocOp>() &&
           seen.insert(memref).second;
  });
}

struct SplitDeallocsPass : impl::SplitDeallocsPassBase<SplitDeallocsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk([&](bufferization::DeallocOp dealloc) {
      if (freesOwnAllocations(dealloc))
        deallocs.push_back(dealloc);
    });
    for (bufferization::DeallocOp dealloc : deallocs) {
      OpBuilder b(dealloc);
      for (Value memref : dealloc.getMemrefs())
        memref::DeallocOp::create(b, dealloc.getLoc(), memref);
      numFreed += dealloc.getMemrefs().size();
      dealloc.erase();
      ++numSplit;
    }
  }
};

} // namespace
} // namespace mlir::loom
