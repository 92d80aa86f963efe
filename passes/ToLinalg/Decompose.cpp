//===- Decompose.cpp - Composite loom ops into primitives -----------------===//
#include "passes/ToLinalg/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// The masked dense scores of a document attention, [H, Nq, Nk]: the
/// scores as one batch of heads so that loom.document_mask (whose index
/// operands have a leading batch) applies.
static Value documentScores(LoomBuilder &lb, Value q, Value k, double scale,
                            ValueRange docs) {
  auto row = [&](Value x) -> Value {
    auto t = LoomBuilder::type(x);
    auto type = RankedTensorType::get({1, t.getDimSize(0)}, t.getElementType());
    return tensor::ExpandShapeOp::create(
        lb.b, lb.loc, type, x, ArrayRef<ReassociationIndices>{{0, 1}});
  };
  Value s = lb.scale(lb.matmul(q, k, false, true), scale);
  auto st = LoomBuilder::type(s);
  SmallVector<int64_t> shape{1};
  shape.append(st.getShape().begin(), st.getShape().end());
  Value batch = lb.reshape(s, shape);
  // One statement each: the IR's order must not depend on the compiler's
  // order of evaluating arguments.
  SmallVector<Value, 4> rows;
  for (Value d : docs)
    rows.push_back(row(d));
  Value masked =
      DocumentMaskOp::create(lb.b, lb.loc, batch, rows[0], rows[1], rows[2],
                             rows[3], lb.b.getF64FloatAttr(-INFINITY));
  return lb.reshape(masked, st.getShape());
}

/// True when the CPU runtime's kernel takes these operands (f32 or f64
/// values, i32 documents) and the pipeline keeps kernels.
static bool keptForRuntime(bool keep, Value query, Value docs) {
  Type et = LoomBuilder::type(query).getElementType();
  return keep && (et.isF32() || et.isF64()) &&
         LoomBuilder::type(docs).getElementType().isInteger(32);
}

/// The dense form of the runtime kernel's attention (other targets).
struct DecomposeDocumentAttention : OpRewritePattern<DocumentAttentionOp> {
  DecomposeDocumentAttention(MLIRContext *ctx, bool keep)
      : OpRewritePattern(ctx), keep(keep) {}
  bool keep;
  LogicalResult matchAndRewrite(DocumentAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (keptForRuntime(keep, op.getQuery(), op.getQueryDocuments()))
      return failure();
    LoomBuilder lb{rewriter, op.getLoc()};
    Value p = lb.softmax(documentScores(
        lb, op.getQuery(), op.getKey(), op.getScale().convertToDouble(),
        {op.getQueryDocuments(), op.getQueryPositions(), op.getKeyDocuments(),
         op.getKeyPositions()}));
    rewriter.replaceOp(op, lb.matmul(p, op.getValue(), false, false));
    return success();
  }
};

/// Its gradient, as loom.attention's VJP writes it.
struct DecomposeDocumentAttentionGrad
    : OpRewritePattern<DocumentAttentionGradOp> {
  DecomposeDocumentAttentionGrad(MLIRContext *ctx, bool keep)
      : OpRewritePattern(ctx), keep(keep) {}
  bool keep;
  LogicalResult matchAndRewrite(DocumentAttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    if (keptForRuntime(keep, op.getQuery(), op.getQueryDocuments()))
      return failure();
    LoomBuilder lb{rewriter, op.getLoc()};
    double scale = op.getScale().convertToDouble();
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
          dy = op.getDresult();
    Value p = lb.softmax(
        documentScores(lb, q, k, scale,
                       {op.getQueryDocuments(), op.getQueryPositions(),
                        op.getKeyDocuments(), op.getKeyPositions()}));
    Value dv = lb.matmul(p, dy, true, false);
    Value dp = lb.matmul(dy, v, false, true);
    Value ds =
        lb.scale(lb.mul(p, lb.sub(dp, lb.lastAxisSum(lb.mul(dp, p)))), scale);
    rewriter.replaceOp(op, {lb.matmul(ds, k, false, false),
                            lb.matmul(ds, q, true, false), dv});
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
    patterns.add<DecomposeDocumentAttention, DecomposeDocumentAttentionGrad>(
        &getContext(), keepRuntimeKernels);
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
