//===- RollLayerCalls.cpp - An entry's repeated calls as one loop --------===//
//
// With a model's layers compiled once (--loom-outline-layers), an entry is
// still one call per layer of each layer function, and each call's buffers:
// its parameters' addresses loaded from the runtime's array, its saved
// activations' slices of the arena. The entries then grow with depth, and
// their conversion to LLVM and code generation were most of what a 48-layer
// GPT cost over a 12-layer one (2.6x its compile time). Here a run of
// repetitions of the same calls becomes one loop over the layers: what
// differs between layers is an address computed from the layer's index,
// since the runtime's array holds a layer's parameters one period apart and
// the buffer planner puts a layer's activations one period apart in the
// arena; what one layer passes to the next is carried by the loop.
//
// Found as --loom-outline-layers finds repetitions (lib/Support/Repeats.h),
// on the entry's ops with effects ("anchors"): what has none (constants,
// descriptors, address casts, the arena's slices, the argument loads) is an
// expression of the anchor that uses it, recomputed in the loop. Two
// repetitions are equal when their anchors are, operand for operand, and
// every integer in their operands' expressions is the reference's plus the
// repetition's index times a step. The same calls run in the same order
// with the same buffers: the results are unchanged.
//
//===----------------------------------------------------------------------===//
#include "passes/CPU/BufferAt.h"
#include "passes/CPU/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Support/Repeats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include "llvm/Support/MathExtras.h"
#include <map>
#include <vector>

#define DEBUG_TYPE "loom-roll-layer-calls"

namespace mlir::loom {
#define GEN_PASS_DEF_ROLLLAYERCALLSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

/// A stack buffer of an iteration: it becomes a slice of one buffer for
/// all iterations, so that a later op can still use any iteration's.
bool isStackBuffer(Operation *op) {
  auto alloca = dyn_cast<memref::AllocaOp>(op);
  if (!alloca || op->getNumOperands() != 0)
    return false;
  MemRefType type = alloca.getType();
  return type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getElementType().isIntOrFloat() &&
         type.getElementTypeBitWidth() % 8 == 0;
}

/// An integer constant's value, if `v` is one that fits 64 bits.
std::optional<int64_t> intConstant(Value v) {
  Operation *def = v.getDefiningOp();
  Attribute attr;
  if (!def || !def->hasTrait<OpTrait::ConstantLike>() ||
      !matchPattern(def, m_Constant(&attr)))
    return std::nullopt;
  auto integer = dyn_cast<IntegerAttr>(attr);
  if (!integer)
    return std::nullopt;
  auto type = dyn_cast<IntegerType>(integer.getType());
  if (!isa<IndexType>(integer.getType()) && (!type || type.getWidth() < 8))
    return std::nullopt;
  return integer.getValue().trySExtValue();
}

/// Where an iteration's value at one leaf of the reference's operand
/// expressions comes from.
struct Leaf {
  enum Kind { Int, Inner, Invariant, Carried } kind;
  /// Int: the reference's value and the step per iteration.
  int64_t first = 0, step = 0;
  /// Inner, Carried: the anchor (its place in the iteration) and result.
  int64_t anchor = 0;
  unsigned result = 0;
  /// Invariant: the value; Carried: the first iteration's.
  Value value;
};

/// A leaf of an operand's expression as the IR has it: an integer, or a
/// value not recomputed (an anchor's result, an argument).
struct RawLeaf {
  int64_t integer = 0;
  Value value;
};

/// An operand's expression: its structure (equal ids, equal expressions
/// but for their leaves) and its leaves, in the order emit() visits them.
struct Flat {
  unsigned structure = 0;
  SmallVector<RawLeaf, 4> leaves;
};

/// One loop: `count` iterations of `period` anchors from `begin`.
struct Window {
  int64_t begin, period, count;
  SmallVector<Leaf> leaves;
};

class Roller {
public:
  Roller(func::FuncOp entry, int64_t minCount, int64_t minGain)
      : entry(entry), block(entry.getBody().front()), minCount(minCount),
        minGain(minGain) {}

