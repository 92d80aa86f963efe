//===- Philox.h - Counter-based normal numbers in arith ops -----*- C++ -*-===//
//
// The random direction of zeroth-order training (loom.perturb, docs/zo.md):
// Philox4x32-10 (Salmon et al., SC 2011, as Random123) built from arith ops,
// so that the numbers are a pure function of their counter, the same on
// the CPU and the GPU, and an independent implementation reproduces them
// (test/e2e/zo/Inputs/philox.py checks itself against Random123's
// known-answer vectors).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TOLINALG_PHILOX_H
#define LOOM_PASSES_TOLINALG_PHILOX_H

#include "mlir/IR/Builders.h"

#include <array>

namespace mlir::loom {

/// The four 32-bit words of Philox4x32-10 for `counter` (i32 values) under
/// the 64-bit `key`.
std::array<Value, 4> buildPhilox4x32(OpBuilder &b, Location loc,
                                     std::array<Value, 4> counter,
                                     uint64_t key);

/// A number of float type `et` with mean 0 and variance 1 from the words of
/// one Philox call: the sum of their eight 16-bit halves, centred and
/// scaled (loom.perturb's description gives the exact formula).
Value buildIrwinHallNormal(OpBuilder &b, Location loc, Type et,
                           std::array<Value, 4> words);

} // namespace mlir::loom

#endif // LOOM_PASSES_TOLINALG_PHILOX_H
