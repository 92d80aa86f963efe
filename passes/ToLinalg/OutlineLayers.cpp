//===- OutlineLayers.cpp - An entry's repeated runs compiled once --------===//
//
// Every stage after this one costs time in proportion to the ops it sees,
// and a model's layers repeat the same ops: a 48-layer GPT compiled in 6.7x
// the time of a 12-layer one, almost all of it in copies of one layer.
// Outlined here, on the loom ops after autodiff, the distribution passes,
// decomposition and CSE (which lets a layer's backward pass use what its
// forward pass computed), each distinct repetition goes through the
// lowering, bufferization and LLVM once, and the entries keep one call per
// layer. The pipeline runs the pass again on the lowered entries, where
// each layer's optimizer updates and their writes into the entry's buffers
// repeat.
//
// Repetitions are found without knowing the model: each op gets a hash of
// what it computes (its name, attributes and types; a parameter read only
// its type), a period is a distance that separates many equal hashes, and
// a run is a stretch where every op equals the op one period later. Hashes
// only propose: a repetition joins a group only if it is the same
// computation as the group's first, operand for operand (values made in the
// repetition at the same place, equal constants, and values from outside
// in the same order of first use). A function is then correct by
// construction: its arguments are the values from outside, its results the
// values used after the repetition, and the call stands where the
// repetition began, after all of its arguments.
//
//===----------------------------------------------------------------------===//
#include "passes/ToLinalg/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Support/Outlined.h"
#include "loom/Support/Repeats.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "loom-outline-layers"

namespace mlir::loom {
#define GEN_PASS_DEF_OUTLINELAYERSPASS
#include "passes/ToLinalg/Passes.h.inc"

namespace {

/// What a repetition may hold: computations, which move into the function;
/// parameter reads, which stay before the call; nothing else.
enum class Kind { Compute, Read, Barrier };

bool isStaticTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && !tensor.getEncoding();
}

/// What a function of this pass may take: a static tensor, a scalar (a
/// learning rate extracted once per step), or an entry's buffer that a
/// moved write writes.
bool isPassable(Type type) {
  if (type.isIntOrIndexOrFloat())
    return true;
  auto memref = dyn_cast<MemRefType>(type);
  if (memref)
    return memref.hasStaticShape() && memref.getLayout().isIdentity() &&
           !memref.getMemorySpace();
  return isStaticTensor(type);
}

/// A write of a new value into one of the entry's buffers
/// (--loom-lower-entry-points): it moves into the function with the buffer
/// as an argument, so that it happens where it did.
bool isEntryWrite(Operation *op) {
  auto write = dyn_cast<bufferization::MaterializeInDestinationOp>(op);
  return write && write->getNumResults() == 0 &&
         isa<BlockArgument>(write.getDest()) &&
         isa<func::FuncOp>(write->getParentOp());
}

/// A call of a function this pass made (when it runs again on lowered
/// entries): computations on tensors.
bool isOutlinedCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  return fn && fn->hasAttr(kOutlinedAttr);
}

Kind classify(Operation *op) {
  if (isa<GetParamOp>(op))
    return Kind::Read;
  if (isEntryWrite(op) || isOutlinedCall(op))
    return Kind::Compute;
  if (op->hasTrait<OpTrait::IsTerminator>() || !isMemoryEffectFree(op) ||
      isa<SymbolUserOpInterface>(op) || op->getDialect() == nullptr ||
      op->getDialect()->getNamespace() == "comm")
    return Kind::Barrier;
  return Kind::Compute;
}

/// Calls `fn` on each value `op` uses that is defined outside it: its
/// operands, then those its regions use, in order.
void forEachInput(Operation *op, function_ref<void(Value)> fn) {
  for (Value v : op->getOperands())
    fn(v);
  if (op->getNumRegions() == 0)
    return;
  op->walk([&](Operation *nested) {
    if (nested == op)
      return;
    for (Value v : nested->getOperands())
      if (!op->isAncestor(v.getParentRegion()->getParentOp()))
        fn(v);
  });
}

/// A repetition's values from outside: the function's arguments, in order
/// of first use (a parameter read's result where the read is).
struct Inputs {
  SmallVector<Value> values;
  llvm::DenseMap<Value, unsigned> index;
};

