//===- ReverseParallelLoops.cpp - Parallel loops run backwards ------------===//
//
// For testing the GPU's loop nests on the CPU (loomc --emulate-gpu-loops):
// the CPU runs an scf.parallel in order, so a dependence between its
// iterations, which the GPU would race on, would go unnoticed. Run
// backwards, such a dependence gives a wrong result.
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#define DEBUG_TYPE "loom-reverse-parallel-loops"

namespace mlir::loom {
#define GEN_PASS_DEF_REVERSEPARALLELLOOPSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

struct ReverseParallelLoopsPass
    : impl::ReverseParallelLoopsPassBase<ReverseParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](scf::ParallelOp loop) {
      OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
      Location loc = loop.getLoc();
      for (auto [iv, lb, ub, step] :
           llvm::zip(loop.getInductionVars(), loop.getLowerBound(),
                     loop.getUpperBound(), loop.getStep())) {
        // Iterations lb, lb + step, .., last: iv runs as last - (iv - lb).
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value span = arith::SubIOp::create(
            b, loc, arith::SubIOp::create(b, loc, ub, lb), one);
        Value last = arith::AddIOp::create(
            b, loc, lb,
            arith::MulIOp::create(
                b, loc, arith::DivUIOp::create(b, loc, span, step), step));
        auto offset = arith::SubIOp::create(b, loc, iv, lb);
        Value reversed = arith::SubIOp::create(b, loc, last, offset);
        iv.replaceAllUsesExcept(reversed, offset);
      }
    });
  }
};

} // namespace
} // namespace mlir::loom
