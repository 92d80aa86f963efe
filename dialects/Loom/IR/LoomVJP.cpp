//===- LoomVJP.cpp - Vector-Jacobian products of loom ops -----------------===//
//
// Each differentiable op builds its operand gradients from loom ops, so the
// backward pass is ordinary loom IR that every later pass (decomposition,
// fusion, lowering) treats like the forward pass.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomBuilder.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Ops without operands or without gradient
//===----------------------------------------------------------------------===//

LogicalResult GetParamOp::buildVJP(OpBuilder &, ValueRange,
                                   SmallVectorImpl<Value> &) {
  return success();
}

LogicalResult HeavisideOp::buildVJP(OpBuilder &, ValueRange,
                                    SmallVectorImpl<Value> &grads) {
  grads.assign(1, Value());
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.sumTo(rg[0], getLhs()), g.sumTo(rg[0], getRhs())});
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.sumTo(rg[0], getLhs()), g.sumTo(g.neg(rg[0]), getRhs())});
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.sumTo(g.mul(rg[0], getRhs()), getLhs()),
                g.sumTo(g.mul(rg[0], getLhs()), getRhs())});
  return success();
}

LogicalResult DivOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  // d(a/b)/db = -(a/b)/b: reuse the result instead of recomputing a/b^2.
  Value gOverB = g.div(rg[0], getRhs());
  grads.assign({g.sumTo(gOverB, getLhs()),
                g.sumTo(g.neg(g.mul(gOverB, getResult())), getRhs())});
  return success();
}

LogicalResult NegOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  grads.assign({LoomBuilder{b, getLoc()}.neg(rg[0])});
  return success();
}

LogicalResult ExpOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  grads.assign({LoomBuilder{b, getLoc()}.mul(rg[0], getResult())});
  return success();
}

LogicalResult LogOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  grads.assign({LoomBuilder{b, getLoc()}.div(rg[0], getInput())});
  return success();
}

LogicalResult TanhOp::buildVJP(OpBuilder &b, ValueRange rg,
                               SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  Value y = getResult();
  Value one = g.scalar(g.type(y).getElementType(), 1.0);
  grads.assign({g.mul(rg[0], g.sub(one, g.mul(y, y)))});
  return success();
}

LogicalResult SqrtOp::buildVJP(OpBuilder &b, ValueRange rg,
                               SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.scale(g.div(rg[0], getResult()), 0.5)});
  return success();
}

LogicalResult RsqrtOp::buildVJP(OpBuilder &b, ValueRange rg,
                                SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  // y = x^(-1/2)  =>  dy/dx = -y^3 / 2.
  Value y = getResult();
  grads.assign({g.scale(g.mul(rg[0], g.mul(y, g.mul(y, y))), -0.5)});
  return success();
}

LogicalResult ReluOp::buildVJP(OpBuilder &b, ValueRange rg,
                               SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.mul(rg[0], HeavisideOp::create(b, getLoc(), getInput()))});
  return success();
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, ValueRange rg,
                               SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  // y = 0.5 x (1 + t), t = tanh(u), u = c (x + a x^3)
  // dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
  const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
  Value x = getInput();
  Type et = g.type(x).getElementType();
  Value one = g.scalar(et, 1.0);
  Value x2 = g.mul(x, x);
  Value u = g.scale(g.add(x, g.scale(g.mul(x2, x), a)), c);
  Value t = TanhOp::create(b, getLoc(), u);
  Value left = g.scale(g.add(one, t), 0.5);
  Value dudx = g.scale(g.add(one, g.scale(x2, 3 * a)), c);
  Value right = g.mul(g.scale(x, 0.5), g.mul(g.sub(one, g.mul(t, t)), dudx));
  grads.assign({g.mul(rg[0], g.add(left, right))});
  return success();
}

LogicalResult SegmentMaskOp::buildVJP(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &grads) {
  grads.assign({SegmentMaskOp::create(b, getLoc(), rg[0], getSegments(),
                                      b.getF64FloatAttr(0.0)),
                Value()});
  return success();
}

LogicalResult DocumentMaskOp::buildVJP(OpBuilder &b, ValueRange rg,
                                       SmallVectorImpl<Value> &grads) {
  grads.assign(
      {DocumentMaskOp::create(b, getLoc(), rg[0], getQueryDocuments(),
                              getQueryPositions(), getKeyDocuments(),
                              getKeyPositions(), b.getF64FloatAttr(0.0)),
       Value(), Value(), Value(), Value()});
  return success();
}

