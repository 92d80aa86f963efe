//===- Decompose.cpp - Composite loom ops into primitives -----------------===//
#include "passes/ToLinalg/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

#define DEBUG_TYPE "loom-decompose"

namespace mlir::loom {
#define GEN_PASS_DEF_DECOMPOSEPASS
#include "passes/ToLinalg/Passes.h.inc"

namespace {

struct DecomposeLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    LoomBuilder lb{rewriter, op.getLoc()};
    Value y =
        lb.matmul(lb.flatten2D(op.getInput()), op.getWeight(), false, true);
    if (Value bias = op.getBias())
      y = lb.add(y, bias);
    rewriter.replaceOp(op, lb.reshape(y, op.getType().getShape()));
    return success();
  }
};

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    LoomBuilder lb{rewriter, op.getLoc()};
    Value x = op.getInput();
    Type et = op.getType().getElementType();
    Value xc = lb.sub(x, lb.lastAxisMean(x));
    Value var = lb.lastAxisMean(lb.mul(xc, xc));
    Value rstd = RsqrtOp::create(
        rewriter, op.getLoc(),
        lb.add(var, lb.scalar(et, op.getEpsilon().convertToDouble())));
    Value y = lb.add(lb.mul(lb.mul(xc, rstd), op.getWeight()), op.getBias());
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// exp(x - max(x)) along the last axis: the stable numerator of softmax.
static Value shiftedExp(LoomBuilder &lb, Value x, Value *shifted = nullptr) {
  int64_t last = LoomBuilder::type(x).getRank() - 1;
  Value m = ReduceMaxOp::create(lb.b, lb.loc, x, ArrayRef<int64_t>{last},
                                /*keepdim=*/true);
  Value z = lb.sub(x, m);
  if (shifted)
    *shifted = z;
  return ExpOp::create(lb.b, lb.loc, z);
}

struct DecomposeSoftmax : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    LoomBuilder lb{rewriter, op.getLoc()};
    Value e = shiftedExp(lb, op.getInput());
    rewriter.replaceOp(op, lb.div(e, lb.lastAxisSum(e)));
    return success();
  }
};

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    LoomBuilder lb{rewriter, op.getLoc()};
    Value p = lb.softmax(lb.attentionScores(op.getQuery(), op.getKey(),
                                            op.getEffectiveScale(),
                                            op.getCausal(), op.getSegments()));
    rewriter.replaceOp(op, lb.matmul(p, op.getValue(), false, false));
    return success();
  }
};

struct DecomposeCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    LoomBuilder lb{rewriter, op.getLoc()};
    Value logits = op.getLogits();
    auto type = LoomBuilder::type(logits);
    // loss_i = log(sum(exp(z_i))) - z_i[target], z = logits - rowmax.
    Value z;
    Value e = shiftedExp(lb, logits, &z);
    Value lse = LogOp::create(rewriter, op.getLoc(), lb.lastAxisSum(e));
    Value hot = OneHotOp::create(rewriter, op.getLoc(), type, op.getTargets());
    Value picked = lb.lastAxisSum(lb.mul(z, hot));
    SmallVector<int64_t> all(type.getRank());
    std::iota(all.begin(), all.end(), 0);
    rewriter.replaceOp(op, lb.mean(lb.sub(lse, picked), all, false));
    return success();
  }
};

struct DecomposePass : impl::DecomposePassBase<DecomposePass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeLinear, DecomposeLayerNorm, DecomposeSoftmax,
               DecomposeAttention, DecomposeCrossEntropy>(
      patterns.getContext());
}

} // namespace mlir::loom
