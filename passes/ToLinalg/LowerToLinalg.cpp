//===- LowerToLinalg.cpp - Primitive loom ops to linalg/tensor/arith ------===//
#include "passes/ToLinalg/LinalgBuilders.h"
#include "passes/ToLinalg/LowerLocalComm.h"
#include "passes/ToLinalg/Passes.h"
#include "passes/ToLinalg/Philox.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/LoomShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <numeric>

#define DEBUG_TYPE "loom-lower-to-linalg"

namespace mlir::loom {
#define GEN_PASS_DEF_LOWERTOLINALGPASS
#include "passes/ToLinalg/Passes.h.inc"

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType t) {
  return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
}

Value floatConst(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
}

namespace {

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Value filled(OpBuilder &b, Location loc, RankedTensorType t, double v) {
  Value c = floatConst(b, loc, t.getElementType(), v);
  return linalg::FillOp::create(b, loc, c, emptyTensor(b, loc, t)).getResult(0);
}

/// The map reading an operand of `shape` inside a loop nest over `outShape`
/// under NumPy broadcasting (size-1 and missing dims read index 0).
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> outShape) {
  int64_t lead = outShape.size() - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(shape))
    exprs.push_back(d == 1 && outShape[lead + i] != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(lead + i, ctx));
  return AffineMap::get(outShape.size(), 0, exprs, ctx);
}

/// An elementwise linalg.generic over `outType` reading `ins` with
/// broadcasting; `body` maps the scalar inputs to the scalar output.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType outType,
                  ValueRange ins, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : ins)
    maps.push_back(
        broadcastMap(ctx, typeOf(in).getShape(), outType.getShape()));
  maps.push_back(b.getMultiDimIdentityMap(outType.getRank()));
  SmallVector<utils::IteratorType> iters(outType.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{outType}, ins,
             ValueRange{emptyTensor(b, loc, outType)}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, body(nb, nl, args.take_front(ins.size())));
             })
      .getResult(0);
}

/// Reshape through a rank-1 collapse and an expand; both are free after
/// bufferization and the canonicalizer folds adjacent pairs.
Value reshapeTensor(OpBuilder &b, Location loc, Value v, RankedTensorType to) {
  auto from = typeOf(v);
  if (from == to)
    return v;
  auto flatType =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  auto allDims = [](int64_t rank) {
    SmallVector<ReassociationIndices> r;
    if (rank > 0) {
      r.emplace_back(rank);
      std::iota(r[0].begin(), r[0].end(), 0);
    }
    return r;
  };
  Value flat = v;
  if (from.getRank() == 0)
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, v,
                                         SmallVector<ReassociationIndices>{});
  else if (from.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                           allDims(from.getRank()));
  if (to.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, to, flat,
                                           SmallVector<ReassociationIndices>{});
  if (to.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, to, flat, allDims(to.getRank()));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename SrcOp, typename ArithOp>
struct BinaryLowering : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op,
                                PatternRewriter &rewriter) const override {
    Value r = elementwise(rewriter, op.getLoc(), op.getType(),
                          {op.getLhs(), op.getRhs()},
                          [](OpBuilder &b, Location l, ValueRange a) -> Value {
                            return ArithOp::create(b, l, a[0], a[1]);
                          });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Unary ops: `Fn` builds the scalar body.
template <typename SrcOp>
struct UnaryLowering : OpRewritePattern<SrcOp> {
  using Fn = Value (*)(OpBuilder &, Location, Value);
  UnaryLowering(MLIRContext *ctx, Fn fn)
      : OpRewritePattern<SrcOp>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(SrcOp op,
                                PatternRewriter &rewriter) const override {
    Value r = elementwise(
        rewriter, op.getLoc(), op.getType(), {op.getInput()},
        [&](OpBuilder &b, Location l, ValueRange a) { return fn(b, l, a[0]); });
    rewriter.replaceOp(op, r);
    return success();
  }
  Fn fn;
};

Value geluScalar(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  auto c = [&](double v) { return floatConst(b, l, t, v); };
  Value x3 = arith::MulFOp::create(b, l, x, arith::MulFOp::create(b, l, x, x));
  Value inner = arith::MulFOp::create(
      b, l, c(std::sqrt(2.0 / M_PI)),
      arith::AddFOp::create(b, l, x,
                            arith::MulFOp::create(b, l, c(0.044715), x3)));
  Value t1 =
      arith::AddFOp::create(b, l, c(1.0), math::TanhOp::create(b, l, inner));
  return arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, c(0.5), x),
                               t1);
}

