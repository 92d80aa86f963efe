//===- DataParallel.cpp - Gradient averaging over data-parallel ranks -----===//
#include "passes/Distribute/Mesh.h"
#include "passes/Distribute/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <numeric>

#define DEBUG_TYPE "loom-data-parallel"

namespace mlir::loom {
#define GEN_PASS_DEF_DATAPARALLELPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

struct DataParallelPass : impl::DataParallelPassBase<DataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto grad = module.lookupSymbol<func::FuncOp>("loss_and_grad");
    if (!grad) {
      module.emitError("no @loss_and_grad: run --loom-autodiff first");
      return signalPassFailure();
    }
    FailureOr<comm::MeshOp> mesh =
        getOrCreateMesh(module, meshName, axis, ranks);
    if (failed(mesh))
      return signalPassFailure();

    OpBuilder b(module.getContext());
    auto axes = b.getStrArrayAttr({axis});
    auto meshRef = FlatSymbolRefAttr::get(mesh->getSymNameAttr());
    auto ret = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
    b.setInsertionPoint(ret);
    // One collective per result, ordered by when the backward pass produces
    // the value (last layer first, as DDP does), so the overlap scheduler
    // can start each soon after its gradient exists. The order depends only
    // on the IR, so it is the same on every rank.
    llvm::DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(*ret->getBlock()))
      position[&op] = i;
    auto when = [&](Value v) -> int64_t {
      Operation *def = v.getDefiningOp();
      return def ? position.lookup(def) : -1;
    };
    SmallVector<unsigned> order(ret.getNumOperands());
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(order, [&](unsigned a, unsigned c) {
      return when(ret.getOperand(a)) < when(ret.getOperand(c));
    });
    SmallVector<Value> averaged(ret.getOperands());
    for (unsigned i : order) {
      Value v = averaged[i];
      averaged[i] = comm::AllReduceOp::create(b, ret.getLoc(), v.getType(), v,
                                              meshRef.getValue(), axes,
                                              comm::ReduceKind::mean);
      ++numAllReduces;
    }
    ret->setOperands(averaged);
  }
};

} // namespace
} // namespace mlir::loom
