//===- MemrefCopyTest.cpp - Tests of the strided copy service ---*- C++ -*-===//
//
// memrefCopy with MLIR descriptors: transposed views, offsets, unit and
// zero-size dimensions, rank 0.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/abi.h"

#include <numeric>

namespace {

/// An MLIR ranked descriptor laid out as memrefCopy expects.
template <int Rank>
struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

template <int Rank>
loom_unranked_memref unranked(Descriptor<Rank> &descriptor) {
  return {Rank, &descriptor};
}

} // namespace

TEST(MemrefCopy, TransposedViewToContiguous) {
  // src: a 3x4 row-major matrix viewed as its 4x3 transpose.
  std::vector<float> src(12), dst(12, -1);
  std::iota(src.begin(), src.end(), 0.f);
  Descriptor<2> from{src.data(), src.data(), 0, {4, 3}, {1, 4}};
  Descriptor<2> to{dst.data(), dst.data(), 0, {4, 3}, {3, 1}};
  loom_unranked_memref a = unranked(from), b = unranked(to);
  memrefCopy(sizeof(float), &a, &b);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(dst[i * 3 + j], src[j * 4 + i]);
}

TEST(MemrefCopy, SubviewWithOffsetIntoStridedDestination) {
  // Copy the 2x2x3 block starting at [1, 1, 0] of a 3x3x4 tensor into the
  // even rows of a 2x4x3 buffer.
  std::vector<double> src(36), dst(24, -1);
  std::iota(src.begin(), src.end(), 0.0);
  Descriptor<3> from{
      src.data(), src.data(), 1 * 12 + 1 * 4, {2, 2, 3}, {12, 4, 1}};
  Descriptor<3> to{dst.data(), dst.data(), 0, {2, 2, 3}, {12, 6, 1}};
  loom_unranked_memref a = unranked(from), b = unranked(to);
  memrefCopy(sizeof(double), &a, &b);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(dst[i * 12 + j * 6 + k], src[(1 + i) * 12 + (1 + j) * 4 + k]);
  EXPECT_EQ(dst[3], -1); // the odd rows are untouched
}

TEST(MemrefCopy, ContiguousRankZeroAndEmpty) {
  std::vector<int32_t> src = {1, 2, 3, 4, 5, 6}, dst(6, 0);
  Descriptor<2> from{src.data(), src.data(), 0, {2, 3}, {3, 1}};
  Descriptor<2> to{dst.data(), dst.data(), 0, {2, 3}, {3, 1}};
  loom_unranked_memref a = unranked(from), b = unranked(to);
  memrefCopy(sizeof(int32_t), &a, &b);
  EXPECT_EQ(src, dst);

  struct Scalar {
    void *allocated, *aligned;
    int64_t offset;
  } s{src.data(), src.data(), 4}, d{dst.data(), dst.data(), 0};
  loom_unranked_memref sa{0, &s}, sd{0, &d};
  memrefCopy(sizeof(int32_t), &sa, &sd);
  EXPECT_EQ(dst[0], 5);

  Descriptor<2> none{src.data(), src.data(), 0, {0, 3}, {3, 1}};
  Descriptor<2> noneDst{nullptr, nullptr, 0, {0, 3}, {7, 1}};
  loom_unranked_memref na = unranked(none), nd = unranked(noneDst);
  memrefCopy(sizeof(int32_t), &na, &nd); // must not touch memory
}

TEST(MemrefCopy, InnerStrideNotOne) {
  std::vector<int64_t> src(10), dst(5, 0);
  std::iota(src.begin(), src.end(), 0);
  Descriptor<1> from{src.data(), src.data(), 1, {5}, {2}};
  Descriptor<1> to{dst.data(), dst.data(), 0, {5}, {1}};
  loom_unranked_memref a = unranked(from), b = unranked(to);
  memrefCopy(sizeof(int64_t), &a, &b);
  EXPECT_EQ(dst, (std::vector<int64_t>{1, 3, 5, 7, 9}));
}
