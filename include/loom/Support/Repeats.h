//===- Repeats.h - Runs of a sequence that repeat with a period -*- C++ -*-===//
#ifndef LOOM_SUPPORT_REPEATS_H
#define LOOM_SUPPORT_REPEATS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::loom {

/// A run of equal repetitions: `count` of `period` elements from `begin`.
struct Stretch {
  int64_t period, begin, count;
  /// The elements a single repetition would stand for.
  int64_t gain() const { return (count - 1) * period; }
  int64_t end() const { return begin + count * period; }
  bool overlaps(const Stretch &o) const {
    return begin < o.end() && o.begin < end();
  }
};

/// The runs of `hashes` where every element equals the one a period later,
/// for the 16 periods (at least `minPeriod`) that separate the most pairs of
/// equal elements; an element for which `breaks` holds equals none. Each
/// run is as long as it goes, repeats at least twice, and may overlap
/// others; the largest gain first. Hashes only propose: callers verify.
SmallVector<Stretch> findRepeats(ArrayRef<llvm::hash_code> hashes,
                                 function_ref<bool(int64_t)> breaks,
                                 int64_t minPeriod);

} // namespace mlir::loom

#endif // LOOM_SUPPORT_REPEATS_H
