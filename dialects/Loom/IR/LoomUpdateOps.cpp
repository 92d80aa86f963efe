//===- LoomUpdateOps.cpp - Verifiers of the ops that update training state ===//
//
// The optimizer updates and their schedule, CO2's outer step, the
// zeroth-order perturbation and the named state tensors: every constraint
// listed in their descriptions is checked here (or by a declarative trait)
// and has a case in test/dialects/Loom/invalid.mlir.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomOps.h"
#include "dialects/Loom/IR/LoomVerifiers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::loom;

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

/// The optional `slice %x ... -> type` of the optimizer ops: the slice's
/// type, printed after the other types, is the result's.
static ParseResult
parseSliceResult(OpAsmParser &parser,
                 std::optional<OpAsmParser::UnresolvedOperand> slice,
                 Type &sliceType, Type &resultType) {
  if (!slice)
    return success();
  if (parser.parseArrow() || parser.parseType(resultType))
    return failure();
  sliceType = resultType;
  return success();
}

static void printSliceResult(OpAsmPrinter &p, Operation *, Value, Type,
                             Type resultType) {
  if (resultType)
    p << " -> " << resultType;
}

/// An optimizer op's slice form (`slice %x`, ZeRO): the slice, gradient and
/// result share one 1-D type, no longer than the parameter.
template <typename OpTy>
static LogicalResult verifySlice(OpTy op) {
  if (!op.getSlice())
    return op.getNewSlice()
               ? op.emitOpError("has a result but no slice to update")
               : success();
  Type type = op.getSlice().getType();
  if (!op.getNewSlice() || op.getNewSlice().getType() != type ||
      op.getGrad().getType() != type)
    return op.emitOpError("slice, gradient and result must have one type");
  if (cast<RankedTensorType>(type).getRank() != 1)
    return op.emitOpError("the slice must be 1-D, got ") << type;
  return success();
}

/// The parameter an optimizer op updates: of the gradient's type, or with a
/// slice, of its element type and at least as many elements.
template <typename OpTy>
static LogicalResult verifyUpdatedParam(OpTy op,
                                        SymbolTableCollection &symbolTable) {
  if (!op.getSlice())
    return verifyParamUse(op, op.getParamAttr(), op.getGrad().getType(),
                          symbolTable, "gradient");
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(op, op.getParamAttr());
  if (!param)
    return op.emitOpError("'")
           << op.getParam() << "' does not name a loom.param";
  auto slice = cast<RankedTensorType>(op.getSlice().getType());
  RankedTensorType type = param.getTensorType();
  if (slice.getElementType() != type.getElementType() ||
      slice.getNumElements() > type.getNumElements())
    return op.emitOpError("slice type ")
           << slice << " is not a slice of parameter type " << type;
  return success();
}

LogicalResult AdamWOp::verify() {
  if (failed(verifyLrType(*this, getLr(), getGrad())) ||
      failed(verifySlice(*this)))
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
  return verifyUpdatedParam(*this, symbolTable);
}

LogicalResult SGDOp::verify() {
  if (failed(verifyLrType(*this, getLr(), getGrad())) ||
      failed(verifySlice(*this)))
    return failure();
  if (!inUnitInterval(getMomentum()))
    return emitOpError("momentum must be in [0, 1)");
  if (getWeightDecay().convertToDouble() < 0)
    return emitOpError("weight_decay must be non-negative");
  return success();
}

LogicalResult SGDOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyUpdatedParam(*this, symbolTable);
}

LogicalResult SetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getParamAttr(), getValue().getType(),
                        symbolTable, "value");
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

LogicalResult PerturbOp::verify() {
  auto x = cast<RankedTensorType>(getX().getType());
  if (cast<RankedTensorType>(getA().getType()).getElementType() !=
      x.getElementType())
    return emitOpError("a and b must have x's element type");
  if (x.getNumElements() >= (int64_t(1) << 32))
    return emitOpError("x must have fewer than 2^32 elements (its index is "
                       "one 32-bit counter word), got ")
           << x.getNumElements();
  // The generated getters return uint64_t: read the signed attributes.
  for (auto [name, value] :
       {std::pair{"stream", getStreamAttr().getInt()},
        std::pair{"direction", getDirectionAttr().getInt()}})
    if (value < 0 || value >= (int64_t(1) << 32))
      return emitOpError(name) << " must be in [0, 2^32), got " << value;
  return success();
}

/// A state's name is `<prefix>.<suffix>` (OptimizerOpInterface's naming).
static LogicalResult verifyStateName(Operation *op, StringRef name) {
  auto [prefix, suffix] = name.rsplit('.');
  if (prefix.empty() || suffix.empty() || !name.contains('.'))
    return op->emitOpError("name must be <prefix>.<suffix>, got '")
           << name << "'";
  return success();
}

/// The loom.set_state ops of `name` in the function around `op`.
static SmallVector<SetStateOp> settersOf(Operation *op, StringRef name) {
  SmallVector<SetStateOp> setters;
  if (auto fn = op->getParentOfType<FunctionOpInterface>())
    fn->walk([&](SetStateOp set) {
      if (set.getName() == name)
        setters.push_back(set);
    });
  return setters;
}

LogicalResult GetStateOp::verify() {
  if (failed(verifyStateName(*this, getName())))
    return failure();
  for (SetStateOp set : settersOf(*this, getName()))
    if (set.getValue().getType() == getType())
      return success();
  return emitOpError("state '")
         << getName() << "' of type " << getType()
         << " is not set by a loom.set_state of the function";
}

LogicalResult SetStateOp::verify() {
  if (failed(verifyStateName(*this, getName())))
    return failure();
  if (settersOf(*this, getName()).size() > 1)
    return emitOpError("state '") << getName() << "' is set twice";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Loom/IR/LoomOps.cpp.inc"