  /// Rolls one run into a loop; false when none is left.
  bool rollOne(int64_t &iterations);

private:
  bool recomputed(Operation *op) const;
  /// Whether `op`'s only index may step (an array's element, not a
  /// struct's field).
  static bool steppingIndex(LLVM::GEPOp gep);
  const Flat &flatten(Value v);
  void index();
  /// (iteration, place in it) of an anchor result inside `w`.
  std::optional<std::pair<int64_t, int64_t>> placeOf(const Window &w,
                                                     Value v) const;
  bool matchLeaf(Window &w, Leaf fresh, int64_t j, size_t &leaf);
  bool sameAnchor(Window &w, Operation *ref, Operation *other, int64_t j,
                  size_t &leaf);
  bool sameIteration(Window &w, int64_t j);
  int64_t verify(Window &w, int64_t maxCount);
  bool usesOk(const Window &w) const;
  /// A place's stack buffer for all iterations, and one slice's bytes.
  struct Stack {
    Value base;
    int64_t bytes = 0;
  };
  SmallVector<Stack> makeStacks(const Window &w);
  Value slice(OpBuilder &b, const Window &w, int64_t i, const Stack &stack,
              Value offset);
  scf::ForOp buildLoop(const Window &w, ArrayRef<Stack> stacks,
                       SmallVector<const Leaf *> &carried);
  /// Makes `w` a loop; whether later ops now use slices of its stack
  /// buffers.
  bool roll(Window &w);
  Value emit(OpBuilder &b, const Window &w, Value ref, size_t &leaf, Value iv,
             ArrayRef<SmallVector<Value>> made, ArrayRef<Value> carriedAt);
  Value intAt(OpBuilder &b, Location loc, Type type, const Leaf &l, Value iv);