class Outliner {
public:
  Outliner(ModuleOp module, func::FuncOp entry, int64_t minOps,
           SmallVectorImpl<func::FuncOp> &made)
      : module(module), entry(entry), block(entry.getBody().front()),
        minOps(minOps), made(made) {}

  /// Outlines every group of equal repetitions of the entry's block;
  /// returns the number of calls made.
  int64_t run();
  int64_t opsMoved = 0;

private:
  SmallVector<Stretch> chooseStretches() const;
  bool inRepetition(Value v, int64_t begin, int64_t period,
                    int64_t *at = nullptr) const;
  bool isCopiedConstant(Value v) const;
  Inputs inputsOf(int64_t begin, int64_t period) const;
  bool sameRepetition(int64_t first, int64_t other, int64_t period) const;
  SmallVector<std::pair<int64_t, unsigned>> resultsOf(ArrayRef<int64_t> begins,
                                                      int64_t period) const;
  func::FuncOp build(int64_t begin, int64_t period,
                     ArrayRef<std::pair<int64_t, unsigned>> results);
  void replace(int64_t begin, int64_t period, func::FuncOp fn,
               ArrayRef<std::pair<int64_t, unsigned>> results);
  int64_t outlineGroup(ArrayRef<int64_t> begins, int64_t period);

  ModuleOp module;
  func::FuncOp entry;
  Block &block;
  int64_t minOps;
  SmallVectorImpl<func::FuncOp> &made;
  SmallVector<Operation *> ops;
  SmallVector<Kind> kinds;
  /// Whether each op calls a function this pass made.
  SmallVector<bool> outlinedCalls;
  SmallVector<llvm::hash_code> hashes;
  llvm::DenseMap<Operation *, int64_t> position;
};

/// The runs of each candidate period, the largest saving first, none
/// overlapping another. A repetition of calls of layer functions with
/// fewer than `minOps` other ops is not one: a 48-layer model's calls
/// would become functions of 10 calls each, which hides the layers from
/// --loom-roll-layer-calls and saves nothing.
SmallVector<Stretch> Outliner::chooseStretches() const {
  SmallVector<Stretch> chosen;
  for (const Stretch &s : findRepeats(
           hashes, [&](int64_t i) { return kinds[i] == Kind::Barrier; },
           minOps)) {
    int64_t own =
        llvm::count(ArrayRef(outlinedCalls).slice(s.begin, s.period), false);
    if (own >= minOps &&
        llvm::none_of(chosen, [&](const Stretch &c) { return s.overlaps(c); }))
      chosen.push_back(s);
  }
  return chosen;
}

/// Whether `v` is made by an op of the repetition at `begin` (and where).
bool Outliner::inRepetition(Value v, int64_t begin, int64_t period,
                            int64_t *at) const {
  Operation *def = v.getDefiningOp();
  auto it = def ? position.find(def) : position.end();
  if (it == position.end() || it->second < begin ||
      it->second >= begin + period)
    return false;
  if (at)
    *at = it->second - begin;
  return true;
}

/// Constants are copied into the function, not passed: its ops fold
/// with them as they would in the entry.
bool Outliner::isCopiedConstant(Value v) const {
  Operation *def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>() &&
         def->getNumOperands() == 0 && def->getNumRegions() == 0;
}

Inputs Outliner::inputsOf(int64_t begin, int64_t period) const {
  Inputs in;
  auto add = [&](Value v) {
    if (in.index.try_emplace(v, in.values.size()).second)
      in.values.push_back(v);
  };
  for (int64_t t = 0; t < period; ++t) {
    Operation *op = ops[begin + t];
    if (kinds[begin + t] == Kind::Read) {
      add(op->getResult(0));
      continue;
    }
    forEachInput(op, [&](Value v) {
      if (!inRepetition(v, begin, period) && !isCopiedConstant(v))
        add(v);
    });
  }
  return in;
}

