//===- LowerEntryPoints.cpp - The runtime's buffer calling convention -----===//
//
// Turns every `loom.entry` function into `void(memref...)` following
// runtime/include/loom/runtime/abi.h. All writes to caller buffers are
// emitted just before the return, after every read of the old values: one-shot
// bufferization may then copy new values into the parameters in place without
// a later read seeing them.
//
//===----------------------------------------------------------------------===//
#include "passes/Lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "loom-lower-entry-points"

namespace mlir::loom {
#define GEN_PASS_DEF_LOWERENTRYPOINTSPASS
#include "passes/Lowering/Passes.h.inc"

namespace {

/// One argument of the lowered function.
struct AbiArg {
  std::string role, name;
  RankedTensorType type;
};

MemRefType memrefFor(RankedTensorType t) {
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// The state of CO2's outer step, for a parameter or a shard.
constexpr StringRef kCO2StateSuffixes[] = {"co2_anchor", "co2_prev_anchor",
                                           "co2_momentum"};

/// The state tensors an optimizer op keeps for its parameter.
SmallVector<std::string> stateSuffixes(Operation *op) {
  if (isa<AdamWOp>(op))
    return {"exp_avg", "exp_avg_sq"};
  if (auto sgd = dyn_cast<SGDOp>(op))
    if (!sgd.getMomentum().isZero())
      return {"momentum_buffer"};
  if (isa<CO2OuterOp>(op))
    return SmallVector<std::string>(std::begin(kCO2StateSuffixes),
                                    std::end(kCO2StateSuffixes));
  return {};
}

/// Builds an elementwise linalg.generic over `ins` (all of `shape`) with
/// `numOuts` results of `type`; `body` gets the block arguments of the ins.
SmallVector<Value> buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange ins,
    unsigned numOuts,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> outs;
  for (unsigned i = 0; i < numOuts; ++i)
    outs.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                           type.getElementType()));
  auto id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<AffineMap> maps(ins.size() + numOuts, id);
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, SmallVector<Type>(numOuts, type), ins, outs, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl,
                                body(nb, nl, args.take_front(ins.size())));
      });
  return generic.getResults();
}

