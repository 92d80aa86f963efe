//===- FuseElementwise.cpp - Elementwise fusion that keeps GEMMs ----------===//
#include "passes/ToLinalg/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "loom-fuse-elementwise"

namespace mlir::loom {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/ToLinalg/Passes.h.inc"

namespace {

struct FuseElementwisePass
    : impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    int64_t maxOperands = this->maxOperands;
    linalg::ControlFusionFn control = [maxOperands](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      Operation *consumer = fused->getOwner();
      // Only generic ops fuse: a named op (matmul, fill, reduce...) on either
      // side stays as it is so later passes can still recognise it.
      auto gp = dyn_cast_or_null<linalg::GenericOp>(producer);
      auto gc = dyn_cast<linalg::GenericOp>(consumer);
      if (!gp || !gc)
        return false;
      // A fused op's operands are a kernel's parameters on a GPU, which PTX
      // bounds (4352 bytes): unbounded, a 48-layer GPT's gradient norm,
      // 581 squares summed in one chain, became one kernel of 581 buffers
      // that ptxas refused. Cut there, the chain's order stays: the
      // partial sum goes through a 0-d buffer.
      if (gp.getNumDpsInputs() + gc.getNumOperands() - 1 > maxOperands)
        return false;
      // A producer a named op also uses stays materialised; fused, the
      // consumer would recompute it from its operands and keep those alive
      // as well (the backward pass recomputing attention probabilities
      // from the scores kept a second score tensor per layer).
      return llvm::all_of(fused->get().getUsers(), [](Operation *user) {
        return isa<linalg::GenericOp>(user);
      });
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::loom