bool Outliner::sameRepetition(int64_t first, int64_t other,
                              int64_t period) const {
  Inputs a = inputsOf(first, period), b = inputsOf(other, period);
  if (a.values.size() != b.values.size())
    return false;
  // Values inside the ops' regions (block arguments, results of nested
  // ops) that the comparison has found to correspond.
  llvm::DenseMap<Value, Value> matched;
  auto markMatched = [&](Value x, Value y) { matched[x] = y; };
  auto sameOperand = [&](Value x, Value y) -> LogicalResult {
    if (auto it = matched.find(x); it != matched.end())
      return success(it->second == y);
    int64_t at = 0, atOther = 0;
    bool inside = inRepetition(x, first, period, &at);
    if (inside != inRepetition(y, other, period, &atOther))
      return failure();
    if (inside)
      return success(at == atOther && cast<OpResult>(x).getResultNumber() ==
                                          cast<OpResult>(y).getResultNumber());
    if (isCopiedConstant(x) || isCopiedConstant(y))
      return success(isCopiedConstant(x) && isCopiedConstant(y) &&
                     OperationEquivalence::isEquivalentTo(
                         x.getDefiningOp(), y.getDefiningOp(),
                         OperationEquivalence::IgnoreLocations));
    auto ix = a.index.find(x), iy = b.index.find(y);
    return success(ix != a.index.end() && iy != b.index.end() &&
                   ix->second == iy->second);
  };
  for (int64_t t = 0; t < period; ++t) {
    Operation *x = ops[first + t], *y = ops[other + t];
    if (kinds[first + t] != kinds[other + t])
      return false;
    if (kinds[first + t] == Kind::Read) {
      if (x->getName() != y->getName() ||
          x->getResultTypes() != y->getResultTypes())
        return false;
      continue;
    }
    if (!OperationEquivalence::isEquivalentTo(
            x, y, sameOperand, markMatched,
            OperationEquivalence::IgnoreLocations))
      return false;
  }
  return true;
}

/// The values of the repetitions at `begins` used after them, as (op,
/// result) places: the function's results, the same for every call.
SmallVector<std::pair<int64_t, unsigned>>
Outliner::resultsOf(ArrayRef<int64_t> begins, int64_t period) const {
  SmallVector<std::pair<int64_t, unsigned>> results;
  for (int64_t t = 0; t < period; ++t) {
    if (kinds[begins.front() + t] == Kind::Read)
      continue;
    for (unsigned r = 0; r < ops[begins.front() + t]->getNumResults(); ++r) {
      bool usedAfter = llvm::any_of(begins, [&](int64_t begin) {
        return llvm::any_of(
            ops[begin + t]->getResult(r).getUsers(), [&](Operation *user) {
              Operation *top = block.findAncestorOpInBlock(*user);
              auto it = top ? position.find(top) : position.end();
              return it == position.end() || it->second < begin ||
                     it->second >= begin + period;
            });
      });
      if (usedAfter)
        results.push_back({t, r});
    }
  }
  return results;
}

/// The function of the repetition at `begin`, or an equal one made
/// before (the forward pass of `loss` and of `train_step`).
func::FuncOp Outliner::build(int64_t begin, int64_t period,
                             ArrayRef<std::pair<int64_t, unsigned>> results) {
  Inputs in = inputsOf(begin, period);
  SmallVector<Type> argTypes, resultTypes;
  for (Value v : in.values)
    argTypes.push_back(v.getType());
  for (auto [t, r] : results)
    resultTypes.push_back(ops[begin + t]->getResult(r).getType());
  if (!llvm::all_of(argTypes, isPassable) ||
      !llvm::all_of(resultTypes, isStaticTensor))
    return nullptr;

  auto type = FunctionType::get(module.getContext(), argTypes, resultTypes);
  std::string name;
  for (int i = made.size(); name.empty() || module.lookupSymbol(name); ++i)
    name = (entry.getSymName() + "_repeat" + Twine(i)).str();
  func::FuncOp fn =
      createOutlinedFunction(entry, ops[begin]->getLoc(), name, type);
  fn->setAttr(kOutlinedAttr, UnitAttr::get(module.getContext()));

  IRMapping map;
  for (auto [v, arg] : llvm::zip(in.values, fn.getArguments()))
    map.map(v, arg);
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  for (int64_t t = 0; t < period; ++t) {
    Operation *op = ops[begin + t];
    if (kinds[begin + t] == Kind::Read)
      continue;
    forEachInput(op, [&](Value v) {
      if (!map.contains(v) && isCopiedConstant(v))
        b.clone(*v.getDefiningOp(), map);
    });
    b.clone(*op, map);
  }
  SmallVector<Value> returned;
  for (auto [t, r] : results)
    returned.push_back(map.lookup(ops[begin + t]->getResult(r)));
  func::ReturnOp::create(b, fn.getLoc(), returned);

  for (func::FuncOp other : made)
    if (other.getFunctionType() == type &&
        OperationEquivalence::isRegionEquivalentTo(
            &other.getBody(), &fn.getBody(),
            OperationEquivalence::IgnoreLocations)) {
      fn.erase();
      return other;
    }
  made.push_back(fn);
  return fn;
}