struct LowerEntryPointsPass
    : impl::LowerEntryPointsPassBase<LowerEntryPointsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(kEntryAttr))
        entries.push_back(fn);
    // Helpers were inlined into the entries; what is left reads parameters
    // that are about to disappear, so it must go (or be reported).
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (fn->hasAttr(kEntryAttr) || fn.isExternal())
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
    llvm::DenseMap<StringAttr, Operation *> updaters;
    for (Operation &op : oldBody)
      if (isa<AdamWOp, SGDOp, CO2OuterOp>(op)) {
        auto name = op.getAttrOfType<FlatSymbolRefAttr>("param").getAttr();
        if (!updaters.try_emplace(name, &op).second)
          return op.emitError("parameter ")
                 << name << " is updated twice in one step";
      }

    SmallVector<AbiArg> abi;
    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    for (ParamOp p : params)
      abi.push_back({"param", p.getSymName().str(), p.getTensorType()});
    for (ParamOp p : params)
      if (Operation *op = updaters.lookup(p.getSymNameAttr()))
        for (const std::string &suffix : stateSuffixes(op))
          abi.push_back({"state", (p.getSymName() + "." + suffix).str(),
                         p.getTensorType()});
    // A sharded CO2 outer step keeps its slice's state like a parameter's.
    for (auto shard : oldBody.getOps<CO2OuterShardOp>())
      for (StringRef suffix : kCO2StateSuffixes)
        abi.push_back({"state", (shard.getName() + "." + suffix).str(),
                       cast<RankedTensorType>(shard.getMean().getType())});
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
    llvm::StringMap<Value> current; // name -> tensor value of param/state
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
      if (auto shard = dyn_cast<CO2OuterShardOp>(op)) {
        b.setInsertionPoint(&op);
        // At round -1 the mean operand carries the slice of the starting
        // parameters (the x of loom.co2_outer); the result is the anchor.
        SmallVector<Value> state;
        for (StringRef s : kCO2StateSuffixes)
          state.push_back(current[(shard.getName() + "." + s).str()]);
        SmallVector<Value> updated =
            buildCO2Outer(b, shard, shard.getMean(), shard.getMean(), state);
        shard.replaceAllUsesWith(updated[0]);
        for (auto [s, v] :
             llvm::zip(kCO2StateSuffixes, ArrayRef(updated).drop_front()))
          writes[argIndex[(shard.getName() + "." + s).str()]] = v;
        toErase.push_back(&op);
        continue;
      }
      if (!isa<AdamWOp, SGDOp, CO2OuterOp>(op))
        continue;
      b.setInsertionPoint(&op);
      StringRef name = op.getAttrOfType<FlatSymbolRefAttr>("param").getValue();
      SmallVector<std::string> suffixes = stateSuffixes(&op);
      SmallVector<Value> state;
      for (auto &s : suffixes)
        state.push_back(current[(name + "." + s).str()]);
      SmallVector<Value> updated;
      if (auto adamw = dyn_cast<AdamWOp>(op))
        updated = lowerAdamW(b, adamw, current[name], state);
      else if (auto sgd = dyn_cast<SGDOp>(op))
        updated = lowerSGD(b, sgd, current[name], state);
      else {
        auto co2 = cast<CO2OuterOp>(op);
        updated = buildCO2Outer(b, co2, current[name], co2.getMean(), state);
      }
      writes[argIndex[name]] = updated[0];
      for (auto [s, v] : llvm::zip(suffixes, ArrayRef(updated).drop_front()))
        writes[argIndex[(name + "." + s).str()]] = v;
      toErase.push_back(&op);
    }
    for (Operation *op : toErase)
      op->erase();

    // Outputs first: an output may be the old value of a parameter, which
    // must be copied out before the parameter's buffer is overwritten.
    auto ret = cast<func::ReturnOp>(body->getTerminator());
    llvm::MapVector<unsigned, Value> ordered;
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      ordered[firstOutput + i] = v;
    for (auto [index, value] : writes)
      ordered[index] = value;
    b.setInsertionPoint(ret);
    for (auto [index, value] : ordered) {
      auto m = bufferization::MaterializeInDestinationOp::create(
          b, loc, TypeRange{}, value, body->getArgument(index));
      m.setRestrict(true);
      m.setWritable(true);
    }
    func::ReturnOp::create(b, loc);
    ret.erase();
    fn.erase();
    return success();
  }

  /// Scalar value of a 0-d tensor, extracted once outside the kernel so the
  /// loop body does no loads or transcendental math for it.
  static Value scalarOf(OpBuilder &b, Location loc, Value t) {
    return tensor::ExtractOp::create(b, loc, t, ValueRange{});
  }

  SmallVector<Value> lowerAdamW(OpBuilder &b, AdamWOp op, Value p,
                                ArrayRef<Value> state) {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(p.getType());
    auto et = cast<FloatType>(type.getElementType());
    auto cst = [&](double v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
    };
    double b1 = op.getBeta1().convertToDouble();
    double b2 = op.getBeta2().convertToDouble();
    double wd = op.getWeightDecay().convertToDouble();
    Value lr = scalarOf(b, loc, op.getLr());
    Value t =
        arith::SIToFPOp::create(b, loc, et, scalarOf(b, loc, op.getStep()));
    // As torch.optim.AdamW: step_size = lr / bc1, denom =
    // sqrt(v)/sqrt(bc2)+eps.
    Value bc1 = arith::SubFOp::create(b, loc, cst(1.0),
                                      math::PowFOp::create(b, loc, cst(b1), t));
    Value bc2 = arith::SubFOp::create(b, loc, cst(1.0),
                                      math::PowFOp::create(b, loc, cst(b2), t));
    Value stepSize = arith::DivFOp::create(b, loc, lr, bc1);
    Value bc2Sqrt = math::SqrtOp::create(b, loc, bc2);
    Value decay = arith::SubFOp::create(
        b, loc, cst(1.0), arith::MulFOp::create(b, loc, lr, cst(wd)));
    Value eps = cst(op.getEps().convertToDouble());
    Value c1 = cst(b1), c1m = cst(1 - b1), c2 = cst(b2), c2m = cst(1 - b2);
    return buildElementwise(
        b, loc, type, {p, op.getGrad(), state[0], state[1]}, 3,
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          Value pv = a[0], g = a[1], m = a[2], v = a[3];
          Value p1 = arith::MulFOp::create(nb, l, pv, decay);
          Value m1 =
              arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, c1, m),
                                    arith::MulFOp::create(nb, l, c1m, g));
          Value v1 = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, c2, v),
              arith::MulFOp::create(nb, l, c2m,
                                    arith::MulFOp::create(nb, l, g, g)));
          Value denom = arith::AddFOp::create(
              nb, l,
              arith::DivFOp::create(nb, l, math::SqrtOp::create(nb, l, v1),
                                    bc2Sqrt),
              eps);
          Value upd = arith::MulFOp::create(
              nb, l, stepSize, arith::DivFOp::create(nb, l, m1, denom));
          return {arith::SubFOp::create(nb, l, p1, upd), m1, v1};
        });
  }

  /// CO2's outer step (the equations in LoomOps.td), one fused kernel:
  /// returns the new parameter, anchor, previous anchor and momentum. The
  /// same for a parameter (CO2OuterOp) and a slice (CO2OuterShardOp), which
  /// is what makes the sharded form train the same model.
  template <typename OpTy>
  static SmallVector<Value> buildCO2Outer(OpBuilder &b, OpTy op, Value x,
                                          Value mean, ArrayRef<Value> state) {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(x.getType());
    auto et = cast<FloatType>(type.getElementType());
    auto cst = [&](double v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
    };
    Value round = scalarOf(b, loc, op.getRound());
    Value zeroI = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    Value init =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, round, zeroI);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, round, zeroI);
    double penalty = op.getGapPenalty().convertToDouble();
    double clip = op.getClip().convertToDouble();
    Value alpha = cst(op.getOuterLr().convertToDouble());
    Value beta = cst(op.getOuterMomentum().convertToDouble());
    Value lambda = cst(penalty), one = cst(1.0), tiny = cst(1e-30),
          zero = cst(0.0), hi = cst(clip), lo = cst(-clip);
    return buildElementwise(
        b, loc, type, {x, mean, state[0], state[1], state[2]}, 4,
        [&](OpBuilder &nb, Location l, ValueRange v) -> SmallVector<Value> {
          Value xv = v[0], mean = v[1], a = v[2], pa = v[3], m = v[4];
          Value d = arith::SubFOp::create(nb, l, pa, mean);
          Value scaled = d;
          if (penalty != 0) {
            // The share of d the anchor already moved along: max(0, -gap*d)
            // / d^2 (gap = a - p; the model moves along -d).
            Value along = arith::MaximumFOp::create(
                nb, l, zero,
                arith::NegFOp::create(
                    nb, l,
                    arith::MulFOp::create(
                        nb, l, arith::SubFOp::create(nb, l, a, pa), d)));
            Value rel = arith::DivFOp::create(
                nb, l, along,
                arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, d, d),
                                      tiny));
            Value denom = arith::AddFOp::create(
                nb, l, one, arith::MulFOp::create(nb, l, lambda, rel));
            scaled = arith::DivFOp::create(nb, l, d, denom);
          }
          Value mNew = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, beta, m), scaled);
          if (clip != 0)
            mNew = arith::MinimumFOp::create(
                nb, l, arith::MaximumFOp::create(nb, l, mNew, lo), hi);
          Value aNew = arith::SubFOp::create(
              nb, l, a, arith::MulFOp::create(nb, l, alpha, mNew));
          auto pick = [&](Value ifInit, Value ifFirst, Value otherwise) {
            return arith::SelectOp::create(
                nb, l, init, ifInit,
                arith::SelectOp::create(nb, l, first, ifFirst, otherwise));
          };
          return {pick(xv, a, aNew), pick(xv, a, aNew), pick(xv, a, a),
                  pick(zero, m, mNew)};
        });
  }

  SmallVector<Value> lowerSGD(OpBuilder &b, SGDOp op, Value p,
                              ArrayRef<Value> state) {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(p.getType());
    auto et = cast<FloatType>(type.getElementType());
    auto cst = [&](double v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
    };
    Value lr = scalarOf(b, loc, op.getLr());
    Value wd = cst(op.getWeightDecay().convertToDouble());
    Value mom = cst(op.getMomentum().convertToDouble());
    SmallVector<Value> ins{p, op.getGrad()};
    llvm::append_range(ins, state);
    // torch.optim.SGD: the first step's buffer is the gradient itself.
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, scalarOf(b, loc, op.getStep()),
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)));
    bool hasMomentum = !state.empty();
    return buildElementwise(
        b, loc, type, ins, hasMomentum ? 2 : 1,
        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
          Value g = arith::AddFOp::create(
              nb, l, a[1], arith::MulFOp::create(nb, l, wd, a[0]));
          Value dir = g;
          if (hasMomentum) {
            Value buf = arith::AddFOp::create(
                nb, l, arith::MulFOp::create(nb, l, mom, a[2]), g);
            dir = arith::SelectOp::create(nb, l, first, g, buf);
          }
          Value np = arith::SubFOp::create(
              nb, l, a[0], arith::MulFOp::create(nb, l, lr, dir));
          if (hasMomentum)
            return {np, dir};
          return {np};
        });
  }
};

} // namespace
} // namespace mlir::loom