  func::FuncOp entry;
  Block &block;
  int64_t minCount, minGain;
  SmallVector<Operation *> anchors;
  llvm::DenseMap<Operation *, int64_t> anchorAt;
  llvm::DenseMap<Operation *, int64_t> position;
  llvm::DenseMap<Value, Flat> flats;
  std::map<std::vector<uintptr_t>, unsigned> structures;
  /// Runs (first anchor, period, count) found not to roll.
  llvm::DenseSet<std::tuple<Operation *, int64_t, int64_t>> failed;
  LLVMTypeConverter converter{entry.getContext()};
};

/// Recomputed where used rather than carried: what has no effects, the
/// arena's slices and the argument loads.
bool Roller::recomputed(Operation *op) const { return isRecomputable(op); }

bool Roller::steppingIndex(LLVM::GEPOp gep) {
  return gep.getRawConstantIndices().size() == 1 &&
         gep.getRawConstantIndices().front() != LLVM::GEPOp::kDynamicIndex;
}

/// `v`'s expression: what computes it, up to the integers that may step
/// between iterations and the values not recomputed.
const Flat &Roller::flatten(Value v) {
  if (auto it = flats.find(v); it != flats.end())
    return it->second;
  auto ptr = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  std::vector<uintptr_t> key;
  Flat flat;
  Operation *def = v.getDefiningOp();
  if (auto integer = intConstant(v)) {
    key = {1, ptr(v.getType().getAsOpaquePointer())};
    flat.leaves.push_back({*integer, {}});
  } else if (def && def->getBlock() == &block && recomputed(def)) {
    key = {2, ptr(def->getName().getAsOpaquePointer()),
           cast<OpResult>(v).getResultNumber()};
    for (Type t : def->getResultTypes())
      key.push_back(ptr(t.getAsOpaquePointer()));
    key.push_back(
        ptr(def->getDiscardableAttrDictionary().getAsOpaquePointer()));
    auto gep = dyn_cast<LLVM::GEPOp>(def);
    if (gep && steppingIndex(gep))
      key.insert(key.end(), {ptr(gep.getElemType().getAsOpaquePointer()),
                             uintptr_t(gep.getNoWrapFlags())});
    else
      key.push_back(ptr(def->getPropertiesAsAttribute().getAsOpaquePointer()));
    for (Value operand : def->getOperands()) {
      const Flat &inner = flatten(operand);
      key.push_back(inner.structure);
      flat.leaves.append(inner.leaves.begin(), inner.leaves.end());
    }
    if (gep && steppingIndex(gep))
      flat.leaves.push_back({gep.getRawConstantIndices().front(), {}});
  } else {
    key = {3, ptr(v.getType().getAsOpaquePointer())};
    flat.leaves.push_back({0, v});
  }
  flat.structure =
      structures.try_emplace(std::move(key), structures.size()).first->second;
  return flats[v] = std::move(flat);
}

void Roller::index() {
  anchors.clear();
  anchorAt.clear();
  position.clear();
  flats.clear();
  structures.clear();
  for (Operation &op : block.without_terminator()) {
    position[&op] = position.size();
    if (!recomputed(&op)) {
      anchorAt[&op] = anchors.size();
      anchors.push_back(&op);
    }
  }
}

std::optional<std::pair<int64_t, int64_t>> Roller::placeOf(const Window &w,
                                                           Value v) const {
  Operation *def = v.getDefiningOp();
  auto it = def ? anchorAt.find(def) : anchorAt.end();
  if (it == anchorAt.end() || it->second < w.begin ||
      it->second >= w.begin + w.count * w.period)
    return std::nullopt;
  int64_t at = it->second - w.begin;
  return std::make_pair(at / w.period, at % w.period);
}

/// Records (j = 0) or checks iteration `j`'s leaf `fresh` against the
/// reference's: integers step evenly, values come from the same place.
bool Roller::matchLeaf(Window &w, Leaf fresh, int64_t j, size_t &leaf) {
  if (j == 0) {
    w.leaves.push_back(fresh);
    ++leaf;
    return true;
  }
  Leaf &l = w.leaves[leaf++];
  switch (l.kind) {
  case Leaf::Int:
    if (fresh.kind != Leaf::Int)
      return false;
    if (j == 1)
      l.step = fresh.first - l.first;
    return fresh.first == l.first + j * l.step;
  case Leaf::Inner:
  case Leaf::Carried:
    return fresh.kind == l.kind && fresh.anchor == l.anchor &&
           fresh.result == l.result;
  case Leaf::Invariant:
    if (fresh.kind == Leaf::Invariant && fresh.value == l.value)
      return true;
    // The first iteration's value from before the run, each next one's
    // from the iteration before it: carried by the loop.
    if (j != 1 || fresh.kind != Leaf::Carried)
      return false;
    l.kind = Leaf::Carried;
    l.anchor = fresh.anchor;
    l.result = fresh.result;
    return true;
  }
  return false;
}

/// Whether anchor `other` of iteration `j` does what the reference's
/// `ref` does, operand for operand; records (j = 0) or checks the leaves.
bool Roller::sameAnchor(Window &w, Operation *ref, Operation *other, int64_t j,
                        size_t &leaf) {
  if (ref->getName() != other->getName() ||
      ref->getNumOperands() != other->getNumOperands() ||
      ref->getResultTypes() != other->getResultTypes() ||
      ref->getNumRegions() != 0 || other->getNumRegions() != 0 ||
      ref->getDiscardableAttrDictionary() !=
          other->getDiscardableAttrDictionary() ||
      !ref->getName().compareOpProperties(ref->getPropertiesStorage(),
                                          other->getPropertiesStorage()))
    return false;
  if (isStackBuffer(ref))
    return isStackBuffer(other);
  for (auto [a, b] :
       llvm::zip_equal(ref->getOperands(), other->getOperands())) {
    unsigned structure = flatten(a).structure;
    const Flat &flat = flatten(b);
    if (flat.structure != structure)
      return false;
    for (const RawLeaf &raw : flat.leaves) {
      Leaf fresh{Leaf::Int, raw.integer};
      if (raw.value) {
        fresh.kind = Leaf::Invariant;
        fresh.value = raw.value;
        if (auto place = placeOf(w, raw.value)) {
          auto [iteration, at] = *place;
          if (iteration != j && iteration != j - 1)
            return false;
          fresh.kind = iteration == j ? Leaf::Inner : Leaf::Carried;
          fresh.anchor = at;
          fresh.result = cast<OpResult>(raw.value).getResultNumber();
        }
      }
      if (!matchLeaf(w, fresh, j, leaf))
        return false;
    }
  }
  return true;
}

bool Roller::sameIteration(Window &w, int64_t j) {
  size_t leaf = 0;
  for (int64_t i = 0; i < w.period; ++i)
    if (!sameAnchor(w, anchors[w.begin + i],
                    anchors[w.begin + j * w.period + i], j, leaf))
      return false;
  return true;
}

/// The number of iterations from `w.begin` equal to the first, at most
/// `maxCount`; `w.leaves` describes that many.
int64_t Roller::verify(Window &w, int64_t maxCount) {
  w.count = maxCount;
  w.leaves.clear();
  if (!sameIteration(w, 0))
    return 0;
  SmallVector<Leaf> kept = w.leaves;
  int64_t j = 1;
  for (; j < maxCount; ++j) {
    if (!sameIteration(w, j))
      break;
    kept = w.leaves;
  }
  // The leaves as the last equal iteration left them (a failed one may have
  // changed some).
  w.leaves = std::move(kept);
  w.count = j;
  return j;
}

/// Whether every value the run computes and a later op uses can be had
/// after the loop: a stack buffer's slice, the last iteration's carried
/// values, or an expression of those.
bool Roller::usesOk(const Window &w) const {
  Operation *first = anchors[w.begin];
  Operation *last = anchors[w.begin + w.count * w.period - 1];
  int64_t from = position.lookup(first), to = position.lookup(last);
  auto after = [&](Operation *user) {
    Operation *top = block.findAncestorOpInBlock(*user);
    return position.lookup(top) > to;
  };
  llvm::DenseSet<std::pair<int64_t, unsigned>> carried;
  for (const Leaf &l : w.leaves)
    if (l.kind == Leaf::Carried)
      carried.insert({l.anchor, l.result});
  // Whether `v`, computed in the run, is available after it.
  std::function<bool(Value)> available = [&](Value v) -> bool {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &block || position.lookup(def) < from)
      return true;
    auto place = placeOf(w, v);
    if (place) {
      auto [iteration, at] = *place;
      return isStackBuffer(def) ||
             (iteration == w.count - 1 &&
              carried.contains({at, cast<OpResult>(v).getResultNumber()}));
    }
    return llvm::all_of(def->getOperands(), available);
  };
  for (Operation &op :
       llvm::make_range(first->getIterator(), std::next(last->getIterator())))
    for (Value v : op.getResults())
      for (Operation *user : v.getUsers())
        if (after(user) && !available(v))
          return false;
  return true;
}