/// The repetition at `begin` becomes a call of `fn`: its parameter reads
/// move before the call, its other ops go.
void Outliner::replace(int64_t begin, int64_t period, func::FuncOp fn,
                       ArrayRef<std::pair<int64_t, unsigned>> results) {
  Inputs in = inputsOf(begin, period);
  Operation *first = ops[begin];
  OpBuilder b(first);
  auto call = func::CallOp::create(b, first->getLoc(), fn, in.values);
  call.setNoInline(true);
  for (int64_t t = 0; t < period; ++t)
    if (kinds[begin + t] == Kind::Read)
      ops[begin + t]->moveBefore(call);
  for (auto [i, place] : llvm::enumerate(results))
    ops[begin + place.first]
        ->getResult(place.second)
        .replaceAllUsesWith(call.getResult(i));
  for (int64_t t = period - 1; t >= 0; --t) {
    if (kinds[begin + t] == Kind::Read)
      continue;
    position.erase(ops[begin + t]);
    ops[begin + t]->erase();
    ++opsMoved;
  }
}

int64_t Outliner::outlineGroup(ArrayRef<int64_t> begins, int64_t period) {
  if (begins.size() < 2)
    return 0;
  SmallVector<std::pair<int64_t, unsigned>> results = resultsOf(begins, period);
  func::FuncOp fn = build(begins.front(), period, results);
  if (!fn)
    return 0;
  for (int64_t begin : begins)
    replace(begin, period, fn, results);
  return begins.size();
}

int64_t Outliner::run() {
  for (Operation &op : block.without_terminator()) {
    position[&op] = ops.size();
    ops.push_back(&op);
    Kind kind = classify(&op);
    kinds.push_back(kind);
    outlinedCalls.push_back(isOutlinedCall(&op));
    if (kind == Kind::Read)
      hashes.push_back(llvm::hash_combine(op.getName().getAsOpaquePointer(),
                                          op.getResultTypes()));
    else
      hashes.push_back(OperationEquivalence::computeHash(
          &op, [](Value v) { return mlir::hash_value(v.getType()); },
          OperationEquivalence::ignoreHashValue,
          OperationEquivalence::IgnoreLocations));
  }
  int64_t calls = 0;
  for (const Stretch &s : chooseStretches()) {
    // Consecutive repetitions equal to the group's first form a group.
    SmallVector<int64_t> group;
    for (int64_t i = 0; i < s.count; ++i) {
      int64_t begin = s.begin + i * s.period;
      if (group.empty() || sameRepetition(group.front(), begin, s.period)) {
        group.push_back(begin);
        continue;
      }
      calls += outlineGroup(group, s.period);
      group = {begin};
    }
    calls += outlineGroup(group, s.period);
  }
  return calls;
}

struct OutlineLayersPass : impl::OutlineLayersPassBase<OutlineLayersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (minOps < 1) {
      module.emitError("loom-outline-layers: min-ops must be at least 1, not ")
          << static_cast<int64_t>(minOps);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> made;
    for (func::FuncOp fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal() || !fn->hasAttr(kEntryAttr) ||
          !fn.getBody().hasOneBlock())
        continue;
      Outliner outliner(module, fn, minOps, made);
      numCalls += outliner.run();
      numOpsMoved += outliner.opsMoved;
    }
    numFunctions += made.size();
  }
};

} // namespace
} // namespace mlir::loom
