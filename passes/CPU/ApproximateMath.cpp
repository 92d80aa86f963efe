//===- ApproximateMath.cpp - Polynomial f32 transcendental functions ------===//
#include "passes/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "loom-approximate-math"

namespace mlir::loom {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "passes/CPU/Passes.h.inc"

namespace {

struct ApproximateMathPass
    : impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The patterns only match f32 (and vectors of it); f64 stays exact.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained(
          {"exp", "expm1", "log", "log1p", "log2", "tanh", "erf"},
          name.starts_with("math.") ? name.drop_front(5) : name);
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::loom