Value Roller::intAt(OpBuilder &b, Location loc, Type type, const Leaf &l,
                    Value iv) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, type,
                                     b.getIntegerAttr(type, value));
  };
  if (l.step == 0)
    return constant(l.first);
  Value index = type.isIndex()
                    ? iv
                    : arith::IndexCastOp::create(b, loc, type, iv).getResult();
  Value scaled = arith::MulIOp::create(b, loc, index, constant(l.step));
  return arith::AddIOp::create(b, loc, scaled, constant(l.first));
}

/// The reference's value `ref` in the iteration at `iv`, walking its
/// expression in the order sameValue walked it.
Value Roller::emit(OpBuilder &b, const Window &w, Value ref, size_t &leaf,
                   Value iv, ArrayRef<SmallVector<Value>> made,
                   ArrayRef<Value> carriedAt) {
  Location loc = ref.getLoc();
  Operation *def = ref.getDefiningOp();
  bool expression =
      !intConstant(ref) && def && def->getBlock() == &block && recomputed(def);
  if (!expression) {
    const Leaf &l = w.leaves[leaf++];
    switch (l.kind) {
    case Leaf::Int:
      return intAt(b, loc, ref.getType(), l, iv);
    case Leaf::Inner:
      return made[l.anchor][l.result];
    case Leaf::Invariant:
      return l.value;
    case Leaf::Carried:
      return carriedAt[leaf - 1];
    }
  }
  SmallVector<Value> operands;
  for (Value operand : def->getOperands())
    operands.push_back(emit(b, w, operand, leaf, iv, made, carriedAt));
  auto gep = dyn_cast<LLVM::GEPOp>(def);
  if (!gep || !steppingIndex(gep)) {
    Operation *copy = b.clone(*def);
    copy->setOperands(operands);
    return copy->getResult(cast<OpResult>(ref).getResultNumber());
  }
  // An element's index, computed from `iv` if it steps.
  const Leaf &l = w.leaves[leaf++];
  LLVM::GEPArg index = static_cast<int32_t>(l.first);
  if (l.step != 0)
    index = intAt(b, loc, b.getI64Type(), l, iv);
  return LLVM::GEPOp::create(b, loc, gep.getType(), gep.getElemType(),
                             operands.front(), ArrayRef(index),
                             gep.getNoWrapFlags());
}

/// Each place's stack buffers: one buffer ahead of everything, each
/// iteration's a slice of it (a static stack buffer is reserved on entry
/// wherever it is written). Null where the place holds none.
SmallVector<Roller::Stack> Roller::makeStacks(const Window &w) {
  MLIRContext *ctx = entry.getContext();
  Location loc = anchors[w.begin]->getLoc();
  SmallVector<Stack> stacks(w.period);
  OpBuilder top = OpBuilder::atBlockBegin(&block);
  for (int64_t i = 0; i < w.period; ++i) {
    auto alloca = dyn_cast<memref::AllocaOp>(anchors[w.begin + i]);
    if (!alloca || !isStackBuffer(alloca))
      continue;
    MemRefType type = alloca.getType();
    int64_t align =
        std::max<int64_t>(64, alloca.getAlignment().value_or(uint64_t(0)));
    int64_t bytes = llvm::alignTo(
        type.getNumElements() * type.getElementTypeBitWidth() / 8, align);
    Value size = LLVM::ConstantOp::create(
        top, loc, top.getI64Type(), top.getI64IntegerAttr(bytes * w.count));
    stacks[i] = {LLVM::AllocaOp::create(top, loc,
                                        LLVM::LLVMPointerType::get(ctx),
                                        top.getI8Type(), size, align),
                 bytes};
  }
  return stacks;
}

