//===- Repeats.cpp - Runs of a sequence that repeat with a period --------===//
#include "loom/Support/Repeats.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::loom {

namespace {

/// Distances between equal elements, the most frequent first: the period
/// of a run that repeats k times separates k - 1 pairs of each element.
SmallVector<int64_t> candidatePeriods(ArrayRef<llvm::hash_code> hashes,
                                      function_ref<bool(int64_t)> breaks,
                                      int64_t minPeriod) {
  llvm::DenseMap<llvm::hash_code, int64_t> last;
  llvm::DenseMap<int64_t, int64_t> count;
  for (auto [i, h] : llvm::enumerate(hashes)) {
    if (breaks(i))
      continue;
    auto [it, fresh] = last.try_emplace(h, i);
    if (!fresh) {
      int64_t distance = static_cast<int64_t>(i) - it->second;
      if (distance >= minPeriod)
        ++count[distance];
      it->second = i;
    }
  }
  SmallVector<std::pair<int64_t, int64_t>> byCount; // count, distance
  for (auto [distance, n] : count)
    byCount.push_back({n, distance});
  llvm::sort(byCount, [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  SmallVector<int64_t> periods;
  for (auto [n, distance] : ArrayRef(byCount).take_front(16))
    periods.push_back(distance);
  return periods;
}

} // namespace

SmallVector<Stretch> findRepeats(ArrayRef<llvm::hash_code> hashes,
                                 function_ref<bool(int64_t)> breaks,
                                 int64_t minPeriod) {
  const int64_t n = hashes.size();
  auto same = [&](int64_t i, int64_t j) {
    return !breaks(i) && !breaks(j) && hashes[i] == hashes[j];
  };
  SmallVector<Stretch> all;
  for (int64_t p : candidatePeriods(hashes, breaks, minPeriod)) {
    for (int64_t j = 0; j + p < n;) {
      if (!same(j, j + p)) {
        ++j;
        continue;
      }
      int64_t begin = j;
      while (j + p < n && same(j, j + p))
        ++j;
      // [begin, j + p) repeats with period p.
      int64_t count = (j - begin + p) / p;
      if (count >= 2)
        all.push_back({p, begin, count});
    }
  }
  llvm::stable_sort(all, [](const Stretch &a, const Stretch &b) {
    return a.gain() > b.gain();
  });
  return all;
}

} // namespace mlir::loom
