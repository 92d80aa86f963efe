//===- FinalizeComm.cpp - Drop meshes once collectives are calls ----------===//
#include "passes/Bufferize/Passes.h"

#include "dialects/Comm/IR/CommOps.h"

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
    WalkResult result = getOperation().walk([&](Operation *op) {
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
    for (Operation *mesh : meshes)
      mesh->erase();
  }
};

} // namespace
} // namespace mlir::loom