struct CausalMaskLowering : OpRewritePattern<CausalMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalMaskOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    double fillValue = op.getFill().convertToDouble();
    Value r = elementwise(
        rewriter, op.getLoc(), op.getType(), {op.getInput()},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value i = linalg::IndexOp::create(b, l, rank - 2);
          Value j = linalg::IndexOp::create(b, l, rank - 1);
          Value above =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt, j, i);
          return arith::SelectOp::create(
              b, l, above, floatConst(b, l, a[0].getType(), fillValue), a[0]);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class ReduceKind { Sum, Mean, Max };

template <typename SrcOp, ReduceKind Kind>
struct ReduceLowering : OpRewritePattern<SrcOp> {
  using OpRewritePattern<SrcOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(SrcOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto in = typeOf(op.getInput());
    Type et = in.getElementType();
    SmallVector<int64_t> reducedShape;
    int64_t count = 1;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      if (llvm::is_contained(op.getAxes(), d))
        count *= in.getDimSize(d);
      else
        reducedShape.push_back(in.getDimSize(d));
    }
    auto reducedType = RankedTensorType::get(reducedShape, et);
    Value init = filled(rewriter, loc, reducedType,
                        Kind == ReduceKind::Max ? -INFINITY : 0.0);
    Value r =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{op.getInput()}, ValueRange{init},
            op.getAxes(),
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value v =
                  Kind == ReduceKind::Max
                      ? arith::MaximumFOp::create(b, l, a[0], a[1]).getResult()
                      : arith::AddFOp::create(b, l, a[0], a[1]).getResult();
              linalg::YieldOp::create(b, l, v);
            })
            .getResult(0);
    if (Kind == ReduceKind::Mean) {
      double inv = 1.0 / double(count);
      r = elementwise(rewriter, loc, reducedType, {r},
                      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                        return arith::MulFOp::create(b, l, a[0],
                                                     floatConst(b, l, et, inv));
                      });
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, r, op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// Collapses the leading `n` dims of `v` into one.
Value collapseLeading(OpBuilder &b, Location loc, Value v, int64_t n) {
  auto t = typeOf(v);
  if (n == 1)
    return v;
  SmallVector<ReassociationIndices> r(1);
  for (int64_t i = 0; i < n; ++i)
    r[0].push_back(i);
  SmallVector<int64_t> shape{1};
  for (int64_t i = 0; i < n; ++i)
    shape[0] *= t.getDimSize(i);
  for (int64_t i = n; i < t.getRank(); ++i) {
    r.push_back({i});
    shape.push_back(t.getDimSize(i));
  }
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, r);
}

Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  auto t = typeOf(v);
  SmallVector<int64_t> perm(t.getRank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[t.getRank() - 1], perm[t.getRank() - 2]);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  Value init =
      emptyTensor(b, loc, RankedTensorType::get(shape, t.getElementType()));
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

