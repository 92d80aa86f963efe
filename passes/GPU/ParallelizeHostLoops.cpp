//===- ParallelizeHostLoops.cpp - Host code as one-iteration nests --------===//
//
// What the loop mapping leaves outside parallel nests (a reduction to a
// scalar, the copy or fill of a 0-d buffer) would run, on a GPU, as a
// one-thread launch of its own (--loom-gpu-host-to-device). As a
// one-iteration parallel nest it is a kernel like the others, which
// --loom-fuse-parallel-loops can merge with its neighbours.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/BufferRoots.h"
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "loom-parallelize-host-loops"

namespace mlir::loom {
#define GEN_PASS_DEF_PARALLELIZEHOSTLOOPSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// Host code that touches memory, all of it views of distinct buffers.
bool touchesMemory(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp, scf::ForOp>(op) &&
         succeeded(collectAccesses(op));
}

/// Pure host arithmetic a run may hold.
bool pureScalar(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !op->hasTrait<OpTrait::IsTerminator>();
}

struct ParallelizeHostLoopsPass
    : impl::ParallelizeHostLoopsPassBase<ParallelizeHostLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      // A run starts at an op that touches memory.
      SmallVector<SmallVector<Operation *>> runs(1);
      for (Operation &op : block) {
        if (touchesMemory(&op) || (pureScalar(&op) && !runs.back().empty()))
          runs.back().push_back(&op);
        else if (!runs.back().empty())
          runs.emplace_back();
      }
      for (ArrayRef<Operation *> run : runs)
        wrap(run);
    }
  }

  /// Moves the run's ops into one one-iteration scf.parallel after it,
  /// except pure ops that code after the run uses and that depend on
  /// nothing moved (constants); gives up if a moved op's result is used
  /// after the run (a scalar the host needs).
  void wrap(ArrayRef<Operation *> run) {
    if (run.empty())
      return;
    llvm::SmallPtrSet<Operation *, 16> inRun(run.begin(), run.end()), moved;
    auto usedOutside = [&](Operation *op) {
      return llvm::any_of(op->getUsers(), [&](Operation *user) {
        return !inRun.contains(user);
      });
    };
    for (Operation *op : run) {
      bool dependsOnMoved = llvm::any_of(op->getOperands(), [&](Value v) {
        return v.getDefiningOp() && moved.contains(v.getDefiningOp());
      });
      if (pureScalar(op) && !dependsOnMoved && usedOutside(op))
        continue;
      if (usedOutside(op))
        return;
      moved.insert(op);
    }
    Operation *last = run.back();
    OpBuilder b(last->getBlock(), std::next(last->getIterator()));
    Location loc = last->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto nest = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                        ValueRange{one}, ValueRange{one});
    Operation *end = nest.getBody()->getTerminator();
    for (Operation *op : run)
      if (moved.contains(op))
        op->moveBefore(end);
  }
};

} // namespace
} // namespace mlir::loom