LogicalResult CausalMaskOp::buildVJP(OpBuilder &b, ValueRange rg,
                                     SmallVectorImpl<Value> &grads) {
  grads.assign(
      {CausalMaskOp::create(b, getLoc(), rg[0], b.getF64FloatAttr(0.0))});
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and NN layers
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange rg,
                                 SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  Value dc = rg[0], a = getLhs(), bm = getRhs();
  bool ta = getTransposeA(), tb = getTransposeB();
  bool sharedRhs = g.type(bm).getRank() == 2 && g.type(a).getRank() > 2;

  // dA. With C = op(A) op(B): d op(A) = dC op(B)^T.
  Value da;
  if (!ta)
    da = g.matmul(dc, bm, false, !tb);
  else if (!sharedRhs)
    da = g.matmul(bm, dc, tb, true); // op(B) dC^T
  else
    da = g.transposeLast2(g.matmul(dc, bm, false, !tb));

  // dB. d op(B) = op(A)^T dC; a shared rhs sums over the batch, which one
  // GEMM over the flattened batch does.
  Value lhs = a, out = dc;
  bool lhsT = ta;
  if (sharedRhs) {
    if (ta) {
      lhs = g.transposeLast2(a);
      lhsT = false;
    }
    lhs = g.flatten2D(lhs);
    out = g.flatten2D(dc);
  }
  Value db =
      tb ? g.matmul(out, lhs, true, lhsT) : g.matmul(lhs, out, !lhsT, false);
  grads.assign({da, db});
  return success();
}

LogicalResult LinearOp::buildVJP(OpBuilder &b, ValueRange rg,
                                 SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  Value x = getInput(), w = getWeight();
  Value x2 = g.flatten2D(x), g2 = g.flatten2D(rg[0]);
  Value dx = g.reshape(g.matmul(g2, w, false, false), g.type(x).getShape());
  Value dw = g.matmul(g2, x2, true, false);
  grads.assign({dx, dw});
  if (getBias())
    grads.push_back(g.sum(g2, {0}, /*keepdim=*/false));
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  Value x = getInput(), w = getWeight(), dy = rg[0];
  Type et = g.type(x).getElementType();
  // Recompute the normalised input rather than keeping forward temporaries.
  Value xc = g.sub(x, g.lastAxisMean(x));
  Value var = g.lastAxisMean(g.mul(xc, xc));
  Value rstd = RsqrtOp::create(
      b, getLoc(), g.add(var, g.scalar(et, getEpsilon().convertToDouble())));
  Value xhat = g.mul(xc, rstd);
  ArrayRef<int64_t> d = g.type(w).getShape();
  Value dw = g.sumTo(g.mul(dy, xhat), d);
  Value db = g.sumTo(dy, d);
  Value dxhat = g.mul(dy, w);
  Value inner = g.sub(g.sub(dxhat, g.lastAxisMean(dxhat)),
                      g.mul(xhat, g.lastAxisMean(g.mul(dxhat, xhat))));
  grads.assign({g.mul(rstd, inner), dw, db});
  return success();
}

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ValueRange rg,
                                  SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  Value y = getResult();
  grads.assign({g.mul(y, g.sub(rg[0], g.lastAxisSum(g.mul(rg[0], y))))});
  return success();
}