/// A linalg matmul (batch > 0: batch_matmul) of `a` and `b` with transposes
/// expressed as operand indexing maps, so the runtime GEMM reads them as is.
Value namedMatmul(OpBuilder &b, Location loc, Value a, Value bm, bool ta,
                  bool tb, bool batched) {
  MLIRContext *ctx = b.getContext();
  auto at = typeOf(a), bt = typeOf(bm);
  int64_t r = at.getRank();
  int64_t m = at.getDimSize(ta ? r - 1 : r - 2);
  int64_t n = bt.getDimSize(tb ? r - 2 : r - 1);
  SmallVector<int64_t> shape;
  if (batched)
    shape.push_back(at.getDimSize(0));
  shape.append({m, n});
  auto outType = RankedTensorType::get(shape, at.getElementType());
  Value init = filled(b, loc, outType, 0.0);
  unsigned nd = batched ? 4 : 3;
  unsigned off = batched ? 1 : 0;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineExpr M = d(off), N = d(off + 1), K = d(off + 2);
  auto mk = [&](AffineExpr x, AffineExpr y) {
    SmallVector<AffineExpr> e;
    if (batched)
      e.push_back(d(0));
    e.append({x, y});
    return AffineMap::get(nd, 0, e, ctx);
  };
  SmallVector<Attribute> maps{AffineMapAttr::get(ta ? mk(K, M) : mk(M, K)),
                              AffineMapAttr::get(tb ? mk(N, K) : mk(K, N)),
                              AffineMapAttr::get(mk(M, N))};
  NamedAttribute attr(b.getStringAttr("indexing_maps"), b.getArrayAttr(maps));
  Operation *op = batched ? linalg::BatchMatmulOp::create(
                                b, loc, TypeRange{outType}, ValueRange{a, bm},
                                ValueRange{init}, {attr})
                                .getOperation()
                          : linalg::MatmulOp::create(b, loc, TypeRange{outType},
                                                     ValueRange{a, bm},
                                                     ValueRange{init}, {attr})
                                .getOperation();
  return op->getResult(0);
}

struct MatmulLowering : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = op.getLhs(), bm = op.getRhs();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    int64_t ra = typeOf(a).getRank(), rb = typeOf(bm).getRank();
    Value r;
    if (ra == 2) {
      r = namedMatmul(rewriter, loc, a, bm, ta, tb, false);
    } else if (rb == 2) {
      // A shared rhs: fold the batch into the rows of one GEMM.
      if (ta) {
        a = transposeLast2(rewriter, loc, a);
        ta = false;
      }
      r = namedMatmul(rewriter, loc, collapseLeading(rewriter, loc, a, ra - 1),
                      bm, false, tb, false);
    } else {
      r = namedMatmul(rewriter, loc, collapseLeading(rewriter, loc, a, ra - 2),
                      collapseLeading(rewriter, loc, bm, rb - 2), ta, tb, true);
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, r, op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shapes, lookups
//===----------------------------------------------------------------------===//

struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, op.getLoc(), op.getInput(), op.getType()));
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value init = emptyTensor(rewriter, op.getLoc(), op.getType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       op.getInput(), init,
                                                       op.getPermutation())
                               .getResult()[0]);
    return success();
  }
};

struct BroadcastToLowering : OpRewritePattern<BroadcastToOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastToOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op,
        elementwise(rewriter, op.getLoc(), op.getType(), {op.getInput()},
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

struct SplitLowering : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    auto in = typeOf(op.getInput());
    int64_t axis = op.getAxis(), offset = 0;
    SmallVector<Value> pieces;
    for (Value res : op.getResults()) {
      auto t = typeOf(res);
      SmallVector<int64_t> offsets(in.getRank(), 0), strides(in.getRank(), 1);
      offsets[axis] = offset;
      offset += t.getDimSize(axis);
      pieces.push_back(tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), t, op.getInput(), ValueRange{}, ValueRange{},
          ValueRange{}, offsets, t.getShape(), strides));
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    auto out = op.getType();
    Value acc = emptyTensor(rewriter, op.getLoc(), out);
    int64_t axis = op.getAxis(), offset = 0;
    for (Value in : op.getInputs()) {
      auto t = typeOf(in);
      SmallVector<int64_t> offsets(out.getRank(), 0), strides(out.getRank(), 1);
      offsets[axis] = offset;
      offset += t.getDimSize(axis);
      acc = tensor::InsertSliceOp::create(
          rewriter, op.getLoc(), in, acc, ValueRange{}, ValueRange{},
          ValueRange{}, offsets, t.getShape(), strides);
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// linalg.generic over `outType` whose body sees the index tensor's element
/// (as `index`) and the position along the last output dimension.
Value indexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType outType, Value indices,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = outType.getRank();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i + 1 < rank; ++i)
    idxExprs.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, idxExprs, ctx),
                              b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{outType}, ValueRange{indices},
             ValueRange{emptyTensor(b, loc, outType)}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value id = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                     args[0]);
               Value col = linalg::IndexOp::create(nb, nl, rank - 1);
               linalg::YieldOp::create(nb, nl, body(nb, nl, id, col));
             })
      .getResult(0);
}

struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Value table = op.getTable();
    rewriter.replaceOp(
        op, indexedGeneric(rewriter, op.getLoc(), op.getType(), op.getIndices(),
                           [&](OpBuilder &b, Location l, Value id, Value col) {
                             return tensor::ExtractOp::create(
                                 b, l, table, ValueRange{id, col});
                           }));
    return success();
  }
};

struct OneHotLowering : OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op,
                                PatternRewriter &rewriter) const override {
    Type et = op.getType().getElementType();
    rewriter.replaceOp(
        op, indexedGeneric(
                rewriter, op.getLoc(), op.getType(), op.getIndices(),
                [&](OpBuilder &b, Location l, Value id, Value col) -> Value {
                  Value eq = arith::CmpIOp::create(
                      b, l, arith::CmpIPredicate::eq, id, col);
                  return arith::SelectOp::create(b, l, eq,
                                                 floatConst(b, l, et, 1.0),
                                                 floatConst(b, l, et, 0.0));
                }));
    return success();
  }
};

struct LrScheduleLowering : OpRewritePattern<LrScheduleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LrScheduleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type et = op.getType().getElementType();
    auto c = [&](double v) { return floatConst(b, loc, et, v); };
    double lr = op.getLr().convertToDouble(),
           minLr = op.getMinLr().convertToDouble();
    double warmup = double(op.getWarmupSteps()),
           decay = double(op.getDecaySteps());
    Value s = arith::SIToFPOp::create(
        b, loc, et,
        tensor::ExtractOp::create(b, loc, op.getStep(), ValueRange{}));
    Value result = c(lr);
    if (decay > 0) {
      // progress = clamp((s - warmup) / decay, 0, 1)
      Value p = arith::DivFOp::create(
          b, loc, arith::SubFOp::create(b, loc, s, c(warmup)), c(decay));
      p = arith::MinimumFOp::create(
          b, loc, arith::MaximumFOp::create(b, loc, p, c(0.0)), c(1.0));
      Value cosv = math::CosOp::create(
          b, loc, arith::MulFOp::create(b, loc, p, c(M_PI)));
      Value half =
          arith::MulFOp::create(b, loc, c(0.5 * (lr - minLr)),
                                arith::AddFOp::create(b, loc, c(1.0), cosv));
      result = arith::AddFOp::create(b, loc, c(minLr), half);
    }
    if (warmup > 0) {
      Value inWarmup = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                             s, c(warmup));
      Value ramp = arith::MulFOp::create(b, loc, c(lr / warmup), s);
      result = arith::SelectOp::create(b, loc, inWarmup, ramp, result);
    }
    rewriter.replaceOp(op, tensor::FromElementsOp::create(b, loc, op.getType(),
                                                          ValueRange{result}));
    return success();
  }
};

