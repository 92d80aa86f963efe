//===- PlanBuffers.cpp - Temporaries at planned offsets of one arena ------===//
//
// After --loom-hoist-deallocs a step's temporaries are freed after their last
// uses, so what the step needs at once is the most bytes live at one point.
// The runtime's allocator caches freed blocks by size and serves a request
// only from a block of its size, so it held 548 MiB for a GPT step whose
// temporaries peak at 411 MiB live (bench/RESULTS.md, "Peak memory of a
// training step"); a replay of the step's requests through best-fit,
// splitting and coalescing allocators still held 505 MiB. The lifetimes are
// known at compile time, which no runtime allocator can use: this pass gives
// each buffer an offset in one arena such that buffers alive at the same
// time never overlap.
//
// Each buffer's address comes from an opaque runtime call
// (loom_rt_arena_slice) rather than a memref.view of the arena: LLVM's loop
// vectorizer gave up on loops over several views of one allocation (a
// dependence it cannot resolve between accesses to one object), where for
// pointers of unrelated origin, as the allocator's were, it checks for
// overlap at run time; on views a GPT's step ran 20 % slower, its
// elementwise loops scalar.
//
// The layout is the greedy-by-size heuristic (as in TensorFlow Lite's
// arena planner): buffers from the largest down, each at the lowest aligned
// offset where it overlaps no placed buffer that lives at the same time.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/BufferRoots.h"
#include "passes/Bufferize/RuntimeCalls.h"
#include "passes/CPU/BufferAt.h"
#include "passes/CPU/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>

#define DEBUG_TYPE "loom-plan-buffers"

namespace mlir::loom {
#define GEN_PASS_DEF_PLANBUFFERSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

/// An allocation of the block and its place in the plan. It is live from
/// its allocation to its free, positions in the block's op order.
struct Planned {
  memref::AllocOp alloc;
  memref::DeallocOp free;
  int64_t start = 0, end = 0;
  int64_t bytes = 0;
  int64_t offset = -1;

  bool livesWith(const Planned &other) const {
    return start < other.end && other.start < end;
  }
};

/// Bytes of a buffer of `type`, if the pass can place it: static shape,
/// identity layout, default memory space, elements of whole bytes.
std::optional<int64_t> plannableBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  return type.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
}

/// Offsets for every buffer of `buffers`, greedy by size; returns the arena
/// size. Ties keep the block's order, so the plan is deterministic.
int64_t layOut(MutableArrayRef<Planned> buffers, int64_t alignment) {
  SmallVector<Planned *> order;
  for (Planned &b : buffers)
    order.push_back(&b);
  std::stable_sort(
      order.begin(), order.end(),
      [](const Planned *a, const Planned *b) { return a->bytes > b->bytes; });
  int64_t arena = 0;
  for (auto [i, b] : llvm::enumerate(order)) {
    // The buffers placed before it that it lives with, by offset: take the
    // first gap.
    SmallVector<const Planned *> neighbours;
    for (const Planned *p : ArrayRef(order).take_front(i))
      if (p->livesWith(*b))
        neighbours.push_back(p);
    llvm::sort(neighbours, [](const Planned *x, const Planned *y) {
      return x->offset < y->offset;
    });
    int64_t offset = 0;
    for (const Planned *n : neighbours) {
      if (n->offset >= offset + b->bytes)
        break;
      offset = std::max<int64_t>(
          offset, llvm::alignTo(n->offset + n->bytes, alignment));
    }
    b->offset = offset;
    arena = std::max(arena, offset + b->bytes);
  }
  return arena;
}

/// The most bytes of `buffers` live at one position of the block.
int64_t peakLive(ArrayRef<Planned> buffers) {
  SmallVector<std::pair<int64_t, int64_t>> events; // position, +-bytes
  for (const Planned &b : buffers) {
    events.push_back({b.start, b.bytes});
    events.push_back({b.end, -b.bytes});
  }
  // At one position a free comes before an allocation (end is exclusive).
  llvm::sort(events);
  int64_t live = 0, most = 0;
  for (auto [position, bytes] : events)
    most = std::max(most, live += bytes);
  return most;
}

