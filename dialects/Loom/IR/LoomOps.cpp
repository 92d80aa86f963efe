//===- LoomOps.cpp - loom op verifiers and type inference -----------------===//
//
// Every constraint listed in an op's description is checked here (or by a
// declarative trait) and has a case in test/dialects/Loom/invalid.mlir.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/LoomShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape() ||
      !isa<Float32Type, Float64Type>(type.getElementType()))
    return emitOpError("type must be a statically shaped f32 or f64 tensor, "
                       "got ")
           << getType();
  if (!isSupportedShape(type.getShape()))
    return emitOpError("type must have dimensions of at least 1 and at most "
                       "2^40 elements, got ")
           << getType();
  bool scaled = getInit() == InitKind::normal || getInit() == InitKind::uniform;
  if (scaled && !getScale())
    return emitOpError("init '")
           << stringifyInitKind(getInit()) << "' needs a scale";
  if (!scaled && getScale())
    return emitOpError("init '")
           << stringifyInitKind(getInit()) << "' takes no scale";
  if (getScale() && !(getScale()->convertToDouble() > 0))
    return emitOpError("scale must be positive");
  return success();
}

/// Looks up the `loom.param` that `op` names and checks `type` against it.
static LogicalResult verifyParamUse(Operation *op, FlatSymbolRefAttr name,
                                    Type type,
                                    SymbolTableCollection &symbolTable,
                                    StringRef what) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(op, name);
  if (!param)
    return op->emitOpError("'")
           << name.getValue() << "' does not name a loom.param";
  if (param.getType() != type)
    return op->emitOpError()
           << what << " type " << type << " does not match parameter type "
           << param.getType();
  return success();
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getType(), symbolTable,
                        "result");
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferBinary(std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  auto lhs = tensorOf(adaptor.getLhs()), rhs = tensorOf(adaptor.getRhs());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc, "operands have different element types ",
                             lhs.getElementType(), " and ",
                             rhs.getElementType());
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "shapes ", formatShape(lhs.getShape()),
                             " and ", formatShape(rhs.getShape()),
                             " are not broadcast-compatible");
  results.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

#define LOOM_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &r) {    \
    return inferBinary(l, a, r);                                               \
  }
LOOM_BINARY_INFER(AddOp)
LOOM_BINARY_INFER(SubOp)
LOOM_BINARY_INFER(MulOp)
LOOM_BINARY_INFER(DivOp)
LOOM_BINARY_INFER(MaximumOp)
LOOM_BINARY_INFER(MinimumOp)
#undef LOOM_BINARY_INFER

LogicalResult CausalMaskOp::verify() {
  auto type = tensorOf(getInput());
  if (type.getRank() < 2 || type.getDimSize(type.getRank() - 1) !=
                                type.getDimSize(type.getRank() - 2))
    return emitOpError("expects rank >= 2 with equal last two dimensions, got ")
           << type;
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and NN layers
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto a = tensorOf(adaptor.getLhs()), b = tensorOf(adaptor.getRhs());
  if (a.getElementType() != b.getElementType())
    return emitOptionalError(loc, "operands have different element types");
  int64_t ra = a.getRank(), rb = b.getRank();
  if (ra < 2 || rb < 2)
    return emitOptionalError(loc, "operands must have rank >= 2");
  if (rb != ra && rb != 2)
    return emitOptionalError(
        loc, "rhs must have the rank of lhs or rank 2, got ranks ", ra, " and ",
        rb);
  if (rb == ra && a.getShape().drop_back(2) != b.getShape().drop_back(2))
    return emitOptionalError(loc, "batch dimensions differ: ",
                             formatShape(a.getShape().drop_back(2)), " vs ",
                             formatShape(b.getShape().drop_back(2)));
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t m = a.getDimSize(ra - (ta ? 1 : 2));
  int64_t ka = a.getDimSize(ra - (ta ? 2 : 1));
  int64_t kb = b.getDimSize(rb - (tb ? 1 : 2));
  int64_t n = b.getDimSize(rb - (tb ? 2 : 1));
  if (ka != kb)
    return emitOptionalError(loc, "contracted dimensions differ: ", ka, " vs ",
                             kb);
  SmallVector<int64_t> shape(a.getShape().drop_back(2));
  shape.append({m, n});
  results.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto x = tensorOf(adaptor.getInput()), w = tensorOf(adaptor.getWeight());
  if (w.getRank() != 2)
    return emitOptionalError(loc, "weight must have rank 2 [out, in], got ", w);
  if (x.getRank() < 1 || x.getShape().back() != w.getDimSize(1))
    return emitOptionalError(loc, "input's last dimension must be ",
                             w.getDimSize(1), " (weight is [out, in]), got ",
                             x);
  if (x.getElementType() != w.getElementType())
    return emitOptionalError(loc, "operands have different element types");
  if (Value bias = adaptor.getBias()) {
    auto b = tensorOf(bias);
    if (b.getShape() != ArrayRef<int64_t>{w.getDimSize(0)} ||
        b.getElementType() != w.getElementType())
      return emitOptionalError(loc, "bias must be [", w.getDimSize(0),
                               "] with the weight's element type, got ", b);
  }
  SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(w.getDimSize(0));
  results.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto x = tensorOf(adaptor.getInput());
  if (x.getRank() < 1)
    return emitOptionalError(loc, "input must have rank >= 1");
  int64_t d = x.getShape().back();
  for (Value v : {adaptor.getWeight(), adaptor.getBias()}) {
    auto t = tensorOf(v);
    if (t.getShape() != ArrayRef<int64_t>{d} ||
        t.getElementType() != x.getElementType())
      return emitOptionalError(loc, "weight and bias must be [", d,
                               "] with the input's element type, got ", t);
  }
  if (!(adaptor.getEpsilon().convertToDouble() > 0))
    return emitOptionalError(loc, "epsilon must be positive");
  results.push_back(x);
  return success();
}

