//===- MemrefCopy.cpp - Strided memref copies -------------------*- C++ -*-===//
//
// Implements memrefCopy (abi.h), the runtime half of `memref.copy` between
// non-contiguous views. The descriptor behind an unranked memref is
//   { T *allocated; T *aligned; int64 offset; int64 sizes[rank];
//     int64 strides[rank]; }
// (offset and strides in elements). The copy walks the index space in
// row-major order; rows that are contiguous in both views are memcpy'd.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/abi.h"
#include "support/Export.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct DescriptorView {
  char *base;             // aligned + offset * elemSize
  const int64_t *sizes;   // rank entries
  const int64_t *strides; // rank entries
};

DescriptorView view(const loom_unranked_memref *memref, int64_t elemSize) {
  auto *pointers = static_cast<char *const *>(memref->descriptor);
  auto *words = static_cast<const int64_t *>(memref->descriptor);
  char *aligned = pointers[1];
  int64_t offset = words[2];
  return {aligned + offset * elemSize, words + 3, words + 3 + memref->rank};
}

bool isRowMajorContiguous(const DescriptorView &view, int64_t rank) {
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    // Unit dimensions may carry any stride.
    if (view.sizes[d] != 1 && view.strides[d] != expected)
      return false;
    expected *= view.sizes[d];
  }
  return true;
}

} // namespace

extern "C" LOOM_RT_ABI_EXPORT void memrefCopy(int64_t elemSize,
                                              loom_unranked_memref *src,
                                              loom_unranked_memref *dst) {
  int64_t rank = src->rank;
  if (dst->rank != rank) {
    std::fprintf(
        stderr, "loom runtime: memrefCopy between ranks %lld and %lld\n",
        static_cast<long long>(rank), static_cast<long long>(dst->rank));
    std::abort();
  }
  DescriptorView from = view(src, elemSize), to = view(dst, elemSize);
  if (rank == 0) {
    std::memmove(to.base, from.base, elemSize);
    return;
  }
  int64_t total = 1;
  for (int64_t d = 0; d < rank; ++d)
    total *= from.sizes[d];
  if (total == 0)
    return;
  if (isRowMajorContiguous(from, rank) && isRowMajorContiguous(to, rank)) {
    std::memmove(to.base, from.base, total * elemSize);
    return;
  }

  // Odometer over all but the innermost dimension; no heap allocation for
  // ranks up to 16 (more than any lowering produces).
  constexpr int64_t kMaxStackRank = 16;
  int64_t stackIndex[kMaxStackRank] = {};
  int64_t *index = stackIndex;
  if (rank > kMaxStackRank)
    index = static_cast<int64_t *>(std::calloc(rank, sizeof(int64_t)));
  int64_t inner = rank - 1;
  int64_t innerSize = from.sizes[inner];
  int64_t fromInner = from.strides[inner] * elemSize;
  int64_t toInner = to.strides[inner] * elemSize;
  bool innerContiguous = from.strides[inner] == 1 && to.strides[inner] == 1;
  char *fromRow = from.base, *toRow = to.base;
  for (;;) {
    if (innerContiguous) {
      std::memcpy(toRow, fromRow, innerSize * elemSize);
    } else {
      const char *f = fromRow;
      char *t = toRow;
      for (int64_t i = 0; i < innerSize; ++i, f += fromInner, t += toInner)
        std::memcpy(t, f, elemSize);
    }
    // Advance the outer index, carrying into higher dimensions.
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      fromRow += from.strides[d] * elemSize;
      toRow += to.strides[d] * elemSize;
      if (++index[d] < from.sizes[d])
        break;
      fromRow -= from.strides[d] * from.sizes[d] * elemSize;
      toRow -= to.strides[d] * to.sizes[d] * elemSize;
      index[d] = 0;
    }
    if (d < 0)
      break;
  }
  if (index != stackIndex)
    std::free(index);
}