struct PlanBuffersPass : impl::PlanBuffersPassBase<PlanBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    const int64_t align = alignment;
    if (align <= 0 || !llvm::isPowerOf2_64(align)) {
      getOperation().emitError(
          "loom-plan-buffers: alignment must be a power of 2, not ")
          << align;
      return signalPassFailure();
    }
    LLVMTypeConverter converter(&getContext());
    for (func::FuncOp fn : calleesFirst())
      plan(fn, converter);
  }

  /// The module's functions with bodies, each after those it calls: a
  /// function's arena size is known before its callers are planned.
  SmallVector<func::FuncOp> calleesFirst() {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> order;
    llvm::DenseSet<Operation *> seen;
    std::function<void(func::FuncOp)> visit = [&](func::FuncOp fn) {
      if (!fn || fn.isExternal() || !seen.insert(fn).second)
        return;
      fn.walk([&](func::CallOp call) {
        visit(symbols.lookup<func::FuncOp>(call.getCallee()));
      });
      order.push_back(fn);
    };
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      visit(fn);
    return order;
  }

  /// A function of a model's repeated layers (--loom-outline-layers) takes
  /// its arena from its callers: each of `calls` allocates it just around
  /// itself, so that the caller's plan places it with the caller's own
  /// buffers (a layer's temporaries and the activations kept across layers
  /// share one arena, as they did when the layers were inline: the bench
  /// GPT's temporaries took 476 MiB in separate arenas, 411 MiB in one).
  Value arenaFromCallers(func::FuncOp fn, ArrayRef<func::CallOp> calls,
                         MemRefType type) {
    unsigned index = fn.getNumArguments();
    if (failed(fn.insertArgument(index, type, DictionaryAttr(), fn.getLoc())))
      return nullptr;
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      Value scratch = memref::AllocOp::create(b, call.getLoc(), type,
                                              b.getI64IntegerAttr(alignment));
      call->insertOperands(call->getNumOperands(), scratch);
      b.setInsertionPointAfter(call);
      memref::DeallocOp::create(b, call.getLoc(), scratch);
    }
    return fn.getArgument(index);
  }

  /// The calls of `fn` if its arena can come from them: a function of the
  /// model's layers whose every use is a func.call; else none.
  SmallVector<func::CallOp> arenaCallers(func::FuncOp fn) {
    SmallVector<func::CallOp> calls;
    if (!fn->hasAttr(kOutlinedAttr))
      return calls;
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(fn, getOperation());
    if (!uses)
      return calls;
    for (SymbolTable::SymbolUse use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        return {};
      calls.push_back(call);
    }
    return calls;
  }

  void plan(func::FuncOp fn, const LLVMTypeConverter &converter) {
    const int64_t align = alignment;
    Block &block = fn.getBody().front();

    // Every free of each allocation, wherever it is.
    llvm::DenseMap<Operation *, SmallVector<memref::DeallocOp, 1>> frees;
    fn.walk([&](memref::DeallocOp free) {
      if (Operation *root = rootBuffer(free.getMemref()).getDefiningOp())
        frees[root].push_back(free);
    });

    llvm::DenseMap<Operation *, int64_t> position;
    int64_t index = 0;
    for (Operation &op : block)
      position[&op] = index++;

    SmallVector<Planned> buffers;
    fn.walk([&](memref::AllocOp alloc) {
      std::optional<int64_t> bytes = plannableBytes(alloc.getType());
      auto it = frees.find(alloc);
      if (alloc->getBlock() != &block || !bytes || it == frees.end() ||
          alloc.getAlignment().value_or(1) > static_cast<uint64_t>(align) ||
          it->second.size() != 1 || it->second[0]->getBlock() != &block ||
          position[it->second[0]] < position[alloc]) {
        ++numKept;
        return;
      }
      Planned b;
      b.alloc = alloc;
      b.free = it->second[0];
      b.start = position[alloc];
      b.end = position[b.free];
      b.bytes = llvm::alignTo(*bytes, align);
      buffers.push_back(b);
    });
    if (buffers.size() < 2) {
      numKept += buffers.size();
      return;
    }
    int64_t arenaBytes = layOut(buffers, align);
    // An arena from the callers is counted in theirs.
    SmallVector<func::CallOp> callers = arenaCallers(fn);
    bool fromCallers = !callers.empty();
    if (!fromCallers)
      bytesLive += peakLive(buffers);

    MLIRContext *ctx = &getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    OpBuilder builder(&block, block.begin());
    func::FuncOp slice = declareRuntimeFunction(
        getOperation(), "loom_rt_arena_slice",
        builder.getFunctionType({ptr, builder.getI64Type()}, {ptr}));
    Location loc = fn.getLoc();
    auto arenaType = MemRefType::get({arenaBytes}, builder.getIntegerType(8));
    Value arena =
        fromCallers ? arenaFromCallers(fn, callers, arenaType)
                    : memref::AllocOp::create(builder, loc, arenaType,
                                              builder.getI64IntegerAttr(align));
    if (!arena)
      return signalPassFailure();
    Value base = bufferPointer(builder, loc, arena);
    for (Planned &b : buffers) {
      Location at = b.alloc.getLoc();
      builder.setInsertionPoint(b.alloc);
      Value offset = arith::ConstantIntOp::create(builder, at, b.offset, 64);
      Value address =
          func::CallOp::create(builder, at, slice, ValueRange{base, offset})
              .getResult(0);
      b.alloc.replaceAllUsesWith(
          bufferAt(builder, at, converter, b.alloc.getType(), address));
      b.alloc.erase();
      b.free.erase();
      ++numPlanned;
      if (!fromCallers)
        bytesPlanned += b.bytes;
    }
    if (fromCallers)
      return;
    builder.setInsertionPoint(block.getTerminator());
    memref::DeallocOp::create(builder, loc, arena);
    bytesArena += arenaBytes;
  }
};

} // namespace
} // namespace mlir::loom
