//===- CommOps.cpp - comm op verifiers ------------------------------------===//
//
// Every constraint in an op's description is checked here and has a case in
// test/dialects/Comm/invalid.mlir.
//
//===----------------------------------------------------------------------===//
#include "dialects/Comm/IR/CommOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::loom::comm;

/// all_reduce and broadcast print one type for operand and result (the
/// verifier checks they are equal).
static ParseResult parseSameType(OpAsmParser &parser, Type &input,
                                 Type &result) {
  if (parser.parseType(input))
    return failure();
  result = input;
  return success();
}
static void printSameType(OpAsmPrinter &p, Operation *, Type input, Type) {
  p << input;
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  if (getShape().empty())
    return emitOpError("shape must not be empty");
  if (llvm::any_of(getShape(), [](int64_t d) { return d <= 0; }))
    return emitOpError("every mesh size must be positive");
  if (getAxes().size() != getShape().size())
    return emitOpError("expects one axis name per mesh dimension (")
           << getShape().size() << "), got " << getAxes().size();
  llvm::StringSet<> seen;
  for (Attribute a : getAxes()) {
    StringRef name = cast<StringAttr>(a).getValue();
    if (name.empty())
      return emitOpError("axis names must not be empty");
    if (!seen.insert(name).second)
      return emitOpError("axis '") << name << "' is named twice";
  }
  return success();
}

int64_t MeshOp::getGroupSize(ArrayAttr axes) {
  int64_t size = 1;
  for (auto [name, dim] : llvm::zip(getAxes(), getShape()))
    if (llvm::is_contained(axes, name))
      size *= dim;
  return size;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks that `mesh` names a comm.mesh and `axes` are distinct axes of it.
static LogicalResult verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                                 ArrayAttr axes,
                                 SymbolTableCollection &symbolTable) {
  auto mesh = symbolTable.lookupNearestSymbolFrom<MeshOp>(op, meshName);
  if (!mesh)
    return op->emitOpError("'")
           << meshName.getValue() << "' does not name a comm.mesh";
  if (axes.empty())
    return op->emitOpError("expects at least one axis");
  llvm::StringSet<> seen;
  for (Attribute a : axes) {
    StringRef name = cast<StringAttr>(a).getValue();
    if (!llvm::is_contained(mesh.getAxes(), a))
      return op->emitOpError("axis '")
             << name << "' is not an axis of mesh @" << mesh.getSymName();
    if (!seen.insert(name).second)
      return op->emitOpError("axis '") << name << "' is listed twice";
  }
  return success();
}

/// Group size of a collective, or std::nullopt while its mesh or axes are
/// invalid (verifySymbolUses reports that; size checks must wait for it).
static std::optional<int64_t>
knownGroupSize(Operation *op, FlatSymbolRefAttr meshName, ArrayAttr axes) {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, meshName);
  if (!mesh || axes.empty())
    return std::nullopt;
  for (Attribute a : axes)
    if (!llvm::is_contained(mesh.getAxes(), a))
      return std::nullopt;
  return mesh.getGroupSize(axes);
}

static int64_t groupSize(Operation *op, FlatSymbolRefAttr meshName,
                         ArrayAttr axes) {
  return knownGroupSize(op, meshName, axes).value_or(1);
}

static LogicalResult verifyMean(Operation *op, ReduceKind kind, Type t) {
  if (kind == ReduceKind::mean &&
      !isa<FloatType>(cast<ShapedType>(t).getElementType()))
    return op->emitOpError("mean needs a float element type");
  return success();
}

#define COMM_SYMBOL_USES(OP)                                                   \
  LogicalResult OP::verifySymbolUses(SymbolTableCollection &symbolTable) {     \
    return verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable);          \
  }                                                                            \
  int64_t OP::getGroupSize() {                                                 \
    return groupSize(*this, getMeshAttr(), getAxes());                         \
  }                                                                            \
  [[maybe_unused]] static std::optional<int64_t> knownGroupSize(OP op) {       \
    return knownGroupSize(op, op.getMeshAttr(), op.getAxes());                 \
  }
