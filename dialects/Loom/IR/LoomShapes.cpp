//===- LoomShapes.cpp - Shape rules shared by loom ops and passes ---------===//
#include "dialects/Loom/IR/LoomShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

FailureOr<SmallVector<int64_t>>
mlir::loom::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool mlir::loom::isSupportedShape(ArrayRef<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > kMaxTensorElements / elements)
      return false;
    elements *= d;
  }
  return true;
}

bool mlir::loom::isBroadcastableTo(ArrayRef<int64_t> from,
                                   ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  auto shape = broadcastShapes(from, to);
  return succeeded(shape) && ArrayRef<int64_t>(*shape) == to;
}

std::string mlir::loom::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

FailureOr<int64_t> mlir::loom::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return failure();
  return axis;
}
