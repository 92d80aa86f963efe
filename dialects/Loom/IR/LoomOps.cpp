//===- LoomOps.cpp - loom op verifiers and type inference -----------------===//
//
// Every constraint listed in an op's description is checked here (or by a
// declarative trait) and has a case in test/dialects/Loom/invalid.mlir.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/LoomShapes.h"
#include "dialects/Loom/IR/LoomVerifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// Type inference diagnostics
//===----------------------------------------------------------------------===//

namespace {
/// Reports an op's type-inference error at a location, or nowhere when the
/// caller passes none (it only probes). The op is named as emitOpError names
/// it, since the error is the only one the verifier reports for the op.
struct InferenceError {
  std::optional<Location> loc;
  StringRef opName;

  template <typename... Args>
  LogicalResult operator()(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }
};
} // namespace

/// Checks that operand `name`'s element type is operand `refName`'s.
static LogicalResult checkElementType(const InferenceError &error,
                                      StringRef name, RankedTensorType type,
                                      StringRef refName,
                                      RankedTensorType refType) {
  if (type.getElementType() == refType.getElementType())
    return success();
  return error(name, " element type ", type.getElementType(), " differs from ",
               refName, " element type ", refType.getElementType());
}

/// Verifies a type-inferring op as InferTypeOpInterface's verifier does
/// (inference succeeds and agrees with the result types), as the op's own
/// verifier: that runs first, and a failure stops verification there, so the
/// detailed error is not followed by the interface's generic "failed to infer
/// returned types".
template <typename OpTy>
static LogicalResult verifyInference(OpTy op) {
  SmallVector<Type> types(op->getResultTypes());
  return OpTy::refineReturnTypes(op.getContext(), op.getLoc(),
                                 op->getOperands(), op->getRawDictionaryAttrs(),
                                 op->getPropertiesStorage(), op->getRegions(),
                                 types);
}

#define LOOM_VERIFY_INFERENCE(OP)                                              \
  LogicalResult OP::verify() { return verifyInference(*this); }
LOOM_VERIFY_INFERENCE(AddOp)
LOOM_VERIFY_INFERENCE(SubOp)
LOOM_VERIFY_INFERENCE(MulOp)
LOOM_VERIFY_INFERENCE(DivOp)
LOOM_VERIFY_INFERENCE(MaximumOp)
LOOM_VERIFY_INFERENCE(MinimumOp)
LOOM_VERIFY_INFERENCE(MatmulOp)
LOOM_VERIFY_INFERENCE(LinearOp)
LOOM_VERIFY_INFERENCE(LayerNormOp)
LOOM_VERIFY_INFERENCE(AttentionOp)
LOOM_VERIFY_INFERENCE(EmbeddingOp)
LOOM_VERIFY_INFERENCE(CrossEntropyOp)
LOOM_VERIFY_INFERENCE(TransposeOp)
LOOM_VERIFY_INFERENCE(ConcatOp)
LOOM_VERIFY_INFERENCE(SumOp)
LOOM_VERIFY_INFERENCE(MeanOp)
LOOM_VERIFY_INFERENCE(ReduceMaxOp)
#undef LOOM_VERIFY_INFERENCE

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