/// a * x + b * z with z regenerated per element from its row-major index
/// (loom.perturb): the counter words other than the index are computed once
/// outside the kernel.
struct PerturbLowering : OpRewritePattern<PerturbOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PerturbOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    RankedTensorType type = op.getType();
    Type et = type.getElementType(), i32 = b.getI32Type();
    auto scalar = [&](Value t) {
      return tensor::ExtractOp::create(b, loc, t, ValueRange{}).getResult();
    };
    auto word = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v)));
    };
    Value step = arith::TruncIOp::create(b, loc, i32, scalar(op.getStep()));
    Value stream = word(op.getStreamAttr().getInt());
    Value direction = word(op.getDirectionAttr().getInt());
    if (Value offset = op.getOffset()) // wraps mod 2^32, as documented
      direction = arith::AddIOp::create(
          b, loc, direction,
          arith::TruncIOp::create(b, loc, i32, scalar(offset)));
    Value a = scalar(op.getA()), coef = scalar(op.getB());
    uint64_t seed = uint64_t(op.getSeedAttr().getInt());
    auto id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{op.getX()},
        ValueRange{emptyTensor(b, loc, type)}, ArrayRef<AffineMap>{id, id},
        iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value index;
          for (auto [d, size] : llvm::enumerate(type.getShape())) {
            Value i = linalg::IndexOp::create(nb, nl, d);
            index = index
                        ? arith::AddIOp::create(
                              nb, nl,
                              arith::MulIOp::create(
                                  nb, nl, index,
                                  arith::ConstantIndexOp::create(nb, nl, size)),
                              i)
                        : i;
          }
          if (!index)
            index = arith::ConstantIndexOp::create(nb, nl, 0);
          Value i = arith::IndexCastUIOp::create(nb, nl, i32, index);
          Value z = buildIrwinHallNormal(
              nb, nl, et,
              buildPhilox4x32(nb, nl, {i, stream, step, direction}, seed));
          Value ax = arith::MulFOp::create(nb, nl, a, args[0]);
          Value bz = arith::MulFOp::create(nb, nl, coef, z);
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddFOp::create(nb, nl, ax, bz)});
        });
    // A copy made again on purpose (kRematAttr) stays a copy of its own.
    if (Attribute remat = op->getAttr(kRematAttr))
      generic->setAttr(kRematAttr, remat);
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct LowerToLinalgPass : impl::LowerToLinalgPassBase<LowerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<BinaryLowering<AddOp, arith::AddFOp>,
                 BinaryLowering<SubOp, arith::SubFOp>,
                 BinaryLowering<MulOp, arith::MulFOp>,
                 BinaryLowering<DivOp, arith::DivFOp>,
                 BinaryLowering<MaximumOp, arith::MaximumFOp>,
                 BinaryLowering<MinimumOp, arith::MinimumFOp>,
                 ReduceLowering<SumOp, ReduceKind::Sum>,
                 ReduceLowering<MeanOp, ReduceKind::Mean>,
                 ReduceLowering<ReduceMaxOp, ReduceKind::Max>, MatmulLowering,
                 CausalMaskLowering, ReshapeLowering, TransposeLowering,
                 BroadcastToLowering, SplitLowering, ConcatLowering,
                 EmbeddingLowering, OneHotLowering, LrScheduleLowering,
                 PerturbLowering>(ctx);
    auto unary = [&](auto tag, Value (*fn)(OpBuilder &, Location, Value)) {
      using OpT = typename decltype(tag)::type;
      patterns.add<UnaryLowering<OpT>>(ctx, fn);
    };
    unary(llvm::type_identity<NegOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return arith::NegFOp::create(b, l, x);
          });
    unary(llvm::type_identity<ExpOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return math::ExpOp::create(b, l, x);
          });
    unary(llvm::type_identity<LogOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return math::LogOp::create(b, l, x);
          });
    unary(llvm::type_identity<TanhOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return math::TanhOp::create(b, l, x);
          });
    unary(llvm::type_identity<SqrtOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return math::SqrtOp::create(b, l, x);
          });
    unary(llvm::type_identity<RsqrtOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return math::RsqrtOp::create(b, l, x);
          });
    unary(llvm::type_identity<ReluOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            return arith::MaximumFOp::create(
                b, l, x, floatConst(b, l, x.getType(), 0.0));
          });
    unary(llvm::type_identity<HeavisideOp>(),
          [](OpBuilder &b, Location l, Value x) -> Value {
            Type t = x.getType();
            Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                              x, floatConst(b, l, t, 0.0));
            return arith::SelectOp::create(b, l, pos, floatConst(b, l, t, 1.0),
                                           floatConst(b, l, t, 0.0));
          });
    unary(llvm::type_identity<GeluOp>(), geluScalar);
    populateIndexMaskLowerings(patterns);
    populateLocalCommLoweringPatterns(patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect,
                           arith::ArithDialect, math::MathDialect,
                           func::FuncDialect,
                           bufferization::BufferizationDialect>();
    target.addLegalDialect<comm::CommDialect>();
    target.addIllegalOp<comm::FanOutOp, comm::ShardOp, comm::UnshardOp>();
    target.addIllegalDialect<LoomDialect>();
    // Bufferized into calls of the CPU runtime's kernels.
    target.addLegalOp<DocumentAttentionOp, DocumentAttentionGradOp>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::loom
