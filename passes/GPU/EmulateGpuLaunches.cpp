//===- EmulateGpuLaunches.cpp - Run gpu.launch kernels on the CPU ---------===//
//
// For testing the GPU lowering without a GPU (loomc --emulate-gpu-kernels):
// the host code that --loom-gpu-host-to-device leaves and the kernels as
// mapped to blocks and threads run on the CPU, one thread after another.
// See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "loom-emulate-gpu-launches"

namespace mlir::loom {
#define GEN_PASS_DEF_EMULATEGPULAUNCHESPASS
#include "passes/GPU/Passes.h.inc"

namespace {

struct EmulateGpuLaunchesPass
    : impl::EmulateGpuLaunchesPassBase<EmulateGpuLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(launch)))
        return signalPassFailure();
    SmallVector<Operation *> memoryOps;
    getOperation().walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        memoryOps.push_back(op);
    });
    for (Operation *op : memoryOps)
      if (failed(toHost(op)))
        return signalPassFailure();
  }

  /// The launch as loops over blocks, then threads (z, y, x), each from the
  /// last index down with `reverse`, around a copy of its body.
  LogicalResult emulate(gpu::LaunchOp launch) {
    if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
        launch.hasClusterSize() || launch.getNumWorkgroupAttributions() ||
        launch.getNumPrivateAttributions() || !launch.getBody().hasOneBlock())
      return launch.emitError("cannot emulate a launch with async tokens, "
                              "clusters, attributions or several blocks");
    WalkResult threadOps = launch.getBody().walk([](Operation *op) {
      if (isa<gpu::BarrierOp, gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp,
              gpu::GridDimOp, gpu::ShuffleOp>(op))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (threadOps.wasInterrupted())
      return launch.emitError("cannot emulate a kernel that synchronises its "
                              "threads or reads their ids other than "
                              "through the launch's arguments");
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    gpu::KernelDim3 threadIds = launch.getThreadIds();
    gpu::KernelDim3 gridArgs = launch.getGridSize();
    gpu::KernelDim3 blockArgs = launch.getBlockSize();
    IRMapping mapping;
    for (auto [arg, size] :
         llvm::zip(SmallVector<Value>{gridArgs.x, gridArgs.y, gridArgs.z,
                                      blockArgs.x, blockArgs.y, blockArgs.z},
                   SmallVector<Value>{grid.x, grid.y, grid.z, block.x, block.y,
                                      block.z}))
      mapping.map(arg, size);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    std::pair<Value, Value> dims[] = {
        {blockIds.z, grid.z},   {blockIds.y, grid.y},   {blockIds.x, grid.x},
        {threadIds.z, block.z}, {threadIds.y, block.y}, {threadIds.x, block.x}};
    for (auto [id, size] : dims) {
      auto loop = scf::ForOp::create(b, loc, zero, size, one);
      b.setInsertionPointToStart(loop.getBody());
      Value index = loop.getInductionVar();
      if (reverse) {
        Value last = arith::SubIOp::create(b, loc, size, one);
        index = arith::SubIOp::create(b, loc, last, index);
      }
      mapping.map(id, index);
    }
    for (Operation &op : launch.getBody().front().without_terminator())
      b.clone(op, mapping);
    launch.erase();
    ++numEmulated;
    return success();
  }

  /// Device memory as host memory: gpu.alloc/dealloc/memcpy become their
  /// memref forms.
  LogicalResult toHost(Operation *op) {
    OpBuilder b(op);
    if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      if (alloc.getAsyncToken() || alloc.getHostShared())
        return alloc.emitError("cannot emulate an asynchronous or "
                               "host-shared gpu.alloc");
      auto host = memref::AllocOp::create(
          b, alloc.getLoc(), alloc.getMemref().getType(),
          alloc.getDynamicSizes(), alloc.getSymbolOperands());
      alloc.getMemref().replaceAllUsesWith(host.getResult());
    } else if (auto free = dyn_cast<gpu::DeallocOp>(op)) {
      if (free.getAsyncToken())
        return free.emitError("cannot emulate an asynchronous gpu.dealloc");
      memref::DeallocOp::create(b, free.getLoc(), free.getMemref());
    } else {
      auto copy = cast<gpu::MemcpyOp>(op);
      if (copy.getAsyncToken())
        return copy.emitError("cannot emulate an asynchronous gpu.memcpy");
      memref::CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getDst());
    }
    op->erase();
    return success();
  }
};

} // namespace
} // namespace mlir::loom
