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
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      Operation *consumer = fused->getOwner();
      // Only generic ops fuse: a named op (matmul, fill, reduce...) on either
      // side stays as it is so later passes can still recognise it.
      if (!isa_and_nonnull<linalg::GenericOp>(producer) ||
          !isa<linalg::GenericOp>(consumer))
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
