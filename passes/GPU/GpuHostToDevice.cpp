//===- GpuHostToDevice.cpp - No device memory access on the host ----------===//
//
// After the loop nests were mapped to gpu.launch, a cuda artifact's host code
// may still read or write buffers: loops the mapping left (a reduction to a
// scalar), 0-d elementwise ops, the scalars the optimizer reads (the step,
// the learning rate). Every buffer is device memory, so each such access
// moves onto the GPU: into the kernels that use a scalar, or into one-thread
// launches of their own. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/BufferRoots.h"
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "loom-gpu-host-to-device"

namespace mlir::loom {
#define GEN_PASS_DEF_GPUHOSTTODEVICEPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// Whether `op` or an op nested in it reads or writes a buffer. Allocation,
/// views, runtime calls and copies (which enqueue device work themselves)
/// do not.
bool accessesMemory(Operation *op) {
  // Kernels run on the device already, including those a host loop
  // launches once per iteration.
  WalkResult result = op->walk<WalkOrder::PreOrder>([](Operation *inner) {
    if (isa<gpu::LaunchOp>(inner))
      return WalkResult::skip();
    if (isa<func::CallOp, gpu::MemcpyOp, gpu::MemsetOp>(inner))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list)
      if (isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()) &&
          e.getValue() && isa<BaseMemRefType>(e.getValue().getType()))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether an op strictly between `from` and `to` (same block) may write
/// the buffer `root`: any use of it other than a view or a load counts.
bool mayWriteBetween(Value root, Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    WalkResult result = op->walk([&](Operation *inner) {
      if (isa<ViewLikeOpInterface, memref::LoadOp>(inner))
        return WalkResult::advance();
      for (Value operand : inner->getOperands())
        if (isa<BaseMemRefType>(operand.getType()) &&
            rootBuffer(operand) == root)
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return true;
  }
  return false;
}

/// Pure, region-free ops on scalars (and constants): as good on the GPU.
bool isPureScalar(Operation *op) {
  if (op->getNumRegions() || op->getNumResults() == 0 || !isPure(op))
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

/// A device buffer of static `type` (the runtime's pool).
Value deviceBuffer(OpBuilder &b, Location loc, MemRefType type) {
  return gpu::AllocOp::create(b, loc, type, /*asyncToken=*/Type(), ValueRange{},
                              ValueRange{}, ValueRange{},
                              /*hostShared=*/false)
      .getMemref();
}

/// Frees `buffer` at the end of `block` (before its terminator).
void freeAtEnd(Value buffer, Block *block) {
  OpBuilder b(block->getTerminator());
  gpu::DeallocOp::create(b, buffer.getLoc(), TypeRange{}, ValueRange{}, buffer);
}

/// A launch of one thread, its body empty but for the terminator.
gpu::LaunchOp oneThreadLaunch(OpBuilder &b, Location loc) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
  OpBuilder in = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(in, loc);
  return launch;
}

struct GpuHostToDevicePass
    : impl::GpuHostToDevicePassBase<GpuHostToDevicePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      if (failed(useDeviceAllocations(fn)))
        return signalPassFailure();
      for (Block &block : fn.getBody()) {
        for (auto launch : llvm::to_vector(block.getOps<gpu::LaunchOp>()))
          sinkInto(launch);
        eraseDeadHostOps(block);
        if (failed(wrapHostAccesses(block)))
          return signalPassFailure();
        // Snapshots only now: made before the wrapping, their launches
        // would split the runs of host code it wraps.
        allowSnapshots = true;
        for (auto launch : llvm::to_vector(block.getOps<gpu::LaunchOp>()))
          sinkInto(launch);
        allowSnapshots = false;
        snapshots.clear(); // loads may be erased or moved now
        eraseDeadHostOps(block);
      }
      if (failed(copyGlobalsToDevice(fn)) || failed(verifyNoHostAccess(fn)))
        return signalPassFailure();
    }
  }