/// The slice at `offset` of the stack buffer of place `i`.
Value Roller::slice(OpBuilder &b, const Window &w, int64_t i,
                    const Stack &stack, Value offset) {
  Location loc = anchors[w.begin]->getLoc();
  Value address = LLVM::GEPOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), b.getI8Type(),
      stack.base, ArrayRef<LLVM::GEPArg>{offset});
  auto type = cast<MemRefType>(anchors[w.begin + i]->getResult(0).getType());
  return bufferAt(b, loc, converter, type, address);
}

/// The loop standing for `w`, before its first op; `carried` gets what it
/// carries, one value per (anchor, result, first value), in the order of
/// its results.
scf::ForOp Roller::buildLoop(const Window &w, ArrayRef<Stack> stacks,
                             SmallVector<const Leaf *> &carried) {
  Location loc = anchors[w.begin]->getLoc();
  SmallVector<int64_t> carriedOf(w.leaves.size(), -1);
  for (auto [k, l] : llvm::enumerate(w.leaves)) {
    if (l.kind != Leaf::Carried)
      continue;
    auto it = llvm::find_if(carried, [&](const Leaf *c) {
      return c->anchor == l.anchor && c->result == l.result &&
             c->value == l.value;
    });
    carriedOf[k] = it - carried.begin();
    if (it == carried.end())
      carried.push_back(&l);
  }
  SmallVector<Value> inits;
  for (const Leaf *c : carried)
    inits.push_back(c->value);
  auto body = [&](OpBuilder &in, Location, Value iv, ValueRange iterArgs) {
    SmallVector<Value> carriedAt(w.leaves.size());
    for (auto [k, c] : llvm::enumerate(carriedOf))
      if (c >= 0)
        carriedAt[k] = iterArgs[c];
    SmallVector<SmallVector<Value>> made(w.period);
    size_t leaf = 0;
    for (int64_t i = 0; i < w.period; ++i) {
      Operation *ref = anchors[w.begin + i];
      if (stacks[i].base) {
        Leaf offset{Leaf::Int, 0};
        offset.step = stacks[i].bytes;
        Value at = intAt(in, loc, in.getI64Type(), offset, iv);
        made[i] = {slice(in, w, i, stacks[i], at)};
        continue;
      }
      SmallVector<Value> operands;
      for (Value operand : ref->getOperands())
        operands.push_back(emit(in, w, operand, leaf, iv, made, carriedAt));
      Operation *copy = in.clone(*ref);
      copy->setOperands(operands);
      made[i] = SmallVector<Value>(copy->getResults());
    }
    SmallVector<Value> yielded;
    for (const Leaf *c : carried)
      yielded.push_back(made[c->anchor][c->result]);
    scf::YieldOp::create(in, loc, yielded);
  };
  OpBuilder b(anchors[w.begin]);
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, w.count);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return scf::ForOp::create(b, loc, lower, upper, one, inits, body);
}

