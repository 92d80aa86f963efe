//===- OutlineLoopNests.cpp - Each loop nest a function, each once -------===//
//
// A training step is one function of thousands of loop nests, and LLVM's
// loop passes (IndVarSimplify, LoopRotate) cost more per nest the larger
// the function: a 6-layer GPT's step spent 10 of its 16 s of LLVM
// optimisation in those two. Each top-level nest of an entry function
// becomes a function of its own, called where the nest was; nests that
// are the same but for the buffers they touch (every layer's) become one
// function, so LLVM optimises each distinct nest once, however deep the
// model.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Support/Outlined.h"
#include "loom/Support/SymbolText.h"
#include "passes/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "loom-outline-loop-nests"

namespace mlir::loom {
#define GEN_PASS_DEF_OUTLINELOOPNESTSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

/// The values from outside `nest` it uses, in order of first use: its own
/// operands (bounds), then those its regions use.
llvm::SetVector<Value> usedFromOutside(Operation *nest) {
  llvm::SetVector<Value> used(nest->operand_begin(), nest->operand_end());
  for (Region &region : nest->getRegions())
    getUsedValuesDefinedAbove(region, used);
  return used;
}

bool isConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

/// What a nest's function is made of: constants and views to clone in
/// (definitions before uses) and the arguments.
struct Captures {
  llvm::SetVector<Operation *> cloned;
  llvm::SetVector<Value> args;

  /// Captures `v`; false if it can be neither passed nor rebuilt.
  /// A view with a runtime offset (a ZeRO slice) cannot be passed as a
  /// bare pointer, so it is rebuilt inside from what it is made of.
  bool capture(Value v) {
    Operation *def = v.getDefiningOp();
    if (isConstant(v)) {
      cloned.insert(def);
      return true;
    }
    if (passableAsBarePointer(v.getType())) {
      args.insert(v);
      return true;
    }
    if (!def || !isa<ViewLikeOpInterface>(def) || def->getNumRegions() != 0 ||
        def->getNumResults() != 1)
      return false;
    for (Value operand : def->getOperands())
      if (!capture(operand))
        return false;
    cloned.insert(def);
    return true;
  }
};

struct OutlineLoopNestsPass
    : impl::OutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> distinct;
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      // The entries, and the functions of their repeated layers
      // (--loom-outline-layers): a nest of a layer is one function too.
      if ((fn->hasAttr(kEntryAttr) || fn->hasAttr(kOutlinedAttr)) &&
          !fn.isExternal())
        entries.push_back(fn);
    for (func::FuncOp entry : entries) {
      SmallVector<Operation *> nests;
      for (Operation &op : entry.getBody().front())
        if (isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0)
          nests.push_back(&op);
      for (Operation *nest : nests)
        outline(nest, entry, symbols, distinct);
    }
  }

  /// Replaces `nest` by a call of a function holding it: an existing one
  /// with the same body, or a new one.
  void outline(Operation *nest, func::FuncOp entry, SymbolTable &symbols,
               llvm::StringMap<func::FuncOp> &distinct) {
    Captures captures;
    for (Value v : usedFromOutside(nest))
      if (!captures.capture(v)) {
        ++numKept;
        return;
      }
    SmallVector<Value> args(captures.args.begin(), captures.args.end());
    SmallVector<Type> types;
    for (Value v : args)
      types.push_back(v.getType());
    Location loc = nest->getLoc();
    func::FuncOp fn = createOutlinedFunction(
        entry, loc, (entry.getSymName() + "_nest").str(),
        FunctionType::get(entry.getContext(), types, {}));
    Block *body = &fn.getBody().front();
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    IRMapping map;
    // Constants are cloned in, not passed: loop bounds and factors stay
    // constants for LLVM.
    for (auto [value, arg] : llvm::zip_equal(args, body->getArguments()))
      map.map(value, arg);
    for (Operation *op : captures.cloned)
      inner.clone(*op, map);
    inner.clone(*nest, map);
    func::ReturnOp::create(inner, loc);

    auto [it, inserted] = distinct.try_emplace(textNamed(fn, ""), fn);
    if (inserted) {
      symbols.insert(fn); // numbers the name if it is taken
      ++numDistinct;
    } else {
      fn.erase();
    }
    OpBuilder call(nest);
    func::CallOp::create(call, loc, it->second, args);
    nest->erase();
    ++numOutlined;
  }
};

} // namespace
} // namespace mlir::loom
