//===- LinalgBuilders.h - Shared pieces of the loom -> linalg lowering -*- C++
//-*-===//
//
// Internal to passes/ToLinalg: what --loom-lower-to-linalg's pattern files
// share.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TOLINALG_LINALGBUILDERS_H
#define LOOM_PASSES_TOLINALG_LINALGBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::loom {

/// A tensor.empty of type `t`: the destination of a linalg op.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType t);

/// A scalar constant `v` of float type `t`.
Value floatConst(OpBuilder &b, Location loc, Type t, double v);

/// The lowerings of the masks that compare index operands along rows and
/// columns (loom.segment_mask, loom.document_mask).
void populateIndexMaskLowerings(RewritePatternSet &patterns);

} // namespace mlir::loom

#endif // LOOM_PASSES_TOLINALG_LINALGBUILDERS_H
