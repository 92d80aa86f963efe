//===- FinalizeComm.cpp - Drop meshes once collectives are calls ----------===//
#include "passes/Bufferize/Passes.h"

#include "passes/Bufferize/RuntimeCalls.h"

#include "dialects/Comm/IR/CommOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "loom-finalize-comm"

namespace mlir::loom {
#define GEN_PASS_DEF_FINALIZECOMMPASS
#include "passes/Bufferize/Passes.h.inc"

namespace {

struct FinalizeCommPass : impl::FinalizeCommPassBase<FinalizeCommPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> meshes;
    SmallVector<comm::GroupRankOp> ranks;
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (auto rank = dyn_cast<comm::GroupRankOp>(op)) {
        ranks.push_back(rank);
        return WalkResult::advance();
      }
      if (isa<comm::MeshOp>(op)) {
        meshes.push_back(op);
        return WalkResult::advance();
      }
      if (isa_and_present<comm::CommDialect>(op->getDialect())) {
        op->emitError("collective '")
            << op->getName() << "' left after bufferization";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (comm::GroupRankOp rank : ranks)
      if (failed(lowerGroupRank(rank)))
        return signalPassFailure();
    for (Operation *mesh : meshes)
      mesh->erase();
  }

  /// A rank's index is the runtime's to say: `loom_rt_group_rank(group)`.
  LogicalResult lowerGroupRank(comm::GroupRankOp op) {
    FailureOr<int64_t> group = runtimeGroup(op);
    if (failed(group))
      return failure();
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i64 = b.getI64Type();
    func::FuncOp fn = declareRuntimeFunction(op->getParentOfType<ModuleOp>(),
                                             "loom_rt_group_rank",
                                             b.getFunctionType({i64}, {i64}));
    Value id = arith::ConstantIntOp::create(b, loc, *group, 64);
    Value rank = func::CallOp::create(b, loc, fn, id).getResult(0);
    op.replaceAllUsesWith(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), rank).getResult());
    op.erase();
    return success();
  }
};

} // namespace
} // namespace mlir::loom