COMM_SYMBOL_USES(AllReduceOp)
COMM_SYMBOL_USES(ReduceScatterOp)
COMM_SYMBOL_USES(AllGatherOp)
COMM_SYMBOL_USES(BroadcastOp)
COMM_SYMBOL_USES(AllReduceStartOp)
COMM_SYMBOL_USES(ReduceScatterStartOp)
COMM_SYMBOL_USES(AllGatherStartOp)
COMM_SYMBOL_USES(BroadcastStartOp)
COMM_SYMBOL_USES(GroupRankOp)
COMM_SYMBOL_USES(FanOutOp)
COMM_SYMBOL_USES(SendOp)
COMM_SYMBOL_USES(ShardOp)
COMM_SYMBOL_USES(UnshardOp)
COMM_SYMBOL_USES(RecvOp)
#undef COMM_SYMBOL_USES

/// A compressed all-reduce (--loom-compress) averages an f32 gradient.
static LogicalResult verifyCompressed(Operation *op, ReduceKind kind,
                                      RankedTensorType type,
                                      std::optional<uint64_t> slot) {
  if (!slot)
    return success();
  if (kind != ReduceKind::mean || !type.getElementType().isF32())
    return op->emitOpError("compress_slot needs a mean of an f32 tensor");
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the operand type");
  if (failed(verifyMean(*this, getReduction(), getType())))
    return failure();
  return verifyCompressed(*this, getReduction(), getType(), getCompressSlot());
}

/// reduce_scatter and all_gather: the result is the operand with `dim`
/// divided (scatter) or multiplied (gather) by the group size.
static LogicalResult verifyResized(Operation *op, RankedTensorType in,
                                   RankedTensorType out, int64_t dim,
                                   int64_t group, bool scatter) {
  if (dim < 0 || dim >= in.getRank())
    return op->emitOpError("dim ")
           << dim << " is out of range for rank " << in.getRank();
  if (scatter && in.getDimSize(dim) % group != 0)
    return op->emitOpError("dimension ")
           << dim << " of size " << in.getDimSize(dim)
           << " is not divisible by the group size " << group;
  SmallVector<int64_t> expected(in.getShape());
  expected[dim] = scatter ? expected[dim] / group : expected[dim] * group;
  if (out.getElementType() != in.getElementType() ||
      out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result type ")
           << out << " does not match "
           << RankedTensorType::get(expected, in.getElementType());
  return success();
}

/// reduce_scatter / all_gather (and their starts): `result` is the operand
/// resized along `dim` by the group size, once the group is known.
template <typename OpTy>
static LogicalResult verifyResizedCollective(OpTy op, Type result,
                                             bool scatter) {
  auto group = knownGroupSize(op);
  if (!group)
    return success();
  return verifyResized(op, op.getInput().getType(),
                       cast<RankedTensorType>(result), op.getDimAttr().getInt(),
                       *group, scatter);
}

LogicalResult FanOutOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the operand type");
  return success();
}

LogicalResult ShardOp::verify() {
  // A part of the operand: resized as a scatter is.
  return verifyResizedCollective(*this, getType(), /*scatter=*/true);
}

LogicalResult UnshardOp::verify() {
  return verifyResizedCollective(*this, getType(), /*scatter=*/false);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyMean(*this, getReduction(), getType())))
    return failure();
  return verifyResizedCollective(*this, getType(), /*scatter=*/true);
}

LogicalResult AllGatherOp::verify() {
  return verifyResizedCollective(*this, getType(), /*scatter=*/false);
}

/// The root must be a rank of the group (checked once the group is known).
static LogicalResult verifyRoot(Operation *op, IntegerAttr rootAttr,
                                std::optional<int64_t> group) {
  int64_t root = rootAttr.getInt();
  if (group && (root < 0 || root >= *group))
    return op->emitOpError("root ")
           << root << " is not a rank of a group of " << *group;
  return success();
}

