//===- LowerLocalComm.cpp - The comm ops that are local in the step ------===//
#include "passes/ToLinalg/LowerLocalComm.h"

#include "dialects/Comm/IR/CommOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

/// comm.fan_out matters to autodiff only (its gradient is an all-reduce):
/// in the step it is its operand.
struct FanOutLowering : OpRewritePattern<comm::FanOutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(comm::FanOutOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// comm.shard: this rank's part, a slice at its position in the group.
struct ShardLowering : OpRewritePattern<comm::ShardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(comm::ShardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto part = op.getType();
    int64_t dim = op.getDim();
    Value position = comm::GroupRankOp::create(
        rewriter, loc, rewriter.getIndexType(), op.getMeshAttr(), op.getAxes());
    SmallVector<OpFoldResult> offsets(part.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes,
        strides(part.getRank(), rewriter.getIndexAttr(1));
    offsets[dim] =
        arith::MulIOp::create(
            rewriter, loc, position,
            arith::ConstantIndexOp::create(rewriter, loc, part.getDimSize(dim)))
            .getResult();
    for (int64_t d : part.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, part, op.getInput(), offsets, sizes, strides);
    return success();
  }
};

/// comm.unshard matters to autodiff only (its gradient is a part): in the
/// step it is an all-gather.
struct UnshardLowering : OpRewritePattern<comm::UnshardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(comm::UnshardOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<comm::AllGatherOp>(
        op, op.getType(), op.getInput(), op.getMeshAttr(), op.getAxesAttr(),
        op.getDimAttr());
    return success();
  }
};

} // namespace

void mlir::loom::populateLocalCommLoweringPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FanOutLowering, ShardLowering, UnshardLowering>(
      patterns.getContext());
}