  /// memref.alloc/dealloc outside kernels -> gpu.alloc/dealloc.
  LogicalResult useDeviceAllocations(func::FuncOp fn) {
    SmallVector<Operation *> ops;
    WalkResult bad = fn.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return WalkResult::advance();
      if (isa<memref::AllocaOp>(op)) {
        op->emitError("a host stack buffer cannot hold device data (run the "
                      "cuda pipeline without promote-buffers-to-stack)");
        return WalkResult::interrupt();
      }
      if (isa<memref::AllocOp, memref::DeallocOp>(op))
        ops.push_back(op);
      return WalkResult::advance();
    });
    if (bad.wasInterrupted())
      return failure();
    for (Operation *op : ops) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            ValueRange{}, alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        alloc.replaceAllUsesWith(device.getMemref());
      } else {
        gpu::DeallocOp::create(b, op->getLoc(), TypeRange{}, ValueRange{},
                               cast<memref::DeallocOp>(op).getMemref());
      }
      op->erase();
    }
    return success();
  }

  /// A constant global (a non-splat `arith.constant`, bufferized) lives in
  /// the host's read-only data. A kernel that uses it, or a load of it, in
  /// its own block gets its own copy when outlined (sinkInto has moved
  /// those in by now); every other use (a view, its address given to
  /// cuBLAS, a kernel in a nested region) reads a device copy made at the
  /// get_global and freed at the end of its block (once per call:
  /// constants are small, and a device global's address is not reachable
  /// from the host ABI). So do the kernels' own get_globals of it that the
  /// copy dominates: the canonicalize and CSE after this pass would
  /// otherwise merge them into the host's, whose address they would read.
  LogicalResult copyGlobalsToDevice(func::FuncOp fn) {
    SmallVector<memref::GetGlobalOp> onHost, inKernels;
    fn.walk([&](memref::GetGlobalOp op) {
      (op->getParentOfType<gpu::LaunchOp>() ? inKernels : onHost).push_back(op);
    });
    SymbolTableCollection symbols;
    DominanceInfo dominance(fn);
    for (memref::GetGlobalOp get : onHost) {
      if (get->use_empty())
        continue;
      auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (!global || !global.getConstant())
        return get.emitError("a mutable global cannot be used from the "
                             "host of a cuda artifact (only constant "
                             "globals are copied to the device)");
      Block *block = get->getBlock();
      for (Operation *user : get->getUsers())
        if (Operation *at = block->findAncestorOpInBlock(*user);
            !at || at == block->getTerminator())
          return user->emitError("uses a constant outside the block that "
                                 "fetches it; its device copy cannot be "
                                 "freed there");
      OpBuilder b(get->getNextNode());
      Location loc = get.getLoc();
      Value copy = deviceBuffer(b, loc, get.getType());
      auto memcpy = gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(),
                                          ValueRange{}, copy, get.getResult());
      get.getResult().replaceAllUsesExcept(copy, memcpy);
      for (memref::GetGlobalOp &inner : inKernels)
        if (inner && inner.getNameAttr() == get.getNameAttr() &&
            dominance.properlyDominates(memcpy.getOperation(), inner)) {
          inner.getResult().replaceAllUsesWith(copy);
          inner.erase();
          inner = nullptr;
        }
      freeAtEnd(copy, block);
      ++numGlobalCopies;
    }
    return success();
  }

  /// snapshot()'s buffers, while the loads they copy stay where they are.
  llvm::DenseMap<Operation *, Value> snapshots;
  /// Whether sinkInto may make snapshots (after wrapHostAccesses).
  bool allowSnapshots = false;

  /// Whether `op`, defined above `launch` in its block, can be copied into
  /// it: a pure scalar op, a constant global's address, or a load of a
  /// buffer nothing between the load and the launch may write, nor another
  /// thread of the launch.
  bool canSink(Operation *op, gpu::LaunchOp launch) {
    if (!op || op->getBlock() != launch->getBlock() ||
        !op->isBeforeInBlock(launch))
      return false;
    if (isPureScalar(op) || isa<memref::GetGlobalOp>(op))
      return true;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      Value root = rootBuffer(load.getMemRef());
      return !mayWriteBetween(root, load, launch) &&
             !racesWithLaunch(root, launch);
    }
    return false;
  }

  /// Whether a copy of a load of `root` at the start of `launch` could read
  /// what another thread of it wrote: it writes `root` (an op there writes
  /// a view of it, or uses one with effects it does not describe) and runs
  /// more than one thread. A one-thread launch reads before it writes, as
  /// the host would have.
  static bool racesWithLaunch(Value root, gpu::LaunchOp launch) {
    Value sizes[] = {launch.getGridSizeX(),  launch.getGridSizeY(),
                     launch.getGridSizeZ(),  launch.getBlockSizeX(),
                     launch.getBlockSizeY(), launch.getBlockSizeZ()};
    if (llvm::all_of(sizes,
                     [](Value size) { return matchPattern(size, m_One()); }))
      return false;
    WalkResult result = launch.getBody().walk([&](Operation *op) {
      if (isa<ViewLikeOpInterface>(op))
        return WalkResult::advance();
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      for (Value operand : op->getOperands()) {
        if (!isa<BaseMemRefType>(operand.getType()) ||
            rootBuffer(operand) != root)
          continue;
        if (!effects || effects.getEffectOnValue<MemoryEffects::Write>(operand))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return result.wasInterrupted();
  }

  /// A 0-d device buffer that a one-thread launch in place of `load` fills
  /// with what it reads, freed at the end of the block: the value as the
  /// host would have read it, for kernels `load` cannot move into (a write
  /// to its buffer comes between, or the kernel itself writes it with
  /// other threads). One per load.
  Value snapshot(memref::LoadOp load) {
    if (Value done = snapshots.lookup(load))
      return done;
    Location loc = load.getLoc();
    OpBuilder b(load);
    Value copy = deviceBuffer(b, loc, MemRefType::get({}, load.getType()));
    auto fill = oneThreadLaunch(b, loc);
    OpBuilder in(fill.getBody().front().getTerminator());
    Operation *read = in.clone(*load);
    memref::StoreOp::create(in, loc, read->getResult(0), copy);
    sinkInto(fill); // the load's indices
    freeAtEnd(copy, load->getBlock());
    ++numSnapshots;
    snapshots[load] = copy;
    return copy;
  }

  /// Copies into `launch` the sinkable producers of the values it uses from
  /// above; values that cannot move stay kernel arguments.
  void sinkInto(gpu::LaunchOp launch) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(launch.getBody(), captured);
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping mapping;
    std::function<Value(Value)> materialize = [&](Value v) -> Value {
      if (Value done = mapping.lookupOrNull(v))
        return done;
      Operation *def = v.getDefiningOp();
      auto load = dyn_cast_or_null<memref::LoadOp>(def);
      if (allowSnapshots && load && load->getBlock() == launch->getBlock() &&
          load->isBeforeInBlock(launch) && !canSink(load, launch)) {
        Value copy = snapshot(load);
        mapping.map(v, memref::LoadOp::create(b, load.getLoc(), copy));
        ++numSunk;
        return mapping.lookup(v);
      }
      if (!canSink(def, launch))
        return v;
      for (Value operand : def->getOperands())
        mapping.map(operand, materialize(operand));
      b.clone(*def, mapping);
      ++numSunk;
      return mapping.lookup(v);
    };
    for (Value v : captured) {
      Value inside = materialize(v);
      if (inside != v)
        replaceAllUsesInRegionWith(v, inside, launch.getBody());
    }
  }

  /// Moves every run of host ops that touch memory (with the pure scalar
  /// ops among them) into a one-thread launch. Frees among them
  /// (--loom-hoist-deallocs puts each after its buffer's last use) wait
  /// until after the run.
  LogicalResult wrapHostAccesses(Block &block) {
    SmallVector<Operation *> run, frees;
    auto flush = [&]() -> LogicalResult {
      // Pure ops after the last access stay on the host.
      while (!run.empty() && !accessesMemory(run.back()))
        run.pop_back();
      Operation *after = run.empty() ? nullptr : run.back();
      for (Operation *free : frees)
        if (after && free->isBeforeInBlock(after)) {
          free->moveAfter(after);
          after = free;
        }
      frees.clear();
      if (run.empty())
        return success();
      LogicalResult result = wrap(run);
      run.clear();
      return result;
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        break;
      bool access = accessesMemory(&op);
      if (access || (!run.empty() && isPureScalar(&op))) {
        run.push_back(&op);
        continue;
      }
      if (!run.empty() && isa<gpu::DeallocOp>(op)) {
        frees.push_back(&op);
        continue;
      }
      if (failed(flush()))
        return failure();
    }
    return flush();
  }

  /// Whether the host keeps `op` (and a copy goes into the launch): a pure
  /// op or a load.
  static bool keepable(Operation *op) {
    return isPureScalar(op) || isa<memref::LoadOp>(op);
  }

  LogicalResult wrap(ArrayRef<Operation *> run) {
    Block *block = run.front()->getBlock();
    llvm::SmallPtrSet<Operation *, 16> inRun(run.begin(), run.end());
    // Which pure ops and loads the host still needs after the run, and
    // those they are computed from (decided before anything moves).
    llvm::SmallPtrSet<Operation *, 16> neededOutside;
    SmallVector<Operation *> work;
    for (Operation *op : run)
      for (Operation *user : op->getUsers())
        if (!inRun.contains(block->findAncestorOpInBlock(*user)) &&
            neededOutside.insert(op).second)
          work.push_back(op);
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!keepable(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && inRun.contains(def) && keepable(def) &&
            neededOutside.insert(def).second)
          work.push_back(def);
    }
    // Nothing to do on the device (the run's loads are all for kernels,
    // which they move into later): no launch.
    if (llvm::all_of(run, [&](Operation *op) {
          return keepable(op) && neededOutside.contains(op);
        }))
      return success();
    OpBuilder b(run.front());
    auto launch = oneThreadLaunch(b, run.front()->getLoc());
    Block &body = launch.getBody().front();
    Operation *terminator = body.getTerminator();
    SmallVector<std::pair<Operation *, Operation *>> kept; // host, launch
    SmallVector<std::pair<memref::LoadOp, Value>> overwritten;
    for (Operation *op : run) {
      // A pure op or a load the host still needs stays there, and a copy
      // goes in (a load left on the host is sunk into its kernels later).
      if (keepable(op) && neededOutside.contains(op)) {
        b.setInsertionPoint(terminator);
        Operation *clone = b.clone(*op);
        kept.emplace_back(op, clone);
        // The host's load now comes after the launch: if the run writes
        // its buffer after it, the launch keeps the value it read instead.
        if (auto load = dyn_cast<memref::LoadOp>(op);
            load && mayWriteBetween(rootBuffer(load.getMemRef()), load,
                                    run.back()->getNextNode()))
          overwritten.emplace_back(load, clone->getResult(0));
        continue;
      }
      op->moveBefore(terminator);
    }
    // Once everything is in (a user may follow what it uses), the launch's
    // ops use the copies.
    for (auto [op, clone] : kept)
      for (auto [from, to] : llvm::zip(op->getResults(), clone->getResults()))
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          return launch->isAncestor(use.getOwner());
        });
    for (auto [load, inside] : overwritten)
      keepValue(load, inside, launch);
    // Nothing computed inside may be used outside.
    for (Operation &op : body)
      for (Value result : op.getResults())
        for (Operation *user : result.getUsers())
          if (!launch->isAncestor(user))
            return user->emitError("uses a value that is computed from a "
                                   "device buffer; it cannot stay on the "
                                   "host");
    ++numWrapped;
    return success();
  }

  /// Stores `inside` (the launch's copy of `load`) into a 0-d buffer and
  /// has the host's uses of `load` read that after `launch`.
  void keepValue(memref::LoadOp load, Value inside, gpu::LaunchOp launch) {
    Location loc = load.getLoc();
    OpBuilder b(launch);
    Value kept = deviceBuffer(b, loc, MemRefType::get({}, load.getType()));
    b.setInsertionPointAfterValue(inside);
    memref::StoreOp::create(b, loc, inside, kept);
    b.setInsertionPointAfter(launch);
    Value read = memref::LoadOp::create(b, loc, kept);
    load.getResult().replaceAllUsesWith(read);
    load.erase();
    freeAtEnd(kept, launch->getBlock());
    ++numSnapshots;
  }

  void eraseDeadHostOps(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (op.use_empty() &&
          (isPureScalar(&op) || isa<memref::LoadOp, memref::GetGlobalOp>(op)))
        op.erase();
  }

  LogicalResult verifyNoHostAccess(func::FuncOp fn) {
    WalkResult result = fn.walk<WalkOrder::PreOrder>([](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (op->getNumRegions() == 0 && accessesMemory(op)) {
        op->emitError("reads or writes a device buffer on the host");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};

} // namespace
} // namespace mlir::loom