bool Roller::roll(Window &w) {
  Operation *first = anchors[w.begin];
  Operation *last = anchors[w.begin + w.count * w.period - 1];
  // The uses that outlive the run's ops with effects: by a later op, or by
  // an expression in the run that a later op uses.
  auto outlives = [&](OpOperand &use) {
    auto it = anchorAt.find(block.findAncestorOpInBlock(*use.getOwner()));
    return it == anchorAt.end() || it->second < w.begin ||
           it->second >= w.begin + w.count * w.period;
  };
  SmallVector<Stack> stacks = makeStacks(w);
  SmallVector<const Leaf *> carried;
  scf::ForOp loop = buildLoop(w, stacks, carried);
  // Later ops take the last iteration's carried values from the loop, and
  // each iteration's stack buffer as its slice.
  int64_t lastBegin = w.begin + (w.count - 1) * w.period;
  for (auto [k, c] : llvm::enumerate(carried))
    anchors[lastBegin + c->anchor]->getResult(c->result).replaceUsesWithIf(
        loop.getResult(k), outlives);
  bool sliced = false;
  for (int64_t j = 0; j < w.count; ++j)
    for (int64_t i = 0; i < w.period; ++i) {
      Operation *alloca = anchors[w.begin + j * w.period + i];
      if (!stacks[i].base || llvm::none_of(alloca->getUses(), outlives))
        continue;
      OpBuilder at(alloca);
      Value offset =
          LLVM::ConstantOp::create(at, alloca->getLoc(), at.getI64Type(),
                                   at.getI64IntegerAttr(j * stacks[i].bytes));
      alloca->getResult(0).replaceUsesWithIf(slice(at, w, i, stacks[i], offset),
                                             outlives);
      sliced = true;
    }
  SmallVector<Operation *> run;
  for (Operation &op :
       llvm::make_range(first->getIterator(), std::next(last->getIterator())))
    run.push_back(&op);
  // Users first: each op with effects has no use left (usesOk).
  for (Operation *op : llvm::reverse(run))
    if (anchorAt.count(op) || op->use_empty())
      op->erase();
  // The expressions only the run used (argument loads, arena slices ahead
  // of its first call).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (op.use_empty() && !op.hasTrait<OpTrait::IsTerminator>() &&
        recomputed(&op))
      op.erase();
  return sliced;
}

bool Roller::rollOne(int64_t &iterations) {
  index();
  SmallVector<llvm::hash_code> hashes;
  for (Operation *op : anchors) {
    llvm::hash_code h = llvm::hash_combine(
        op->getName().getAsOpaquePointer(), op->getResultTypes(),
        op->hashProperties(), op->getDiscardableAttrDictionary());
    if (!isStackBuffer(op))
      for (Value operand : op->getOperands())
        h = llvm::hash_combine(h, flatten(operand).structure);
    hashes.push_back(h);
  }
  auto breaks = [&](int64_t i) { return anchors[i]->getNumRegions() != 0; };
  for (const Stretch &s : findRepeats(hashes, breaks, 1)) {
    if (s.gain() < minGain)
      break;
    auto key = std::make_tuple(anchors[s.begin], s.period, s.count);
    if (failed.contains(key))
      continue;
    // A repetition may hold several of the hashes' periods: a buffer
    // planner alternating two buffers between layers repeats every second
    // layer. The window that covers the most wins.
    std::optional<Window> best;
    int64_t whole = s.end() - s.begin;
    for (int64_t period = s.period;
         period * minCount <= whole && period <= 4 * s.period &&
         (!best || best->count * best->period < whole);
         period += s.period)
      for (int64_t phase = 0; phase < period; phase += s.period)
        for (int64_t start = s.begin + phase;
             start + minCount * period <= s.end();) {
          Window w{start, period, 0, {}};
          int64_t count = verify(w, (s.end() - start) / period);
          // A window from a later start than one that failed after
          // `count` iterations fails at the same place, unless it starts
          // there.
          start += std::max<int64_t>(count - 1, 1) * period;
          if (count < minCount || (count - 1) * period < minGain ||
              (best && count * period <= best->count * best->period) ||
              !usesOk(w))
            continue;
          best = std::move(w);
        }
    if (!best) {
      failed.insert(key);
      continue;
    }
    // A run that failed may match once this one's stack buffers are
    // slices (a layer's backward pass uses its forward pass's).
    if (roll(*best))
      failed.clear();

    iterations += best->count;
    return true;
  }
  return false;
}

struct RollLayerCallsPass : impl::RollLayerCallsPassBase<RollLayerCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minCount < 2) {
      module.emitError("loom-roll-layer-calls: min-count must be at least 2, "
                       "not ")
          << static_cast<int64_t>(minCount);
      return signalPassFailure();
    }
    for (auto fn : module.getOps<func::FuncOp>()) {
      // The exported entries (--loom-load-entry-arguments): their last
      // argument is the runtime's array of buffer addresses.
      if (fn.isExternal() || !fn.isPublic() || !fn->hasAttr(kAbiAttr) ||
          !fn.getBody().hasOneBlock() || fn.getNumArguments() == 0 ||
          !isa<LLVM::LLVMPointerType>(fn.getArgumentTypes().back()))
        continue;
      Roller roller(fn, minCount, minGain);
      int64_t iterations = 0;
      while (roller.rollOne(iterations))
        ++numLoops;
      numIterations += iterations;
    }
  }
};

} // namespace
} // namespace mlir::loom
