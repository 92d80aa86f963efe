//===- LoomOptimizers.cpp - The updates of the optimizer ops --------------===//
//
// Each optimizer op knows its state tensors and builds its own fused update
// (OptimizerOpInterface), so the calling-convention pass that lowers them
// (--loom-lower-entry-points) and CO2 know no optimizer: a new optimizer is
// one op here and in LoomOps.td.
//
// The updates are one elementwise linalg.generic each, with every scalar
// (learning rate, step, bias corrections) computed once outside the kernel.
// Their arithmetic follows the op descriptions in the order PyTorch does it:
// changing it changes the trained weights' bits.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

/// The state of CO2's outer step, for a parameter or a shard.
constexpr StringRef kCO2StateSuffixes[] = {"co2_anchor", "co2_prev_anchor",
                                           "co2_momentum"};

/// Builds an elementwise linalg.generic over `ins` (all of `type`'s shape)
/// with `numOuts` results of `type`; `body` gets the block arguments of the
/// ins.
SmallVector<Value> buildOptimizerKernel(
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

/// Scalar value of a 0-d tensor, extracted once outside the kernel so the
/// loop body does no loads or transcendental math for it.
Value scalarOf(OpBuilder &b, Location loc, Value t) {
  return tensor::ExtractOp::create(b, loc, t, ValueRange{});
}

} // namespace

//===----------------------------------------------------------------------===//
// AdamW
//===----------------------------------------------------------------------===//

// The slice form updates its result, not the parameter.
FlatSymbolRefAttr AdamWOp::getUpdatedParam() {
  return getSlice() ? FlatSymbolRefAttr() : getParamAttr();
}
StringRef AdamWOp::getStatePrefix() { return getParam(); }
SmallVector<StringRef> AdamWOp::getStateSuffixes() {
  return {"exp_avg", "exp_avg_sq"};
}
RankedTensorType AdamWOp::getStateType() {
  return cast<RankedTensorType>(getGrad().getType());
}

SmallVector<Value> AdamWOp::buildUpdate(OpBuilder &b, Value p,
                                        ArrayRef<Value> state) {
  if (getSlice())
    p = getSlice();
  Location loc = getLoc();
  auto type = cast<RankedTensorType>(p.getType());
  auto et = cast<FloatType>(type.getElementType());
  auto cst = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
  };
  double b1 = getBeta1().convertToDouble();
  double b2 = getBeta2().convertToDouble();
  double wd = getWeightDecay().convertToDouble();
  Value lr = scalarOf(b, loc, getLr());
  Value t = arith::SIToFPOp::create(b, loc, et, scalarOf(b, loc, getStep()));
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
  Value eps = cst(getEps().convertToDouble());
  Value c1 = cst(b1), c1m = cst(1 - b1), c2 = cst(b2), c2m = cst(1 - b2);
  return buildOptimizerKernel(
      b, loc, type, {p, getGrad(), state[0], state[1]}, 3,
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

//===----------------------------------------------------------------------===//
// SGD
//===----------------------------------------------------------------------===//

FlatSymbolRefAttr SGDOp::getUpdatedParam() {
  return getSlice() ? FlatSymbolRefAttr() : getParamAttr();
}
StringRef SGDOp::getStatePrefix() { return getParam(); }
SmallVector<StringRef> SGDOp::getStateSuffixes() {
  if (getMomentum().isZero())
    return {};
  return {"momentum_buffer"};
}
RankedTensorType SGDOp::getStateType() {
  return cast<RankedTensorType>(getGrad().getType());
}

SmallVector<Value> SGDOp::buildUpdate(OpBuilder &b, Value p,
                                      ArrayRef<Value> state) {
  if (getSlice())
    p = getSlice();
  Location loc = getLoc();
  auto type = cast<RankedTensorType>(p.getType());
  auto et = cast<FloatType>(type.getElementType());
  auto cst = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
  };
  Value lr = scalarOf(b, loc, getLr());
  Value wd = cst(getWeightDecay().convertToDouble());
  Value mom = cst(getMomentum().convertToDouble());
  SmallVector<Value> ins{p, getGrad()};
  llvm::append_range(ins, state);
  // torch.optim.SGD: the first step's buffer is the gradient itself.
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, scalarOf(b, loc, getStep()),
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)));
  bool hasMomentum = !state.empty();
  return buildOptimizerKernel(
      b, loc, type, ins, hasMomentum ? 2 : 1,
      [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
        Value g = arith::AddFOp::create(nb, l, a[1],
                                        arith::MulFOp::create(nb, l, wd, a[0]));
        Value dir = g;
        if (hasMomentum) {
          Value buf = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, mom, a[2]), g);
          dir = arith::SelectOp::create(nb, l, first, g, buf);
        }
        Value np = arith::SubFOp::create(nb, l, a[0],
                                         arith::MulFOp::create(nb, l, lr, dir));
        if (hasMomentum)
          return {np, dir};
        return {np};
      });
}