LogicalResult SoftmaxOp::verify() {
  if (tensorOf(getInput()).getRank() < 1)
    return emitOpError("expects rank >= 1");
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto q = tensorOf(adaptor.getQuery()), k = tensorOf(adaptor.getKey()),
       v = tensorOf(adaptor.getValue());
  int64_t r = q.getRank();
  if (r < 2 || k.getRank() != r || v.getRank() != r)
    return emitOptionalError(loc, "query, key and value must have the same "
                                  "rank >= 2");
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOptionalError(loc, "operands have different element types");
  if (q.getShape().drop_back(2) != k.getShape().drop_back(2) ||
      q.getShape().drop_back(2) != v.getShape().drop_back(2))
    return emitOptionalError(loc, "leading dimensions differ");
  if (q.getShape().back() != k.getShape().back())
    return emitOptionalError(loc, "query and key head sizes differ: ",
                             q.getShape().back(), " vs ", k.getShape().back());
  if (k.getDimSize(r - 2) != v.getDimSize(r - 2))
    return emitOptionalError(loc, "key and value row counts differ");
  if (adaptor.getCausal() && q.getDimSize(r - 2) != k.getDimSize(r - 2))
    return emitOptionalError(loc, "causal attention needs as many queries as "
                                  "keys");
  if (auto scale = adaptor.getScaleAttr())
    if (!(scale.getValueAsDouble() > 0))
      return emitOptionalError(loc, "scale must be positive");
  SmallVector<int64_t> shape(q.getShape().drop_back());
  shape.push_back(v.getShape().back());
  results.push_back(RankedTensorType::get(shape, q.getElementType()));
  return success();
}

