//===- AsyncCollectives.cpp - Collectives into start/wait pairs -----------===//
#include "passes/Schedule/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "loom-async-collectives"

namespace mlir::loom {
#define GEN_PASS_DEF_ASYNCCOLLECTIVESPASS
#include "passes/Schedule/Passes.h.inc"

namespace {

/// Creates the start op of `op` with the same operands and attributes.
Operation *createStart(OpBuilder &b, Operation *op) {
  auto token = comm::TokenType::get(op->getContext());
  Type inflight = op->getResult(0).getType();
  StringRef name = TypeSwitch<Operation *, StringRef>(op)
                       .Case<comm::AllReduceOp>([](auto) {
                         return comm::AllReduceStartOp::getOperationName();
                       })
                       .Case<comm::ReduceScatterOp>([](auto) {
                         return comm::ReduceScatterStartOp::getOperationName();
                       })
                       .Case<comm::AllGatherOp>([](auto) {
                         return comm::AllGatherStartOp::getOperationName();
                       })
                       .Case<comm::BroadcastOp>([](auto) {
                         return comm::BroadcastStartOp::getOperationName();
                       });
  OperationState state(op->getLoc(), name);
  state.addOperands(op->getOperands());
  state.addTypes({token, inflight});
  state.addAttributes(op->getAttrs());
  if (auto props = op->getPropertiesAsAttribute())
    state.propertiesAttr = props;
  return b.create(state);
}

struct AsyncCollectivesPass
    : impl::AsyncCollectivesPassBase<AsyncCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<Operation *> collectives;
    getOperation().walk([&](Operation *op) {
      if (isa<comm::AllReduceOp, comm::ReduceScatterOp, comm::AllGatherOp,
              comm::BroadcastOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives) {
      OpBuilder b(op);
      Operation *start = createStart(b, op);
      Value result =
          comm::WaitOp::create(b, op->getLoc(), op->getResultTypes(),
                               start->getResult(0), start->getResult(1));
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
      ++numSplit;
    }
  }
};

} // namespace
} // namespace mlir::loom
