//===- DuplicateInits.cpp - One destination per op before bufferization ---===//
//
// CSE merges identical `tensor.empty` and zero `linalg.fill` ops, so every
// batched matmul of one shape starts from the same zero tensor. Bufferized,
// that tensor is one buffer that lives until its last use, and each matmul
// writing into it first copies it: a step of a GPT kept 32 MiB of zeros
// alive and copied them before every attention GEMM. With its own empty
// tensor and fill, each op gets a fresh buffer, filled in place, freed after
// its last use. The same holds for the fresh device buffers that
// comm.transfer_start uploads into.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/Passes.h"

#include "dialects/Comm/IR/CommOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#define DEBUG_TYPE "loom-duplicate-inits"

namespace mlir::loom {
#define GEN_PASS_DEF_DUPLICATEINITSPASS
#include "passes/Bufferize/Passes.h.inc"

namespace {

/// Gives every use of `op`'s result as a destination its own copy of `op`,
/// created just before the user (so that, bufferized, it is allocated when
/// needed), when `op` has several uses; erases `op` if nothing else uses it.
void duplicateForDestinations(Operation *op, int64_t &count) {
  Value result = op->getResult(0);
  if (result.hasOneUse() || result.use_empty())
    return;
  SmallVector<OpOperand *> destinations;
  for (OpOperand &use : result.getUses()) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    auto transfer = dyn_cast<comm::TransferStartOp>(use.getOwner());
    if ((dps && dps.isDpsInit(&use)) ||
        (transfer && &use == &transfer.getDestMutable()))
      destinations.push_back(&use);
  }
  OpBuilder b(op->getContext());
  for (OpOperand *use : destinations) {
    b.setInsertionPoint(use->getOwner());
    use->set(b.clone(*op)->getResult(0));
    ++count;
  }
  if (result.use_empty())
    op->erase();
}

struct DuplicateInitsPass : impl::DuplicateInitsPassBase<DuplicateInitsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t count = 0;
    // Fills first: their copies then share one empty tensor, which the
    // second walk splits as well.
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills)
      duplicateForDestinations(fill, count);
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk(
        [&](tensor::EmptyOp empty) { empties.push_back(empty); });
    for (tensor::EmptyOp empty : empties)
      duplicateForDestinations(empty, count);
    numDuplicated += count;
  }
};

} // namespace
} // namespace mlir::loom
