//===- LowerEntryPoints.cpp - The runtime's buffer calling convention -----===//
//
// Turns every `loom.entry` function into `void(memref...)` following
// runtime/include/loom/runtime/abi.h. Each write to a caller buffer is
// emitted after every read of the buffer's old value (direct, through a view,
// or by an asynchronous collective until its wait), as soon as the new value
// exists: one-shot bufferization may then copy new values into the parameters
// without a later read seeing them, and the temporary that held a new value
// is freed at once. Writes that must wait for the return (an output is an old
// value) follow the outputs. Optimizer ops say which state tensors they keep
// and build their own updates (OptimizerOpInterface): this pass gives that
// state buffers and knows no optimizer.
//
//===----------------------------------------------------------------------===//
#include "passes/ToLinalg/Passes.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "loom-lower-entry-points"

namespace mlir::loom {
#define GEN_PASS_DEF_LOWERENTRYPOINTSPASS
#include "passes/ToLinalg/Passes.h.inc"

namespace {

/// One argument of the lowered function.
struct AbiArg {
  std::string role, name;
  RankedTensorType type;
};

MemRefType memrefFor(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// The last op of `body` that reads `old` (a parameter's or state tensor's
/// value on entry): directly, through a view of it (whose buffer is old's),
/// or until the wait of an asynchronous collective that reads it.
Operation *lastReader(Block *body, Value old) {
  Operation *last = nullptr;
  SmallVector<Value> work{old};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *top = body->findAncestorOpInBlock(*user);
      if (top && (!last || last->isBeforeInBlock(top)))
        last = top;
      for (Value r : user->getResults())
        if (isa<ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp>(
                user) ||
            isa<comm::TokenType>(r.getType()))
          work.push_back(r);
    }
  }
  return last;
}

struct LowerEntryPointsPass
    : impl::LowerEntryPointsPassBase<LowerEntryPointsPass> {
  using Base::Base;

  /// A parameter that an offload transfer writes back (zeroth-order
  /// training with offloaded parameters, docs/zo.md) is writable in place:
  /// the transfer lands in the parameter's own buffer, not in a temporary
  /// copied into it at the end. Other parameters stay read-only, so that no
  /// op ever bufferizes into one by chance.
  static void allowOffloadWrites(const llvm::StringMap<Value> &current) {
    for (const auto &entry : current)
      for (Operation *user : entry.second.getUsers())
        if (auto transfer = dyn_cast<comm::TransferStartOp>(user))
          if (transfer.getDest() == entry.second)
            if (auto t =
                    entry.second.getDefiningOp<bufferization::ToTensorOp>())
              t.setWritable(true);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(kEntryAttr))
        entries.push_back(fn);
    // Helpers were inlined into the entries; what is left reads parameters
    // that are about to disappear, so it must go (or be reported).
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      // The entries' repeated runs (--loom-outline-layers) take their
      // parameters as arguments.
      if (fn->hasAttr(kEntryAttr) || fn.isExternal() ||
          fn->hasAttr(kOutlinedAttr))
        continue;
      if (!SymbolTable::symbolKnownUseEmpty(fn, module)) {
        fn.emitError("function is still called after inlining; entry "
                     "functions must not call functions that read parameters");
        return signalPassFailure();
      }
      fn.erase();
    }
    for (auto fn : entries)
      if (failed(lowerEntry(module, fn)))
        return signalPassFailure();
    for (auto param : llvm::make_early_inc_range(module.getOps<ParamOp>()))
      param.erase();
  }

  LogicalResult lowerEntry(ModuleOp module, func::FuncOp fn) {
    if (!llvm::hasSingleElement(fn.getBody()))
      return fn.emitError("entry functions must have one block (inline "
                          "calls first)");
    MLIRContext *ctx = module.getContext();
    Block &oldBody = fn.getBody().front();

    // Optimizer state, in parameter order, for the params this entry updates.
    llvm::DenseMap<StringAttr, OptimizerOpInterface> updaters;
    for (auto opt : oldBody.getOps<OptimizerOpInterface>())
      if (FlatSymbolRefAttr param = opt.getUpdatedParam())
        if (!updaters.try_emplace(param.getAttr(), opt).second)
          return opt->emitError("parameter ")
                 << param.getAttr() << " is updated twice in one step";

    SmallVector<AbiArg> abi;
    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    for (ParamOp p : params)
      abi.push_back({"param", p.getSymName().str(), p.getTensorType()});
    auto addState = [&](OptimizerOpInterface opt) {
      for (StringRef suffix : opt.getStateSuffixes())
        abi.push_back({"state", (opt.getStatePrefix() + "." + suffix).str(),
                       opt.getStateType()});
    };
    for (ParamOp p : params)
      if (OptimizerOpInterface opt = updaters.lookup(p.getSymNameAttr()))
        addState(opt);
    // An update of a value (a slice of CO2's sharded outer step) keeps its
    // state like a parameter's, after theirs.
    for (auto opt : oldBody.getOps<OptimizerOpInterface>())
      if (!opt.getUpdatedParam())
        addState(opt);
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      auto tt = dyn_cast<RankedTensorType>(t);
      if (!tt || !tt.hasStaticShape())
        return fn.emitError("entry argument ")
               << i << " must be a statically shaped tensor, got " << t;
      auto name = fn.getArgAttrOfType<StringAttr>(i, kInputAttr);
      std::string n = name ? name.str() : "input" + std::to_string(i);
      abi.push_back({n == "step" ? "step" : "input", n, tt});
    }
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
      auto name = fn.getResultAttrOfType<StringAttr>(i, kOutputAttr);
      abi.push_back({"output", name ? name.str() : "output" + std::to_string(i),
                     cast<RankedTensorType>(t)});
    }

    // The new function, next to the old one.
    OpBuilder b(fn);
    SmallVector<Type> argTypes;
    for (const AbiArg &a : abi)
      argTypes.push_back(memrefFor(a.type));
    auto newFn = func::FuncOp::create(b, fn.getLoc(), fn.getSymName(),
                                      FunctionType::get(ctx, argTypes, {}));
    newFn->setAttr(kEntryAttr, fn->getAttr(kEntryAttr));
    SmallVector<Attribute> abiAttr;
    for (const AbiArg &a : abi)
      abiAttr.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("role", b.getStringAttr(a.role)),
           b.getNamedAttr("name", b.getStringAttr(a.name))}));
    newFn->setAttr(kAbiAttr, b.getArrayAttr(abiAttr));
    Block *body = newFn.addEntryBlock();
    b.setInsertionPointToStart(body);
    Location loc = fn.getLoc();

    auto read = [&](unsigned i) -> Value {
      return bufferization::ToTensorOp::create(b, loc, abi[i].type,
                                               body->getArgument(i),
                                               /*restrict=*/true);
    };
    llvm::StringMap<Value> current; // name -> entry value of param/state
    llvm::StringMap<unsigned> argIndex;
    unsigned firstInput = 0, firstOutput = 0;
    for (auto [i, a] : llvm::enumerate(abi)) {
      argIndex[a.name] = i;
      if (a.role == "param" || a.role == "state") {
        current[a.name] = read(i);
        firstInput = i + 1;
      }
    }
    for (unsigned i = firstInput; i < abi.size(); ++i)
      if (abi[i].role != "output")
        firstOutput = i + 1;
    if (firstOutput == 0)
      firstOutput = firstInput;

    // Move the body and feed the old arguments from the new buffers.
    SmallVector<Value> inputs;
    for (unsigned i = 0; i < oldBody.getNumArguments(); ++i)
      inputs.push_back(read(firstInput + i));
    body->getOperations().splice(body->end(), oldBody.getOperations());
    for (auto [arg, value] : llvm::zip(oldBody.getArguments(), inputs))
      arg.replaceAllUsesWith(value);

    // Parameter reads and optimizer updates.
    llvm::MapVector<unsigned, Value> writes; // arg index -> new value
    SmallVector<Operation *> toErase;
    for (Operation &op : body->getOperations()) {
      if (auto get = dyn_cast<GetParamOp>(op)) {
        get.replaceAllUsesWith(current[get.getParam()]);
        toErase.push_back(get);
        continue;
      }
      if (auto get = dyn_cast<GetStateOp>(op)) {
        Value entry = current.lookup(get.getName());
        if (!entry || entry.getType() != get.getType())
          return get.emitError("state '")
                 << get.getName() << "' is not a state of this entry";
        get.replaceAllUsesWith(entry);
        toErase.push_back(get);
        continue;
      }
      auto opt = dyn_cast<OptimizerOpInterface>(op);
      if (!opt)
        continue;
      b.setInsertionPoint(&op);
      StringRef prefix = opt.getStatePrefix();
      SmallVector<StringRef> suffixes = opt.getStateSuffixes();
      SmallVector<Value> state;
      for (StringRef s : suffixes)
        state.push_back(current[(prefix + "." + s).str()]);
      FlatSymbolRefAttr param = opt.getUpdatedParam();
      SmallVector<Value> updated = opt.buildUpdate(
          b, param ? current[param.getValue()] : Value(), state);
      if (param)
        writes[argIndex[param.getValue()]] = updated[0];
      else
        op.getResult(0).replaceAllUsesWith(updated[0]);
      for (auto [s, v] : llvm::zip(suffixes, ArrayRef(updated).drop_front()))
        writes[argIndex[(prefix + "." + s).str()]] = v;
      toErase.push_back(&op);
    }
    for (Operation *op : toErase)
      op->erase();
    allowOffloadWrites(current);

    auto ret = cast<func::ReturnOp>(body->getTerminator());
    auto materialize = [&](Value value, unsigned index) -> Operation * {
      auto m = bufferization::MaterializeInDestinationOp::create(
          b, loc, TypeRange{}, value, body->getArgument(index));
      m.setRestrict(true);
      m.setWritable(true);
      return m;
    };
    // A new value whose buffer's old value nothing reads any more is
    // written at once, so that its temporary is freed then and not at the
    // end: the step never holds a second copy of every parameter (a
    // zeroth-order update writes each one as soon as it is computed).
    llvm::MapVector<unsigned, Value> late;
    // The writes placed after one op follow it in the order of `writes`.
    llvm::DenseMap<Operation *, Operation *> lastPlaced;
    for (auto [index, value] : writes) {
      Operation *after = lastReader(body, current.lookup(abi[index].name));
      Operation *def = value.getDefiningOp()
                           ? body->findAncestorOpInBlock(*value.getDefiningOp())
                           : nullptr;
      if (def && (!after || after->isBeforeInBlock(def)))
        after = def;
      if (!after || after == ret) {
        late[index] = value;
        continue;
      }
      Operation *&placed = lastPlaced[after];
      b.setInsertionPointAfter(placed ? placed : after);
      placed = materialize(value, index);
    }
    // Then outputs: an output may be the old value of a parameter, which
    // must be copied out before the parameter's buffer is overwritten.
    llvm::MapVector<unsigned, Value> ordered;
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      ordered[firstOutput + i] = v;
    for (auto [index, value] : late)
      ordered[index] = value;
    b.setInsertionPoint(ret);
    for (auto [index, value] : ordered)
      materialize(value, index);
    func::ReturnOp::create(b, loc);
    ret.erase();
    fn.erase();
    return success();
  }
};

} // namespace
} // namespace mlir::loom