LogicalResult BroadcastOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must equal the operand type");
  return verifyRoot(*this, getRootAttr(), knownGroupSize(*this));
}

/// A point-to-point peer is another rank of the group.
static LogicalResult verifyPeer(Operation *op, int64_t peer,
                                std::optional<int64_t> group) {
  if (peer == 0)
    return op->emitOpError("peer must not be 0 (a rank does not send to "
                           "itself)");
  if (group && (peer >= *group || -peer >= *group))
    return op->emitOpError("peer ")
           << peer << " is not a rank of a group of " << *group
           << " from every position (|peer| must be below the group size)";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyPeer(*this, getPeer(), knownGroupSize(*this));
}

LogicalResult RecvOp::verify() {
  return verifyPeer(*this, getPeer(), knownGroupSize(*this));
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

/// Both results of a start op feed exactly one comm.wait, together.
static LogicalResult verifyStartUses(Operation *op) {
  Value token = op->getResult(0), inflight = op->getResult(1);
  if (!token.hasOneUse())
    return op->emitOpError("token must be waited exactly once (it has ")
           << std::distance(token.use_begin(), token.use_end()) << " uses)";
  auto wait = dyn_cast<WaitOp>(*token.user_begin());
  if (!wait)
    return op->emitOpError("token must be used by a comm.wait");
  if (!inflight.hasOneUse() || *inflight.user_begin() != wait.getOperation() ||
      wait.getInflight() != inflight)
    return op->emitOpError("the in-flight tensor may only be used by its "
                           "comm.wait");
  return success();
}

static Operation *waitOf(Operation *op) {
  Value token = op->getResult(0);
  return token.hasOneUse() ? *token.user_begin() : nullptr;
}

LogicalResult AllReduceStartOp::verify() {
  if (getInput().getType() != getInflight().getType())
    return emitOpError("in-flight type must equal the operand type");
  if (failed(verifyMean(*this, getReduction(), getInput().getType())) ||
      failed(verifyCompressed(*this, getReduction(), getInput().getType(),
                              getCompressSlot())))
    return failure();
  return verifyStartUses(*this);
}
Operation *AllReduceStartOp::getWait() { return waitOf(*this); }

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyMean(*this, getReduction(), getInput().getType())) ||
      failed(verifyResizedCollective(*this, getInflight().getType(),
                                     /*scatter=*/true)))
    return failure();
  return verifyStartUses(*this);
}
Operation *ReduceScatterStartOp::getWait() { return waitOf(*this); }

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyResizedCollective(*this, getInflight().getType(),
                                     /*scatter=*/false)))
    return failure();
  return verifyStartUses(*this);
}
Operation *AllGatherStartOp::getWait() { return waitOf(*this); }

LogicalResult BroadcastStartOp::verify() {
  if (getInput().getType() != getInflight().getType())
    return emitOpError("in-flight type must equal the operand type");
  if (failed(verifyRoot(*this, getRootAttr(), knownGroupSize(*this))))
    return failure();
  return verifyStartUses(*this);
}
Operation *BroadcastStartOp::getWait() { return waitOf(*this); }

LogicalResult TransferStartOp::verify() {
  if (getDirection() != "upload" && getDirection() != "offload")
    return emitOpError("direction must be upload or offload, got '")
           << getDirection() << "'";
  return verifyStartUses(*this);
}

Operation *TransferStartOp::getWait() { return waitOf(*this); }

LogicalResult WaitOp::verify() {
  Operation *start = getToken().getDefiningOp();
  if (!start || start->getNumResults() != 2 ||
      start->getResult(1) != getInflight())
    return emitOpError("token and in-flight tensor must come from the same "
                       "*_start op");
  if (getInflight().getType() != getType())
    return emitOpError("result type must equal the in-flight type");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Comm/IR/CommOps.cpp.inc"
