//===- PreciseGpuSqrt.cpp - Correctly rounded square roots in kernels -----===//
//
// convert-gpu-to-nvvm turns math.sqrt/rsqrt into libdevice's __nv_sqrtf and
// __nv_rsqrtf, which pick the approximate PTX instructions unless the
// __CUDA_PREC_SQRT reflection says otherwise: a few ulp from the CPU path
// and from what nvcc (and so PyTorch) compiles by default. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "loom-precise-gpu-sqrt"

namespace mlir::loom {
#define GEN_PASS_DEF_PRECISEGPUSQRTPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// The correctly rounded NVVM square root of `x` (f32 or f64), as an
/// intrinsic call: convert-gpu-to-nvvm would turn llvm.intr.sqrt back into
/// libdevice's __nv_sqrtf.
Value preciseSqrt(PatternRewriter &rewriter, Location loc, Value x) {
  StringRef name =
      x.getType().isF32() ? "llvm.nvvm.sqrt.rn.f" : "llvm.nvvm.sqrt.rn.d";
  return LLVM::CallIntrinsicOp::create(rewriter, loc, x.getType(),
                                       rewriter.getStringAttr(name),
                                       ValueRange{x})
      .getResult(0);
}

bool isF32OrF64(Type type) { return type.isF32() || type.isF64(); }

/// math.sqrt -> sqrt.rn.
struct SqrtToIntrinsic : OpRewritePattern<math::SqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::SqrtOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF32OrF64(op.getType()))
      return failure();
    rewriter.replaceOp(op, preciseSqrt(rewriter, op.getLoc(), op.getOperand()));
    return success();
  }
};

/// math.rsqrt -> 1 / sqrt.rn (div.rn), as the CPU path lowers it
/// (convert-math-to-llvm).
struct RsqrtToDivide : OpRewritePattern<math::RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RsqrtOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isF32OrF64(type))
      return failure();
    Location loc = op.getLoc();
    Value root = preciseSqrt(rewriter, loc, op.getOperand());
    Value one = arith::ConstantOp::create(rewriter, loc, type,
                                          rewriter.getFloatAttr(type, 1.0));
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, root);
    return success();
  }
};

struct PreciseGpuSqrtPass : impl::PreciseGpuSqrtPassBase<PreciseGpuSqrtPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SqrtToIntrinsic, RsqrtToDivide>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::loom
