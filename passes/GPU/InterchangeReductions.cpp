//===- InterchangeReductions.cpp - Reduction iterators innermost ----------===//
//
// A reduction over a leading dimension lowers to a sequential loop around
// a parallel one: on a GPU, a kernel launch per reduced row. With the
// reduction iterators last, the outputs form one parallel loop around the
// reduction: one kernel.
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "loom-interchange-reductions"

namespace mlir::loom {
#define GEN_PASS_DEF_INTERCHANGEREDUCTIONSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

struct InterchangeReductionsPass
    : impl::InterchangeReductionsPassBase<InterchangeReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      // Parallel iterators first, then the reductions, each in order.
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (bool reduction : {false, true})
        for (auto [dim, type] : llvm::enumerate(iterators))
          if (linalg::isReductionIterator(type) == reduction)
            order.push_back(dim);
      if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> made =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(made)) {
          op->emitOpError("has reduction iterators before parallel ones and "
                          "cannot be generalized to reorder them");
          return signalPassFailure();
        }
        generic = *made;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic->emitOpError("cannot interchange its iterators");
        return signalPassFailure();
      }
      ++numInterchanged;
    }
  }
};

} // namespace
} // namespace mlir::loom
