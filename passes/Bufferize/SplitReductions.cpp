//===- SplitReductions.cpp - Reductions with few outputs in two stages ----===//
//
// A GPU gives each output of a reduction one thread. Reductions with few
// outputs (bias and layer-norm gradients, norms, the loss) would run on a
// few hundred threads, or one, each looping over thousands of elements;
// split in two stages they run on tens of thousands.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "loom-split-reductions"

namespace mlir::loom {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "passes/Bufferize/Passes.h.inc"

namespace {

/// The iteration space of `op` split into outputs and reduced elements.
struct ReductionShape {
  int64_t outputs = 1;
  int64_t reduced = 1;
  SmallVector<unsigned> reductionDims;
};

std::optional<ReductionShape> reductionShape(linalg::LinalgOp op) {
  ReductionShape shape;
  for (auto [dim, size] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    if (linalg::isReductionIterator(op.getIteratorTypesArray()[dim])) {
      shape.reduced *= size;
      shape.reductionDims.push_back(dim);
    } else {
      shape.outputs *= size;
    }
  }
  return shape;
}

/// The number of partials per output: the power of two nearest below
/// sqrt(reduced), so that neither stage loops much longer than the other,
/// capped so that there are at most `threads` partials, and dividing
/// `reduced` (splitReduction needs it). 0 when splitting does not pay.
int64_t chooseRatio(const ReductionShape &shape, int64_t threads) {
  if (shape.outputs * 8 >= threads || shape.reduced < 64)
    return 0;
  int64_t ratio = int64_t(1) << (llvm::Log2_64(shape.reduced) / 2);
  ratio = std::min<int64_t>(
      ratio, llvm::PowerOf2Ceil(threads / shape.outputs + 1) / 2);
  while (ratio >= 4 && shape.reduced % ratio != 0)
    ratio /= 2;
  return ratio >= 4 ? ratio : 0;
}

struct SplitReductionsPass
    : impl::SplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      // GEMMs go to cuBLAS (loom-lower-gemm-to-runtime), which splits K
      // itself where that pays; split here they would be plain loops.
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        return;
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
          op.getNumDpsInits() == 1 && op->getNumResults() == 1 &&
          !op.hasIndexSemantics())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates)
      split(rewriter, op);
  }

  void split(IRRewriter &rewriter, linalg::LinalgOp op) {
    std::optional<ReductionShape> shape = reductionShape(op);
    if (!shape)
      return;
    int64_t ratio = chooseRatio(*shape, threads);
    if (ratio == 0)
      return;
    ArrayRef<unsigned> dims = shape->reductionDims;
    bool contiguous = dims.back() - dims.front() + 1 == dims.size();
    ReassociationIndices folded(dims.begin(), dims.end());
    if (dims.size() > 1 &&
        (!contiguous || !linalg::areDimSequencesPreserved(
                            op.getIndexingMapsArray(), {folded})))
      return;

    rewriter.setInsertionPoint(op);
    // Upstream's collapsing and splitting rewrite generic ops; a
    // linalg.reduce becomes the equivalent generic first.
    if (!isa<linalg::GenericOp>(op)) {
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic))
        return;
      op = *generic;
    }
    if (dims.size() > 1) {
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, {folded}, rewriter);
      if (failed(collapsed))
        return;
      rewriter.replaceOp(op, collapsed->results);
      op = collapsed->collapsedOp;
      ++numCollapsed;
    }
    unsigned reductionDim = dims.front();
    auto control = [&](linalg::LinalgOp) {
      linalg::SplitReductionOptions options;
      options.ratio = ratio;
      // The partials keep the outputs' order with P where the reduced
      // dimension was; the inner, strided split lets neighbouring threads
      // read neighbouring elements.
      options.index = reductionDim;
      options.innerParallel = true;
      return options;
    };
    rewriter.setInsertionPoint(op);
    if (succeeded(linalg::splitReduction(rewriter, op, control)))
      ++numSplit;
  }
};

} // namespace
} // namespace mlir::loom
