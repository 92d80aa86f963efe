//===- DemoteMatmuls.cpp - bf16 GEMM operands, f32 accumulation -----------===//
//
// The GEMM half of bf16 mixed precision (loomc --precision=bf16): operands
// are rounded to bf16 right before each matmul, so parameters, optimizer
// state and every non-GEMM op keep f32 (fp32 master weights), and the GEMM
// services (cuBLAS bf16 tensor cores, or OpenBLAS on widened copies) see
// half the operand bytes.
//
//===----------------------------------------------------------------------===//
#include "passes/ToLinalg/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "loom-demote-matmuls"

namespace mlir::loom {
#define GEN_PASS_DEF_DEMOTEMATMULSPASS
#include "passes/ToLinalg/Passes.h.inc"

namespace {

/// `v` rounded elementwise to bf16 (round to nearest even), as a
/// linalg.generic that elementwise fusion can merge into v's producer.
/// Reshapes (the matmul lowering folds leading dims), slices and transposes
/// (attention's q, k, v and heads) are looked through, so the rounding reads
/// the producer's own result and fuses with it.
Value roundToBf16(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  Type bf16 = b.getBF16Type();
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>())
    return tensor::CollapseShapeOp::create(
        b, loc, type.clone(bf16), roundToBf16(b, loc, collapse.getSrc()),
        collapse.getReassociationIndices());
  if (auto transpose = v.getDefiningOp<linalg::TransposeOp>();
      transpose && transpose.hasPureTensorSemantics()) {
    // Also halves the bytes the transpose moves.
    Value in = roundToBf16(b, loc, transpose.getInput());
    Value init =
        tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), bf16);
    return linalg::TransposeOp::create(b, loc, in, init,
                                       transpose.getPermutation())
        .getResult()[0];
  }
  if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>())
    return tensor::ExtractSliceOp::create(
        b, loc, type.clone(bf16), roundToBf16(b, loc, slice.getSource()),
        slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
      expand && type.hasStaticShape())
    return tensor::ExpandShapeOp::create(b, loc, type.clone(bf16),
                                         roundToBf16(b, loc, expand.getSrc()),
                                         expand.getReassociationIndices());
  Value init =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), bf16);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init},
      ArrayRef<AffineMap>{id, id}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value r = arith::TruncFOp::create(nb, l, bf16, args[0]);
        linalg::YieldOp::create(nb, l, r);
      });
  return generic.getResult(0);
}

bool isF32Tensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

struct DemoteMatmulsPass : impl::DemoteMatmulsPassBase<DemoteMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        gemms.push_back(cast<linalg::LinalgOp>(op));
    });
    for (linalg::LinalgOp op : gemms)
      if (demote(op))
        ++numDemoted;
  }

  /// Rebuilds `op` on bf16 operands; the named op's region builder then
  /// widens them (arith.extf) before the f32 multiply-accumulate.
  bool demote(linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        !llvm::all_of(op->getOperands(), isF32Tensor))
      return false;
    OpBuilder b(op);
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    for (OpOperand *in : op.getDpsInputOperands())
      inputs.push_back(roundToBf16(b, loc, in->get()));
    // The operand maps (transposes) carry over; the rest is rebuilt.
    SmallVector<NamedAttribute> attrs;
    if (Attribute maps = op->getAttr("indexing_maps"))
      attrs.emplace_back(b.getStringAttr("indexing_maps"), maps);
    ValueRange inits = op.getDpsInits();
    TypeRange results = op->getResultTypes();
    Operation *demoted =
        isa<linalg::BatchMatmulOp>(op)
            ? linalg::BatchMatmulOp::create(b, loc, results, inputs, inits,
                                            attrs)
                  .getOperation()
            : linalg::MatmulOp::create(b, loc, results, inputs, inits, attrs)
                  .getOperation();
    op->replaceAllUsesWith(demoted->getResults());
    op->erase();
    return true;
  }
};

} // namespace
} // namespace mlir::loom
