//===- HoistDeallocs.cpp - Free each temporary after its last use ---------===//
//
// Ownership-based deallocation frees a buffer at the end of the block that
// allocated it. A training step is one block, so every temporary of the
// forward and backward pass stays allocated until the step ends, and the
// step's memory is the sum of all of them. Freed right after its last use,
// a buffer's memory serves the next allocation of that size (the runtime's
// allocator caches blocks), and the step's memory is what is live at once.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/BufferRoots.h"
#include "passes/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "loom-hoist-deallocs"

namespace mlir::loom {
#define GEN_PASS_DEF_HOISTDEALLOCSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

/// Whether values of `type` can hold a buffer's address.
bool holdsBuffer(Type type) {
  return isa<BaseMemRefType, LLVM::LLVMPointerType>(type);
}

/// The op of `free`'s block after which nothing uses the freed buffer, or
/// null when the free has to stay where it is.
///
/// A use is any use of a value that carries the buffer: the allocation,
/// its views, and the buffer's address as an integer or pointer with
/// everything computed from it, including what calls that take it return.
/// The last ancestor in the block of such a use is where the buffer is
/// last needed. This relies on the runtime ABI (abi.h): a call that keeps
/// using a buffer after it returns (an asynchronous collective) returns a
/// handle that the call ending that use (loom_rt_wait) takes. An address
/// stored to memory, or a carrier used outside the block, makes the buffer
/// untraceable: its free stays.
Operation *lastUse(memref::DeallocOp free) {
  Block *block = free->getBlock();
  auto alloc = rootBuffer(free.getMemref()).getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != block)
    return nullptr;
  Operation *last = alloc;
  SmallVector<Value> work{alloc.getResult()};
  llvm::DenseSet<Value> seen(work.begin(), work.end());
  auto carries = [&](Value value) {
    if (seen.insert(value).second)
      work.push_back(value);
  };
  while (!work.empty()) {
    Value value = work.pop_back_val();
    bool address = !isa<BaseMemRefType>(value.getType());
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == free)
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
      // An address written to memory could be read back anywhere.
      if (address && !isMemoryEffectFree(user) && !isa<CallOpInterface>(user) &&
          !user->hasTrait<OpTrait::IsTerminator>())
        return nullptr;
      // What is computed from an address is an address (or a handle); of
      // what is computed from a buffer, its views, its address and what
      // calls return. A load's result is data.
      bool all = address ||
                 isa<CallOpInterface, memref::ExtractAlignedPointerAsIndexOp,
                     UnrealizedConversionCastOp>(user);
      for (Value result : user->getResults())
        if (all || holdsBuffer(result.getType()))
          carries(result);
      for (Region &region : user->getRegions())
        for (Block &nested : region)
          for (BlockArgument arg : nested.getArguments())
            if (address || holdsBuffer(arg.getType()))
              carries(arg);
      // Yielded out of a nested region: the parent's results.
      if (user->hasTrait<OpTrait::IsTerminator>() && user != ancestor)
        for (Value result : user->getParentOp()->getResults())
          if (address || holdsBuffer(result.getType()))
            carries(result);
    }
  }
  if (!last->isBeforeInBlock(free) || last->hasTrait<OpTrait::IsTerminator>())
    return nullptr;
  return last;
}

struct HoistDeallocsPass : impl::HoistDeallocsPassBase<HoistDeallocsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Every last use is found before any free moves: a move invalidates
    // its block's op order, and renumbering the step's block for each of
    // its thousands of frees made this pass quadratic in depth. Moving a
    // free does not change another buffer's last use, so the result is
    // the same as moving each free as soon as its last use is known.
    SmallVector<std::pair<memref::DeallocOp, Operation *>> moves;
    getOperation().walk([&](memref::DeallocOp free) {
      moves.emplace_back(free, lastUse(free));
    });
    for (auto [free, last] : moves) {
      if (!last) {
        ++numKept;
        continue;
      }
      if (last->getNextNode() != free.getOperation()) {
        free->moveAfter(last);
        ++numHoisted;
      }
    }
  }
};

} // namespace
} // namespace mlir::loom
