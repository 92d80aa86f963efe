//===- OutlineSegments.cpp - An entry's body cut into functions -----------===//
//
// With each loop nest outlined, a step is still one function of calls, one
// or two per op of the model, and the descriptors of the buffers they take:
// 60 000 ops for a 48-layer GPT. Upstream's conversion to the LLVM dialect
// and LLVM's code generation (register allocation across thousands of
// calls) cost more per op the longer the function, so a 48-layer step's
// conversion and code generation took 8x and 15x the 12-layer one's. Cut
// into functions of a bounded number of ops, called in order, each op
// costs the same whatever the depth, and the parts can go to different
// code generation threads.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Support/Outlined.h"
#include "passes/CPU/BufferAt.h"
#include "passes/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#define DEBUG_TYPE "loom-outline-segments"

namespace mlir::loom {
#define GEN_PASS_DEF_OUTLINESEGMENTSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

/// Whether `op` is rebuilt in each segment that uses its results rather
/// than passed.
bool rebuilt(Operation *op) { return isRecomputable(op); }

/// Whether `op` stays in the entry between segments: a buffer that is not
/// rebuilt (an allocation). A memref cannot be returned from a function as
/// a bare pointer without losing its allocated pointer, and a stack
/// buffer must not outlive the segment's frame.
bool pinned(Operation *op) {
  if (hasEffect<MemoryEffects::Allocate>(op))
    return true;
  return !rebuilt(op) && llvm::any_of(op->getResultTypes(), [](Type t) {
    return isa<BaseMemRefType>(t);
  });
}

int64_t weight(Operation *op) {
  int64_t n = 0;
  op->walk([&](Operation *) { ++n; });
  return n;
}

/// A run of the entry's top-level ops with effects that becomes one
/// function.
struct Segment {
  SmallVector<Operation *> ops;
  /// Values from outside passed in, in order of first use.
  llvm::SetVector<Value> args;
  /// Top-level ops without effects cloned in (where the ops use them).
  llvm::SetVector<Operation *> rebuiltOps;
  /// Values defined here that later ops need, returned.
  llvm::SetVector<Value> results;
};

class Splitter {
public:
  Splitter(func::FuncOp entry, int64_t maxOps)
      : entry(entry), block(entry.getBody().front()), maxOps(maxOps) {}

  /// Cuts the entry into segments; false (nothing changed but the stack
  /// buffers' place) if a value would have to cross a segment boundary in
  /// a form no call can carry.
  bool plan();
  /// Moves each segment into a function and calls it.
  void outline(int64_t &numSegments, int64_t &numRebuilt);

private:
  void hoistStackBuffers();
  /// The segment `v` is defined in (its top-level ancestor's), or null.
  Segment *owner(Value v);
  /// Makes `v`, used in `s` and defined outside it, available there.
  bool capture(Segment &s, Value v);
  /// Makes `v`, used by an op that stays in the entry, available there.
  bool captureInEntry(Value v);
  /// Has the segment defining `v`, if any, return it; false for a memref.
  bool returnedByOwner(Value v);
  bool collectInputs(Segment &s);
  /// A function holding `s`'s ops and those rebuilt, in the entry's order.
  func::FuncOp build(Segment &s, int index);

