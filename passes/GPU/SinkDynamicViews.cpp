//===- SinkDynamicViews.cpp - Views with runtime offsets into kernels -----===//
//
// Kernels take their memrefs as bare pointers (the 4352 bytes of PTX kernel
// parameters go further), which needs a layout known at compile time. A
// view whose offset is a runtime value (ZeRO's slice of a parameter at
// rank x slice size) has none, and `convert-gpu-to-nvvm` fails on the
// kernel taking it. Moved into the launch body, the view is rebuilt in
// the kernel from its source (a bare pointer) and its offset (an index
// argument).
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/RegionUtils.h"

#define DEBUG_TYPE "loom-sink-dynamic-views"

namespace mlir::loom {
#define GEN_PASS_DEF_SINKDYNAMICVIEWSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// A view whose layout has a dynamic offset or stride.
bool isDynamicView(Operation *op) {
  if (!isa<memref::SubViewOp, memref::ReinterpretCastOp>(op))
    return false;
  auto type = cast<MemRefType>(op->getResult(0).getType());
  int64_t offset;
  SmallVector<int64_t> strides;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return true;
  return ShapedType::isDynamic(offset) ||
         llvm::any_of(strides, ShapedType::isDynamic);
}

struct SinkDynamicViewsPass
    : impl::SinkDynamicViewsPassBase<SinkDynamicViewsPass> {
  using Base::Base;

  // Upstream's sinkOperationsIntoLaunchOp sinks an op only when its
  // operands are already in the kernel; a view's source and offset need
  // not be, and become the kernel's arguments instead.
  void runOnOperation() override {
    getOperation().walk([&](gpu::LaunchOp launch) {
      Region &body = launch.getBody();
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(body, captured);
      OpBuilder b = OpBuilder::atBlockBegin(&body.front());
      for (Value v : captured) {
        Operation *view = v.getDefiningOp();
        if (!view || !isDynamicView(view))
          continue;
        Operation *copy = b.clone(*view);
        replaceAllUsesInRegionWith(v, copy->getResult(0), body);
      }
    });
  }
};

} // namespace
} // namespace mlir::loom
