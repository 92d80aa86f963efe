//===- CopiesToLinalg.cpp - memref.copy as linalg.copy --------------------===//
//
// Buffer copies become linalg.copy so that, on a GPU, they lower to kernels
// with the rest of the loop nests (a host memcpy cannot reach device
// memory).
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#define DEBUG_TYPE "loom-copies-to-linalg"

namespace mlir::loom {
#define GEN_PASS_DEF_COPIESTOLINALGPASS
#include "passes/GPU/Passes.h.inc"

namespace {

struct CopiesToLinalgPass : impl::CopiesToLinalgPassBase<CopiesToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
} // namespace mlir::loom