LogicalResult mlir::loom::verifyParamUse(Operation *op, FlatSymbolRefAttr name,
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
static LogicalResult inferBinary(const InferenceError &error, Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  auto lhs = tensorOf(adaptor.getLhs()), rhs = tensorOf(adaptor.getRhs());
  if (failed(checkElementType(error, "lhs", lhs, "rhs", rhs)))
    return failure();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return error("lhs shape ", formatShape(lhs.getShape()), " and rhs shape ",
                 formatShape(rhs.getShape()), " are not broadcast-compatible");
  results.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

#define LOOM_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &r) {    \
    return inferBinary({l, getOperationName()}, a, r);                         \
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

LogicalResult SegmentMaskOp::verify() {
  auto type = tensorOf(getInput());
  auto seg = tensorOf(getSegments());
  int64_t r = type.getRank();
  if (r < 3 || type.getDimSize(r - 1) != type.getDimSize(r - 2))
    return emitOpError("expects rank >= 3 with equal last two dimensions, got ")
           << type;
  if (seg.getRank() != 2 || seg.getDimSize(0) != type.getDimSize(0) ||
      seg.getDimSize(1) != type.getDimSize(r - 1))
    return emitOpError("expects segments of shape [")
           << type.getDimSize(0) << ", " << type.getDimSize(r - 1)
           << "] (the input's first and last dimensions), got " << seg;
  return success();
}

LogicalResult DocumentMaskOp::verify() {
  auto type = tensorOf(getInput());
  int64_t r = type.getRank();
  if (r < 3)
    return emitOpError("expects rank >= 3, got ") << type;
  auto check = [&](Value v, StringRef what, int64_t t) -> LogicalResult {
    auto idx = tensorOf(v);
    if (idx.getRank() == 2 && idx.getDimSize(0) == type.getDimSize(0) &&
        idx.getDimSize(1) == t)
      return success();
    return emitOpError("expects ")
           << what << " of shape [" << type.getDimSize(0) << ", " << t
           << "] (the input's first dimension and its "
           << (what.starts_with("query") ? "rows" : "columns") << "), got "
           << idx;
  };
  if (failed(check(getQueryDocuments(), "query documents",
                   type.getDimSize(r - 2))) ||
      failed(check(getKeyDocuments(), "key documents", type.getDimSize(r - 1))))
    return failure();
  if (tensorOf(getQueryDocuments()).getElementType() !=
      tensorOf(getKeyDocuments()).getElementType())
    return emitOpError("expects query and key documents of one element type");
  return success();
}

/// The constraints loom.document_attention and its gradient share.
static LogicalResult verifyDocumentAttention(Operation *op, Value query,
                                             Value key, Value queryDocs,
                                             Value keyDocs, double scale) {
  auto q = tensorOf(query), k = tensorOf(key);
  if (q.getRank() != 3 || k.getRank() != 3)
    return op->emitOpError("expects query and key of rank 3 ([heads, "
                           "tokens, Dh]), got ")
           << q << " and " << k;
  if (q.getElementType() != k.getElementType() ||
      q.getDimSize(0) != k.getDimSize(0) || q.getDimSize(2) != k.getDimSize(2))
    return op->emitOpError("expects query and key of one element type, "
                           "heads and Dh, got ")
           << q << " and " << k;
  auto qd = tensorOf(queryDocs), kd = tensorOf(keyDocs);
  if (qd.getRank() != 1 || qd.getDimSize(0) != q.getDimSize(1) ||
      kd.getRank() != 1 || kd.getDimSize(0) != k.getDimSize(1))
    return op->emitOpError("expects 1-D documents of the queries' and the "
                           "keys' tokens (")
           << q.getDimSize(1) << " and " << k.getDimSize(1) << "), got " << qd
           << " and " << kd;
  if (qd.getElementType() != kd.getElementType())
    return op->emitOpError(
        "expects query and key documents of one element type");
  if (!(scale > 0))
    return op->emitOpError("expects a positive scale");
  return success();
}

LogicalResult DocumentAttentionOp::verify() {
  return verifyDocumentAttention(*this, getQuery(), getKey(),
                                 getQueryDocuments(), getKeyDocuments(),
                                 getScale().convertToDouble());
}

LogicalResult DocumentAttentionGradOp::verify() {
  return verifyDocumentAttention(*this, getQuery(), getKey(),
                                 getQueryDocuments(), getKeyDocuments(),
                                 getScale().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Linear algebra and NN layers
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  InferenceError error{loc, getOperationName()};
  auto a = tensorOf(adaptor.getLhs()), b = tensorOf(adaptor.getRhs());
  if (failed(checkElementType(error, "lhs", a, "rhs", b)))
    return failure();
  int64_t ra = a.getRank(), rb = b.getRank();
  if (ra < 2)
    return error("lhs must have rank >= 2, got ", a);
  if (rb < 2)
    return error("rhs must have rank >= 2, got ", b);
  if (rb != ra && rb != 2)
    return error("rhs must have the rank of lhs (", ra,
                 ") or rank 2, got rank ", rb);
  if (rb == ra && a.getShape().drop_back(2) != b.getShape().drop_back(2))
    return error("lhs batch dimensions ",
                 formatShape(a.getShape().drop_back(2)),
                 " differ from rhs batch dimensions ",
                 formatShape(b.getShape().drop_back(2)));
  // Each transpose flag swaps which of its operand's last two dimensions is
  // contracted; the error names the flags, set or not, that chose them.
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t dimM = ra - (ta ? 1 : 2), dimKa = ra - (ta ? 2 : 1);
  int64_t dimKb = rb - (tb ? 1 : 2), dimN = rb - (tb ? 2 : 1);
  if (a.getDimSize(dimKa) != b.getDimSize(dimKb))
    return error("contracted dimensions differ: lhs dimension ", dimKa,
                 " (size ", a.getDimSize(dimKa), ", ", ta ? "with" : "without",
                 " transpose_a) vs rhs dimension ", dimKb, " (size ",
                 b.getDimSize(dimKb), ", ", tb ? "with" : "without",
                 " transpose_b)");
  SmallVector<int64_t> shape(a.getShape().drop_back(2));
  shape.append({a.getDimSize(dimM), b.getDimSize(dimN)});
  results.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  InferenceError error{loc, getOperationName()};
  auto x = tensorOf(adaptor.getInput()), w = tensorOf(adaptor.getWeight());
  if (w.getRank() != 2)
    return error("weight must have rank 2 [out, in], got ", w);
  if (x.getRank() < 1 || x.getShape().back() != w.getDimSize(1))
    return error("input's last dimension must be ", w.getDimSize(1),
                 ", weight dimension 1 (weight is [out, in]), got ", x);
  if (failed(checkElementType(error, "input", x, "weight", w)))
    return failure();
  if (Value bias = adaptor.getBias()) {
    auto b = tensorOf(bias);
    if (b.getShape() != ArrayRef<int64_t>{w.getDimSize(0)} ||
        b.getElementType() != w.getElementType())
      return error("bias must be [", w.getDimSize(0),
                   "] (weight dimension 0, out) with the weight's element "
                   "type, got ",
                   b);
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
  InferenceError error{loc, getOperationName()};
  auto x = tensorOf(adaptor.getInput());
  if (x.getRank() < 1)
    return error("input must have rank >= 1, got ", x);
  int64_t d = x.getShape().back();
  for (auto [name, v] :
       {std::pair<StringRef, Value>{"weight", adaptor.getWeight()},
        {"bias", adaptor.getBias()}}) {
    auto t = tensorOf(v);
    if (t.getShape() != ArrayRef<int64_t>{d} ||
        t.getElementType() != x.getElementType())
      return error(name, " must be [", d,
                   "] (the input's last dimension) with the input's element "
                   "type, got ",
                   t);
  }
  if (!(adaptor.getEpsilon().convertToDouble() > 0))
    return error("epsilon must be positive");
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
  InferenceError error{loc, getOperationName()};
  auto q = tensorOf(adaptor.getQuery()), k = tensorOf(adaptor.getKey()),
       v = tensorOf(adaptor.getValue());
  int64_t r = q.getRank();
  if (r < 2 || k.getRank() != r || v.getRank() != r)
    return error("query, key and value must have the same rank >= 2, got "
                 "ranks ",
                 r, ", ", k.getRank(), " and ", v.getRank());
  for (auto [name, t] :
       {std::pair<StringRef, RankedTensorType>{"key", k}, {"value", v}}) {
    if (failed(checkElementType(error, name, t, "query", q)))
      return failure();
    if (t.getShape().drop_back(2) != q.getShape().drop_back(2))
      return error(name, " leading dimensions ",
                   formatShape(t.getShape().drop_back(2)),
                   " differ from query leading dimensions ",
                   formatShape(q.getShape().drop_back(2)));
  }
  if (q.getShape().back() != k.getShape().back())
    return error("query and key head sizes (last dimensions) differ: ",
                 q.getShape().back(), " vs ", k.getShape().back());
  if (k.getDimSize(r - 2) != v.getDimSize(r - 2))
    return error("key and value row counts (dimension ", r - 2,
                 ") differ: ", k.getDimSize(r - 2), " vs ",
                 v.getDimSize(r - 2));
  if (adaptor.getCausal() && q.getDimSize(r - 2) != k.getDimSize(r - 2))
    return error("with causal, query and key row counts (dimension ", r - 2,
                 ") must be equal, got ", q.getDimSize(r - 2), " vs ",
                 k.getDimSize(r - 2));
  if (auto scale = adaptor.getScaleAttr())
    if (!(scale.getValueAsDouble() > 0))
      return error("scale must be positive");
  if (Value segments = adaptor.getSegments()) {
    auto seg = tensorOf(segments);
    if (r < 3 || q.getDimSize(r - 2) != k.getDimSize(r - 2))
      return error("segments need rank >= 3 and equal query and key row "
                   "counts, got query ",
                   formatShape(q.getShape()), " and key ",
                   formatShape(k.getShape()));
    SmallVector<int64_t> want{q.getDimSize(0), q.getDimSize(r - 2)};
    if (seg.getShape() != ArrayRef<int64_t>(want))
      return error("segments must have shape ", formatShape(want),
                   " (the query's first dimension and its rows), got ",
                   formatShape(seg.getShape()));
  }
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
    return InferenceError{loc, getOperationName()}(
        "table must have rank 2, got ", table);
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
    return InferenceError{loc, getOperationName()}(
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
  auto notAPermutation = [&] {
    return InferenceError{loc, getOperationName()}(
        "permutation ", formatShape(perm),
        " must be a permutation of the input's dimensions [0, ", in.getRank(),
        ")");
  };
  SmallVector<bool> seen(in.getRank(), false);
  if (int64_t(perm.size()) != in.getRank())
    return notAPermutation();
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return notAPermutation();
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
  InferenceError error{loc, getOperationName()};
  if (adaptor.getInputs().empty())
    return error("expects at least one operand");
  auto first = tensorOf(adaptor.getInputs().front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return error("axis ", axis, " is out of range for operand #0's rank ",
                 first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (auto [i, v] : llvm::enumerate(adaptor.getInputs())) {
    auto t = tensorOf(v);
    if (t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return error("operand #", i, " ", t, " differs from operand #0 ", first,
                   " in rank or element type");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return error("operand #", i, " ", t, " differs from operand #0 ", first,
                     " outside axis ", axis);
    shape[axis] += t.getDimSize(axis);
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(const InferenceError &error, Adaptor adaptor,
                                 SmallVectorImpl<Type> &results) {
  auto in = tensorOf(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= in.getRank() ||
        (i > 0 && axes[i] <= axes[i - 1]))
      return error("axes ", formatShape(axes),
                   " must be increasing and among the input's dimensions [0, ",
                   in.getRank(), ")");
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
    return inferReduce({l, getOperationName()}, a, r);                         \
  }
LOOM_REDUCE_INFER(SumOp)
LOOM_REDUCE_INFER(MeanOp)
LOOM_REDUCE_INFER(ReduceMaxOp)
#undef LOOM_REDUCE_INFER
