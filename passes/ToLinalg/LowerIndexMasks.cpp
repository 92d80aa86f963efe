//===- LowerIndexMasks.cpp - Masks by document indices to linalg
//-----------===//
//
// loom.segment_mask and loom.document_mask keep an entry of their input
// where index operands read along its rows and its columns agree, and
// write the fill elsewhere: one linalg.generic each, built by indexMask.
//
//===----------------------------------------------------------------------===//
#include "passes/ToLinalg/LinalgBuilders.h"

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"

namespace mlir::loom {
namespace {

/// An index operand [B, n] and the input dimension it is read along (at
/// (d0, d<dim>)): the rows (rank - 2) or the columns (rank - 1).
struct IndexOperand {
  Value value;
  int64_t dim;
};

/// input[b, ..., i, j] where `keep` (of the index operands' scalars, in
/// order) holds, `fill` elsewhere.
Value indexMask(PatternRewriter &rewriter, Location loc, Value input,
                double fill, ArrayRef<IndexOperand> indices,
                function_ref<Value(OpBuilder &, Location, ValueRange)> keep) {
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  AffineMap id = rewriter.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps{id};
  SmallVector<Value> ins{input};
  for (const IndexOperand &index : indices) {
    maps.push_back(AffineMap::get(
        rank, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(index.dim, ctx)},
        ctx));
    ins.push_back(index.value);
  }
  maps.push_back(id);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ins,
      ValueRange{emptyTensor(rewriter, loc, type)}, maps, iters,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value kept = keep(b, l, a.slice(1, indices.size()));
        linalg::YieldOp::create(
            b, l,
            arith::SelectOp::create(b, l, kept, a[0],
                                    floatConst(b, l, a[0].getType(), fill))
                .getResult());
      });
  return generic.getResult(0);
}

/// x[b, ..., i, j] = segments[b, i] == segments[b, j] ? x : fill; the
/// segments are read twice, along the rows and along the columns.
struct SegmentMaskLowering : OpRewritePattern<SegmentMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SegmentMaskOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    Value seg = op.getSegments();
    rewriter.replaceOp(
        op, indexMask(rewriter, op.getLoc(), op.getInput(),
                      op.getFill().convertToDouble(),
                      {{seg, rank - 2}, {seg, rank - 1}},
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        return arith::CmpIOp::create(
                            b, l, arith::CmpIPredicate::eq, a[0], a[1]);
                      }));
    return success();
  }
};

/// x[b, ..., i, j] = kdoc[b, j] == qdoc[b, i] && kpos[b, j] <= qpos[b, i]
/// ? x : fill; the query operands are read along the rows, the key ones
/// along the columns.
struct DocumentMaskLowering : OpRewritePattern<DocumentMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DocumentMaskOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    rewriter.replaceOp(
        op, indexMask(rewriter, op.getLoc(), op.getInput(),
                      op.getFill().convertToDouble(),
                      {{op.getQueryDocuments(), rank - 2},
                       {op.getQueryPositions(), rank - 2},
                       {op.getKeyDocuments(), rank - 1},
                       {op.getKeyPositions(), rank - 1}},
                      [](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value same = arith::CmpIOp::create(
                            b, l, arith::CmpIPredicate::eq, a[0], a[2]);
                        Value before = arith::CmpIOp::create(
                            b, l, arith::CmpIPredicate::sle, a[3], a[1]);
                        return arith::AndIOp::create(b, l, same, before);
                      }));
    return success();
  }
};

} // namespace

void populateIndexMaskLowerings(RewritePatternSet &patterns) {
  patterns.add<SegmentMaskLowering, DocumentMaskLowering>(
      patterns.getContext());
}

} // namespace mlir::loom
