//===- CudaGemmMappingTest.cpp - Row-major GEMMs as cuBLAS calls -*- C++
//-*-===//
//
// loom_rt_gpu_gemm_* hand cuBLAS the call that toCublas computes
// (runtime/src/cuda/GemmMapping.h). Without a GPU the mapping is checked by
// running that call through a reference column-major GEMM with cuBLAS's
// semantics and argument checks, and comparing with the CPU service
// loom_rt_gemm_* on the same row-major operands: every transpose, padded
// leading dimensions (different for A, B and C, so that swapping them
// shows), batches with gaps between matrices, beta 0 and not, and K = 0.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "cuda/GemmMapping.h"
#include "loom/runtime/abi.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace loom::rt::cuda;

namespace {

/// cublas<t>gemmStridedBatched with alpha 1, column-major, on the host.
/// Returns false where cuBLAS would return CUBLAS_STATUS_INVALID_VALUE.
template <typename T>
bool referenceCublas(const CublasGemm &c, const T *A, const T *B, T beta,
                     T *C) {
  int rowsA = c.transa ? c.k : c.m;
  int rowsB = c.transb ? c.n : c.k;
  if (c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0 ||
      c.lda < std::max(1, rowsA) || c.ldb < std::max(1, rowsB) ||
      c.ldc < std::max(1, c.m))
    return false;
  for (int b = 0; b < c.batch; ++b) {
    const T *a = A + b * c.strideA, *bm = B + b * c.strideB;
    T *cm = C + b * c.strideC;
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) {
        T sum = 0;
        for (int p = 0; p < c.k; ++p) {
          T x = c.transa ? a[p + i * c.lda] : a[i + p * c.lda];
          T y = c.transb ? bm[j + p * c.ldb] : bm[p + j * c.ldb];
          sum += x * y;
        }
        T &out = cm[i + j * c.ldc];
        out = sum + (beta == T(0) ? T(0) : beta * out);
      }
  }
  return true;
}

struct Case {
  int64_t M, N, K, batch;
  bool transA, transB;
  double beta;
};

template <typename T>
void checkCase(const Case &k, T tolerance) {
  SCOPED_TRACE(::testing::Message()
               << "M=" << k.M << " N=" << k.N << " K=" << k.K
               << " batch=" << k.batch << " transA=" << k.transA
               << " transB=" << k.transB << " beta=" << k.beta);
  // Stored shapes (row-major) and leading dimensions with distinct padding.
  int64_t rowsA = k.transA ? k.K : k.M, colsA = k.transA ? k.M : k.K;
  int64_t rowsB = k.transB ? k.N : k.K, colsB = k.transB ? k.K : k.N;
  RowMajorGemm g;
  g.batch = k.batch;
  g.transA = k.transA;
  g.transB = k.transB;
  g.M = k.M, g.N = k.N, g.K = k.K;
  g.lda = colsA + 1;
  g.ldb = colsB + 2;
  g.ldc = k.N + 3;
  g.strideA = rowsA * g.lda + 5;
  g.strideB = rowsB * g.ldb + 7;
  g.strideC = k.M * g.ldc + 11;
  std::mt19937 rng(static_cast<unsigned>(k.M * 131 + k.N * 17 + k.K));
  std::uniform_real_distribution<double> value(-1, 1);
  auto fill = [&](size_t n) {
    std::vector<T> v(n);
    for (T &x : v)
      x = static_cast<T>(value(rng));
    return v;
  };
  std::vector<T> A = fill(k.batch * g.strideA + 1);
  std::vector<T> B = fill(k.batch * g.strideB + 1);
  std::vector<T> C = fill(k.batch * g.strideC + 1);
  std::vector<T> expected = C, actual = C;

  if constexpr (sizeof(T) == 8)
    loom_rt_gemm_f64(g.batch, g.transA, g.transB, g.M, g.N, g.K, A.data(),
                     g.lda, g.strideA, B.data(), g.ldb, g.strideB, T(k.beta),
                     expected.data(), g.ldc, g.strideC);
  else
    loom_rt_gemm_f32(g.batch, g.transA, g.transB, g.M, g.N, g.K, A.data(),
                     g.lda, g.strideA, B.data(), g.ldb, g.strideB, T(k.beta),
                     expected.data(), g.ldc, g.strideC);

  std::string error;
  CublasGemm c = toCublas(g, error);
  ASSERT_EQ(error, "");
  // cuBLAS's first operand is the row-major B, its second the row-major A.
  ASSERT_TRUE(referenceCublas(c, B.data(), A.data(), T(k.beta), actual.data()))
      << "cuBLAS would reject the call: lda=" << c.lda << " ldb=" << c.ldb
      << " ldc=" << c.ldc;
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {7, 3, 5},
                               {1, 6, 2}, {6, 1, 2}, {4, 4, 0}};
  for (auto &shape : shapes)
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (int64_t batch : {1, 3})
          for (double beta : {0.0, 0.5})
            all.push_back(
                {shape[0], shape[1], shape[2], batch, transA, transB, beta});
  return all;
}

} // namespace

TEST(GemmMapping, MatchesTheCpuGemmInDouble) {
  for (const Case &k : cases())
    checkCase<double>(k, 1e-12);
}

TEST(GemmMapping, MatchesTheCpuGemmInFloat) {
  for (const Case &k : cases())
    checkCase<float>(k, 1e-5f);
}

TEST(GemmMapping, SwapsOperandsAndDimensions) {
  RowMajorGemm g;
  g.batch = 2;
  g.transA = true;
  g.M = 3, g.N = 5, g.K = 7;
  g.lda = 4, g.strideA = 100;
  g.ldb = 6, g.strideB = 200;
  g.ldc = 8, g.strideC = 300;
  std::string error;
  CublasGemm c = toCublas(g, error);
  EXPECT_EQ(error, "");
  EXPECT_FALSE(c.transa); // row-major B's flag
  EXPECT_TRUE(c.transb);  // row-major A's flag
  EXPECT_EQ(c.m, 5);
  EXPECT_EQ(c.n, 3);
  EXPECT_EQ(c.k, 7);
  EXPECT_EQ(c.lda, 6);
  EXPECT_EQ(c.ldb, 4);
  EXPECT_EQ(c.ldc, 8);
  EXPECT_EQ(c.strideA, 200);
  EXPECT_EQ(c.strideB, 100);
  EXPECT_EQ(c.strideC, 300);
  EXPECT_EQ(c.batch, 2);
}

TEST(GemmMapping, EmptyOperandsGetValidLeadingDimensions) {
  RowMajorGemm g;
  g.M = 4, g.N = 4, g.K = 0;
  g.lda = 0, g.ldb = 4, g.ldc = 4;
  std::string error;
  CublasGemm c = toCublas(g, error);
  EXPECT_GE(c.ldb, 1); // cuBLAS checks it even though nothing is read
  EXPECT_GE(c.lda, 4);
  // A non-empty operand keeps what the caller gave, valid or not.
  g.K = 2;
  g.lda = 1;
  EXPECT_EQ(toCublas(g, error).ldb, 1);
}

TEST(GemmMapping, RejectsDimensionsBeyondInt) {
  RowMajorGemm g;
  g.M = int64_t(1) << 31;
  g.N = 1, g.K = 1, g.lda = 1, g.ldb = 1, g.ldc = 1;
  std::string error;
  toCublas(g, error);
  EXPECT_NE(error.find("M = 2147483648 is outside cuBLAS's range"),
            std::string::npos)
      << error;
}
