//===- CollapseParallelLoops.cpp - One-dimensional parallel loops ---------===//
//
// The GPU loop mapping puts a loop's first dimension on threadIdx.x. For
// row-major buffers that is the slowest index; collapsed into one
// dimension with the last varying fastest, neighbouring threads touch
// neighbouring elements (coalesced), whatever the rank.
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "loom-collapse-parallel-loops"

namespace mlir::loom {
#define GEN_PASS_DEF_COLLAPSEPARALLELLOOPSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

struct CollapseParallelLoopsPass
    : impl::CollapseParallelLoopsPassBase<CollapseParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 1 && !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
      ++numCollapsed;
    }
  }
};

} // namespace
} // namespace mlir::loom
