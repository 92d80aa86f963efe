//===- LoomShapes.h - Shape rules shared by loom ops and passes -*- C++ -*-===//
#ifndef LOOM_DIALECTS_LOOM_IR_LOOMSHAPES_H
#define LOOM_DIALECTS_LOOM_IR_LOOMSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"

namespace mlir::loom {

/// The most elements a loom tensor may have (2^40, 4 TiB of f32). Far above
/// any real tensor, and low enough that element and byte counts of every
/// tensor, and products of a few of them, fit in int64_t.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// True when every dimension is at least 1 and the element count is at most
/// kMaxTensorElements: the shapes loom ops compute on. A zero dimension
/// makes gradients and means divide by zero, so models must not have one.
bool isSupportedShape(ArrayRef<int64_t> shape);

/// NumPy broadcasting of two static shapes; failure when incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

/// True when `from` broadcasts to exactly `to`.
bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to);

/// Formats a shape as `[4, 8]` for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape);

/// Resolves a possibly negative axis; failure when out of range.
FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_LOOMSHAPES_H