  func::FuncOp entry;
  Block &block;
  int64_t maxOps;
  std::vector<Segment> segments;
  DenseMap<Operation *, Segment *> segmentOf;
  DenseMap<Operation *, int64_t> position;
  llvm::SmallPtrSet<Operation *, 16> neededInEntry;
};

void Splitter::hoistStackBuffers() {
  // Ahead of every run, not between two (bufferization's stack promotion
  // leaves them where the heap buffers were). A static alloca reserves its
  // frame slot on entry wherever it is written, so the step is the same.
  SmallVector<Operation *> stack;
  for (Operation &op : block)
    if (isa<memref::AllocaOp, LLVM::AllocaOp>(op) && op.getNumOperands() == 0)
      stack.push_back(&op);
  for (Operation *op : llvm::reverse(stack))
    op->moveBefore(&block, block.begin());
}

Segment *Splitter::owner(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    def = v.getParentBlock()->getParentOp();
  Operation *top = block.findAncestorOpInBlock(*def);
  return top ? segmentOf.lookup(top) : nullptr;
}

bool Splitter::capture(Segment &s, Value v) {
  if (s.args.contains(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (def && s.rebuiltOps.contains(def))
    return true;
  if (def && def->getBlock() == &block && rebuilt(def)) {
    for (Value operand : def->getOperands())
      if (owner(operand) != &s && !capture(s, operand))
        return false;
    s.rebuiltOps.insert(def);
    return true;
  }
  // Passed: from the entry (an argument or a pinned buffer) or returned by
  // the segment that computes it, which no memref can be.
  if (!passableAsBarePointer(v.getType()) || !returnedByOwner(v))
    return false;
  s.args.insert(v);
  return true;
}

bool Splitter::returnedByOwner(Value v) {
  Segment *from = owner(v);
  if (!from)
    return true;
  if (isa<BaseMemRefType>(v.getType()))
    return false;
  from->results.insert(v);
  return true;
}

bool Splitter::captureInEntry(Value v) {
  Operation *def = v.getDefiningOp();
  if (def && def->getBlock() == &block && rebuilt(def)) {
    if (neededInEntry.insert(def).second)
      for (Value operand : def->getOperands())
        if (!captureInEntry(operand))
          return false;
    return true;
  }
  return returnedByOwner(v);
}

bool Splitter::collectInputs(Segment &s) {
  for (Operation *top : s.ops) {
    WalkResult walk = top->walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (owner(v) != &s && !capture(s, v))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return false;
  }
  return true;
}

bool Splitter::plan() {
  if (!entry.getBody().hasOneBlock())
    return false;
  hoistStackBuffers();
  // Ops without effects belong to no run: each run that uses one gets a
  // copy, and the entry keeps those it still uses itself.
  Segment *open = nullptr;
  int64_t filled = 0;
  for (Operation &op : block.without_terminator()) {
    position[&op] = position.size();
    if (pinned(&op)) {
      open = nullptr;
      continue;
    }
    // Counted where they are: most are used near there, copied into the
    // run that is open.
    if (rebuilt(&op)) {
      ++filled;
      continue;
    }
    if (!open || filled >= maxOps) {
      segments.emplace_back();
      open = &segments.back();
      filled = 0;
    }
    open->ops.push_back(&op);
    filled += weight(&op);
  }
  if (segments.size() < 2)
    return false;
  for (Segment &s : segments)
    for (Operation *op : s.ops)
      segmentOf[op] = &s;
  for (Segment &s : segments)
    if (!collectInputs(s))
      return false;
  // What stays in the entry (pinned buffers' sizes, the return) takes
  // results, and no memref.
  for (Operation &op : block)
    if (!segmentOf.count(&op) && !rebuilt(&op))
      for (Value v : op.getOperands())
        if (!captureInEntry(v))
          return false;
  return true;
}

func::FuncOp Splitter::build(Segment &s, int index) {
  SmallVector<Type> argTypes, resultTypes;
  for (Value v : s.args)
    argTypes.push_back(v.getType());
  for (Value v : s.results)
    resultTypes.push_back(v.getType());
  Location loc = s.ops.front()->getLoc();
  func::FuncOp fn = createOutlinedFunction(
      entry, loc, (entry.getSymName() + "_part_" + Twine(index)).str(),
      FunctionType::get(entry.getContext(), argTypes, resultTypes));
  Block *body = &fn.getBody().front();
  IRMapping map;
  for (auto [v, arg] : llvm::zip_equal(s.args, body->getArguments()))
    map.map(v, arg);
  // A rebuilt op may use what an op of the run computes: one order.
  SmallVector<Operation *> ops(s.rebuiltOps.begin(), s.rebuiltOps.end());
  llvm::append_range(ops, s.ops);
  llvm::sort(ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  for (Operation *op : ops)
    inner.clone(*op, map);
  SmallVector<Value> returned;
  for (Value v : s.results)
    returned.push_back(map.lookup(v));
  func::ReturnOp::create(inner, loc, returned);
  return fn;
}

void Splitter::outline(int64_t &numSegments, int64_t &numRebuilt) {
  // The value each original one has in the entry once its run is a call.
  IRMapping inEntry;
  int index = 0;
  for (Segment &s : segments) {
    func::FuncOp fn = build(s, index++);
    OpBuilder b(s.ops.front());
    SmallVector<Value> operands;
    for (Value v : s.args)
      operands.push_back(inEntry.lookupOrDefault(v));
    auto call = func::CallOp::create(b, fn.getLoc(), fn, operands);
    for (auto [v, result] : llvm::zip_equal(s.results, call.getResults()))
      inEntry.map(v, result);
    ++numSegments;
    numRebuilt += s.rebuiltOps.size();
  }
  for (Operation &op : block)
    if (!segmentOf.count(&op) && (!rebuilt(&op) || neededInEntry.count(&op)))
      for (OpOperand &use : op.getOpOperands())
        use.set(inEntry.lookupOrDefault(use.get()));
  // A later run's originals used an earlier one's values until they were
  // cloned; all go now, and so do the rebuilt ops the entry no longer uses.
  for (Segment &s : segments)
    for (Operation *op : s.ops) {
      op->dropAllUses();
      op->dropAllReferences();
    }
  for (Segment &s : llvm::reverse(segments))
    for (Operation *op : llvm::reverse(s.ops))
      op->erase();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (rebuilt(&op) && op.use_empty())
      op.erase();
}

struct OutlineSegmentsPass
    : impl::OutlineSegmentsPassBase<OutlineSegmentsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<func::FuncOp> entries;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      // Before or after --loom-load-entry-arguments.
      if ((fn->hasAttr(kEntryAttr) ||
           (fn->hasAttr(kAbiAttr) && fn.isPublic())) &&
          !fn.isExternal())
        entries.push_back(fn);
    for (func::FuncOp entry : entries) {
      if (weight(entry) <= 2 * ops)
        continue;
      Splitter splitter(entry, ops);
      if (!splitter.plan()) {
        ++numKept;
        continue;
      }
      int64_t segments = 0, rebuiltOps = 0;
      splitter.outline(segments, rebuiltOps);
      numSegments += segments;
      numRebuilt += rebuiltOps;
    }
  }
};

} // namespace
} // namespace mlir::loom