//===----------------------------------------------------------------------===//
// set_param: an update with no state, its value computed before
//===----------------------------------------------------------------------===//

FlatSymbolRefAttr SetParamOp::getUpdatedParam() { return getParamAttr(); }
StringRef SetParamOp::getStatePrefix() { return getParam(); }
SmallVector<StringRef> SetParamOp::getStateSuffixes() { return {}; }
RankedTensorType SetParamOp::getStateType() {
  return cast<RankedTensorType>(getValue().getType());
}

SmallVector<Value> SetParamOp::buildUpdate(OpBuilder &, Value,
                                           ArrayRef<Value>) {
  return {getValue()};
}

//===----------------------------------------------------------------------===//
// set_state: a state tensor of no parameter, its next value computed before
//===----------------------------------------------------------------------===//

FlatSymbolRefAttr SetStateOp::getUpdatedParam() { return {}; }
StringRef SetStateOp::getStatePrefix() { return getName().rsplit('.').first; }
SmallVector<StringRef> SetStateOp::getStateSuffixes() {
  return {getName().rsplit('.').second};
}
RankedTensorType SetStateOp::getStateType() {
  return cast<RankedTensorType>(getValue().getType());
}

SmallVector<Value> SetStateOp::buildUpdate(OpBuilder &, Value,
                                           ArrayRef<Value>) {
  return {getValue(), getValue()};
}

//===----------------------------------------------------------------------===//
// CO2's outer step
//===----------------------------------------------------------------------===//

/// CO2's outer step (the equations in LoomCO2Ops.td), one fused kernel:
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
  return buildOptimizerKernel(
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

FlatSymbolRefAttr CO2OuterOp::getUpdatedParam() { return getParamAttr(); }
StringRef CO2OuterOp::getStatePrefix() { return getParam(); }
SmallVector<StringRef> CO2OuterOp::getStateSuffixes() {
  return SmallVector<StringRef>(std::begin(kCO2StateSuffixes),
                                std::end(kCO2StateSuffixes));
}
RankedTensorType CO2OuterOp::getStateType() {
  return cast<RankedTensorType>(getMean().getType());
}

SmallVector<Value> CO2OuterOp::buildUpdate(OpBuilder &b, Value x,
                                           ArrayRef<Value> state) {
  return buildCO2Outer(b, *this, x, getMean(), state);
}

// The slice updates no parameter but its result, the new anchor.
FlatSymbolRefAttr CO2OuterShardOp::getUpdatedParam() { return {}; }
StringRef CO2OuterShardOp::getStatePrefix() { return getName(); }
SmallVector<StringRef> CO2OuterShardOp::getStateSuffixes() {
  return SmallVector<StringRef>(std::begin(kCO2StateSuffixes),
                                std::end(kCO2StateSuffixes));
}
RankedTensorType CO2OuterShardOp::getStateType() {
  return cast<RankedTensorType>(getMean().getType());
}

SmallVector<Value> CO2OuterShardOp::buildUpdate(OpBuilder &b, Value,
                                                ArrayRef<Value> state) {
  // At round -1 the mean operand carries the slice of the starting
  // parameters (the x of loom.co2_outer); the result is the anchor.
  return buildCO2Outer(b, *this, getMean(), getMean(), state);
}