LogicalResult DocumentAttentionOp::buildVJP(OpBuilder &b, ValueRange rg,
                                            SmallVectorImpl<Value> &grads) {
  auto grad = DocumentAttentionGradOp::create(
      b, getLoc(), getQuery(), getKey(), getValue(), rg[0], getQueryDocuments(),
      getQueryPositions(), getKeyDocuments(), getKeyPositions(),
      getScaleAttr());
  grads.assign({grad.getDquery(), grad.getDkey(), grad.getDvalue(), Value(),
                Value(), Value(), Value()});
  return success();
}

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  Value q = getQuery(), k = getKey(), v = getValue(), dy = rg[0];
  double scale = getEffectiveScale();
  // Recompute the attention probabilities P (not kept from the forward).
  Value p =
      g.softmax(g.attentionScores(q, k, scale, getCausal(), getSegments()));
  Value dv = g.matmul(p, dy, true, false);
  Value dp = g.matmul(dy, v, false, true);
  // Masked entries have P = 0, so dS is 0 there without another mask.
  // The gradient of the scaled scores; scaled before the GEMMs (fused into
  // the elementwise dS) so that, with bf16 GEMMs, dQ and dK round the same
  // operand as PyTorch's autograd does.
  Value ds = g.scale(g.mul(p, g.sub(dp, g.lastAxisSum(g.mul(dp, p)))), scale);
  Value dq = g.matmul(ds, k, false, false);
  Value dk = g.matmul(ds, q, true, false);
  grads.assign({dq, dk, dv});
  if (getSegments())
    grads.push_back(Value());
  return success();
}

LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  auto table = g.type(getTable());
  auto ids = cast<RankedTensorType>(getIndices().getType());
  int64_t n = ids.getNumElements(), vocab = table.getDimSize(0);
  // dTable = onehot(ids)^T dY: a scatter-add written as one GEMM.
  SmallVector<int64_t> hotShape(ids.getShape());
  hotShape.push_back(vocab);
  Value hot = OneHotOp::create(
      b, getLoc(), RankedTensorType::get(hotShape, table.getElementType()),
      getIndices());
  Value dtable =
      g.matmul(g.reshape(hot, {n, vocab}), g.flatten2D(rg[0]), true, false);
  grads.assign({dtable, Value()});
  return success();
}

LogicalResult CrossEntropyOp::buildVJP(OpBuilder &b, ValueRange rg,
                                       SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  auto logits = g.type(getLogits());
  int64_t positions = logits.getNumElements() / logits.getShape().back();
  Value hot = OneHotOp::create(b, getLoc(), logits, getTargets());
  Value diff = g.sub(g.softmax(getLogits()), hot);
  grads.assign({g.mul(diff, g.scale(rg[0], 1.0 / double(positions))), Value()});
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ValueRange rg,
                                  SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.reshape(rg[0], g.type(getInput()).getShape())});
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &grads) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  grads.assign({TransposeOp::create(b, getLoc(), rg[0], inverse)});
  return success();
}

LogicalResult BroadcastToOp::buildVJP(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({g.sumTo(rg[0], getInput())});
  return success();
}

LogicalResult SplitOp::buildVJP(OpBuilder &b, ValueRange rg,
                                SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  SmallVector<Value> pieces;
  for (auto [res, grad] : llvm::zip(getResults(), rg))
    pieces.push_back(grad ? grad : g.zerosLike(res.getType()));
  grads.assign({ConcatOp::create(b, getLoc(), pieces, getAxis())});
  return success();
}

LogicalResult ConcatOp::buildVJP(OpBuilder &b, ValueRange rg,
                                 SmallVectorImpl<Value> &grads) {
  auto split =
      SplitOp::create(b, getLoc(), getInputs().getTypes(), rg[0], getAxis());
  grads.assign(split.getResults().begin(), split.getResults().end());
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Spreads the gradient of a reduction back over the reduced axes.
static Value expandReduced(LoomBuilder &g, Value grad, Value input,
                           ArrayRef<int64_t> axes, bool keepdim) {
  auto in = LoomBuilder::type(input);
  SmallVector<int64_t> kept(in.getShape());
  for (int64_t a : axes)
    kept[a] = 1;
  Value withDims = keepdim ? grad : g.reshape(grad, kept);
  return g.broadcastTo(withDims, in.getShape());
}

LogicalResult SumOp::buildVJP(OpBuilder &b, ValueRange rg,
                              SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  grads.assign({expandReduced(g, rg[0], getInput(), getAxes(), getKeepdim())});
  return success();
}

LogicalResult MeanOp::buildVJP(OpBuilder &b, ValueRange rg,
                               SmallVectorImpl<Value> &grads) {
  LoomBuilder g{b, getLoc()};
  auto in = g.type(getInput());
  int64_t count = 1;
  for (int64_t a : getAxes())
    count *= in.getDimSize(a);
  Value spread = expandReduced(g, rg[0], getInput(), getAxes(), getKeepdim());
  grads.assign({g.scale(spread, 1.0 / double(count))});
  return success();
}