double AttentionOp::getEffectiveScale() {
  if (auto scale = getScaleAttr())
    return scale.getValueAsDouble();
  return 1.0 / std::sqrt(double(tensorOf(getQuery()).getShape().back()));
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto table = tensorOf(adaptor.getTable());
  if (table.getRank() != 2)
    return emitOptionalError(loc, "table must have rank 2, got ", table);
  SmallVector<int64_t> shape(tensorOf(adaptor.getIndices()).getShape());
  shape.push_back(table.getDimSize(1));
  results.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  auto logits = tensorOf(adaptor.getLogits());
  auto targets = tensorOf(adaptor.getTargets());
  if (logits.getRank() < 1 ||
      logits.getShape().drop_back() != targets.getShape())
    return emitOptionalError(
        loc,
        "targets must have the logits' shape without the class "
        "dimension: logits ",
        formatShape(logits.getShape()), ", targets ",
        formatShape(targets.getShape()));
  results.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

LogicalResult OneHotOp::verify() {
  auto in = tensorOf(getIndices()), out = tensorOf(getResult());
  if (out.getRank() != in.getRank() + 1 ||
      out.getShape().drop_back() != in.getShape())
    return emitOpError("result shape must be the indices' shape ")
           << formatShape(in.getShape()) << " plus a class dimension, got "
           << formatShape(out.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("element counts differ: ")
           << in.getNumElements() << " vs " << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) == reshape(x).
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto in = tensorOf(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  SmallVector<bool> seen(in.getRank(), false);
  if (int64_t(perm.size()) != in.getRank())
    return emitOptionalError(loc, "permutation ", formatShape(perm),
                             " is not a permutation of [0, ", in.getRank(),
                             ")");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOptionalError(loc, "permutation ", formatShape(perm),
                               " is not a permutation of [0, ", in.getRank(),
                               ")");
    seen[p] = true;
    shape.push_back(in.getDimSize(p));
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult BroadcastToOp::verify() {
  auto in = tensorOf(getInput()), out = tensorOf(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ");
  if (!isBroadcastableTo(in.getShape(), out.getShape()))
    return emitOpError("cannot broadcast ")
           << formatShape(in.getShape()) << " to "
           << formatShape(out.getShape());
  return success();
}

LogicalResult SplitOp::verify() {
  auto in = tensorOf(getInput());
  if (getNumResults() == 0)
    return emitOpError("expects at least one result");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= in.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for rank " << in.getRank();
  int64_t total = 0;
  for (Value r : getResults()) {
    auto t = tensorOf(r);
    if (t.getElementType() != in.getElementType() ||
        t.getRank() != in.getRank())
      return emitOpError("result ") << t
                                    << " must have the input's element "
                                       "type and rank";
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != in.getDimSize(d))
        return emitOpError("result ")
               << t << " differs from the input outside axis " << axis;
    total += t.getDimSize(axis);
  }
  if (total != in.getDimSize(axis))
    return emitOpError("result sizes along axis ")
           << axis << " add up to " << total << ", expected "
           << in.getDimSize(axis);
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "expects at least one operand");
  auto first = tensorOf(adaptor.getInputs().front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = tensorOf(v);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "operands differ in rank or element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(loc, "operands differ outside axis ", axis);
    shape[axis] += t.getDimSize(axis);
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  auto in = tensorOf(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= in.getRank() ||
        (i > 0 && axes[i] <= axes[i - 1]))
      return emitOptionalError(loc, "axes ", formatShape(axes),
                               " must be increasing and in [0, ", in.getRank(),
                               ")");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(in.getDimSize(d));
    else if (adaptor.getKeepdim())
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

#define LOOM_REDUCE_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &r) {    \
    return inferReduce(l, a, r);                                               \
  }
LOOM_REDUCE_INFER(SumOp)
LOOM_REDUCE_INFER(MeanOp)
LOOM_REDUCE_INFER(ReduceMaxOp)
#undef LOOM_REDUCE_INFER

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

LogicalResult LrScheduleOp::verify() {
  double lr = getLr().convertToDouble(), minLr = getMinLr().convertToDouble();
  if (!(lr > 0))
    return emitOpError("lr must be positive");
  if (minLr < 0 || minLr > lr)
    return emitOpError("min_lr must be in [0, lr]");
  // The generated getters return uint64_t: read the signed attribute.
  if (getWarmupStepsAttr().getInt() < 0 || getDecayStepsAttr().getInt() < 0)
    return emitOpError("step counts must be non-negative");
  return success();
}

static bool inUnitInterval(APFloat v) {
  double d = v.convertToDouble();
  return d >= 0 && d < 1;
}

/// The learning rate is a scalar of the gradient's element type.
static LogicalResult verifyLrType(Operation *op, Value lr, Value grad) {
  if (cast<RankedTensorType>(lr.getType()).getElementType() !=
      cast<RankedTensorType>(grad.getType()).getElementType())
    return op->emitOpError("lr must have the gradient's element type");
  return success();
}

LogicalResult AdamWOp::verify() {
  if (failed(verifyLrType(*this, getLr(), getGrad())))
    return failure();
  if (!inUnitInterval(getBeta1()) || !inUnitInterval(getBeta2()))
    return emitOpError("beta1 and beta2 must be in [0, 1)");
  if (!(getEps().convertToDouble() > 0))
    return emitOpError("eps must be positive");
  if (getWeightDecay().convertToDouble() < 0)
    return emitOpError("weight_decay must be non-negative");
  return success();
}

LogicalResult AdamWOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getGrad().getType(), symbolTable,
                        "gradient");
}

LogicalResult SGDOp::verify() {
  if (failed(verifyLrType(*this, getLr(), getGrad())))
    return failure();
  if (!inUnitInterval(getMomentum()))
    return emitOpError("momentum must be in [0, 1)");
  if (getWeightDecay().convertToDouble() < 0)
    return emitOpError("weight_decay must be non-negative");
  return success();
}

LogicalResult SGDOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getGrad().getType(), symbolTable,
                        "gradient");
}

/// The outer hyperparameters of CO2OuterOp and CO2OuterShardOp.
template <typename OpTy>
static LogicalResult verifyCO2Options(OpTy op) {
  if (!(op.getOuterLr().convertToDouble() > 0))
    return op.emitOpError("outer_lr must be positive");
  if (!inUnitInterval(op.getOuterMomentum()))
    return op.emitOpError("outer_momentum must be in [0, 1)");
  if (op.getGapPenalty().convertToDouble() < 0)
    return op.emitOpError("gap_penalty must be non-negative");
  if (op.getClip().convertToDouble() < 0)
    return op.emitOpError("clip must be non-negative (0: no clipping)");
  return success();
}

LogicalResult CO2OuterOp::verify() { return verifyCO2Options(*this); }

LogicalResult CO2OuterShardOp::verify() {
  if (getName().empty())
    return emitOpError("name must not be empty (it prefixes the state "
                       "tensors)");
  return verifyCO2Options(*this);
}

LogicalResult CO2OuterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getMean().getType(), symbolTable,
                        "mean");
}

#define GET_OP_CLASSES
#include "dialects/Loom/IR/LoomOps.cpp.inc"
