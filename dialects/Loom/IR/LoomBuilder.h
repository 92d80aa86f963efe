//===- LoomBuilder.h - Building loom IR from C++ ----------------*- C++ -*-===//
#ifndef LOOM_DIALECTS_LOOM_IR_LOOMBUILDER_H
#define LOOM_DIALECTS_LOOM_IR_LOOMBUILDER_H

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <numeric>

namespace mlir::loom {

/// A small vocabulary for building loom IR from C++: used by the VJP rules,
/// the decomposition patterns and the optimizer pass.
struct LoomBuilder {
  OpBuilder &b;
  Location loc;

  static RankedTensorType type(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  Value scalar(Type elementType, double value) {
    auto t = RankedTensorType::get({}, elementType);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, b.getFloatAttr(elementType, value)));
  }
  Value zerosLike(Type t) {
    auto rt = cast<RankedTensorType>(t);
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(rt, b.getFloatAttr(rt.getElementType(), 0.0)));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value scale(Value x, double s) {
    return mul(x, scalar(type(x).getElementType(), s));
  }
  Value matmul(Value x, Value y, bool ta, bool tb) {
    return MatmulOp::create(b, loc, x, y, ta, tb);
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    auto t = RankedTensorType::get(shape, type(x).getElementType());
    if (t == x.getType())
      return x;
    return ReshapeOp::create(b, loc, t, x);
  }
  Value sum(Value x, ArrayRef<int64_t> axes, bool keepdim) {
    return SumOp::create(b, loc, x, axes, keepdim);
  }
  Value mean(Value x, ArrayRef<int64_t> axes, bool keepdim) {
    return MeanOp::create(b, loc, x, axes, keepdim);
  }
  Value lastAxisSum(Value x) {
    return sum(x, {type(x).getRank() - 1}, /*keepdim=*/true);
  }
  Value lastAxisMean(Value x) {
    return mean(x, {type(x).getRank() - 1}, /*keepdim=*/true);
  }
  Value broadcastTo(Value x, ArrayRef<int64_t> shape) {
    auto t = RankedTensorType::get(shape, type(x).getElementType());
    if (t == x.getType())
      return x;
    return BroadcastToOp::create(b, loc, t, x);
  }
  Value transposeLast2(Value x) {
    SmallVector<int64_t> perm(type(x).getRank());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return TransposeOp::create(b, loc, x, perm);
  }
  /// Flattens every dimension but the last: [..., n] -> [N, n].
  Value flatten2D(Value x) {
    auto t = type(x);
    int64_t last = t.getShape().back();
    return reshape(x, {t.getNumElements() / last, last});
  }

  /// Reverses broadcasting: sums `grad` down to `shape`.
  Value sumTo(Value grad, ArrayRef<int64_t> shape) {
    auto gt = type(grad);
    if (gt.getShape() == shape)
      return grad;
    int64_t lead = gt.getRank() - int64_t(shape.size());
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < gt.getRank(); ++d)
      if (d < lead || (shape[d - lead] == 1 && gt.getDimSize(d) != 1))
        axes.push_back(d);
    Value summed = axes.empty() ? grad : sum(grad, axes, /*keepdim=*/true);
    return reshape(summed, shape);
  }
  Value sumTo(Value grad, Value like) {
    return sumTo(grad, type(like).getShape());
  }

  /// Softmax over the last axis, written so that the decomposition pass sees
  /// the same op the forward pass uses.
  Value softmax(Value x) { return SoftmaxOp::create(b, loc, x); }
  /// Attention's scores Q K^T * scale with the causal and segment masks
  /// (-inf where a query may not look): the forward decomposition and the
  /// backward pass's recomputation build the same ops.
  Value attentionScores(Value q, Value k, double s, bool causal,
                        Value segments) {
    Value scores = scale(matmul(q, k, false, true), s);
    FloatAttr minusInf = b.getF64FloatAttr(-INFINITY);
    if (causal)
      scores = CausalMaskOp::create(b, loc, scores, minusInf);
    if (segments)
      scores = SegmentMaskOp::create(b, loc, scores, segments, minusInf);
    return scores;
  }
  Value getParam(ParamOp p) {
    return GetParamOp::create(b, loc, p.getTensorType(), p.getSymName());
  }
};

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_LOOMBUILDER_H
