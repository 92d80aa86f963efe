//===- GemmTest.cpp - Tests of the batched GEMM service ---------*- C++ -*-===//
//
// loom_rt_gemm_* (f32, f64, bf16 operands) against a naive triple loop, for
// every transpose combination, padded leading dimensions and batch strides.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "loom/runtime/Random.h"
#include "loom/runtime/abi.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>

using namespace loom::rt;

namespace {

/// bf16 operands are stored as their bits; the reference loop reads the
/// values they were made from.
struct Bf16 {
  uint16_t bits;
};

template <typename T, typename S>
void gemm(int64_t batch, int32_t ta, int32_t tb, int64_t M, int64_t N,
          int64_t K, const S *A, int64_t lda, int64_t sA, const S *B,
          int64_t ldb, int64_t sB, T beta, T *C, int64_t ldc, int64_t sC) {
  if constexpr (std::is_same_v<S, Bf16>)
    loom_rt_gemm_bf16(
        batch, ta, tb, M, N, K, reinterpret_cast<const uint16_t *>(A), lda, sA,
        reinterpret_cast<const uint16_t *>(B), ldb, sB, beta, C, ldc, sC);
  else if constexpr (std::is_same_v<T, float>)
    loom_rt_gemm_f32(batch, ta, tb, M, N, K, A, lda, sA, B, ldb, sB, beta, C,
                     ldc, sC);
  else
    loom_rt_gemm_f64(batch, ta, tb, M, N, K, A, lda, sA, B, ldb, sB, beta, C,
                     ldc, sC);
}

/// A random operand value and how it is stored. bf16 values are multiples
/// of 2^-7 in (-1, 1), exactly representable with bf16's 8 significant
/// bits, so the expected result does not depend on any rounding.
template <typename S>
S operand(CounterRng &rng, double &value) {
  if constexpr (std::is_same_v<S, Bf16>) {
    value = std::floor((rng.uniform() - 0.5) * 256) / 128;
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return Bf16{static_cast<uint16_t>(bits >> 16)};
  } else {
    S v = static_cast<S>(rng.uniform() - 0.5);
    value = double(v);
    return v;
  }
}

template <typename T, typename S = T>
void checkAgainstNaive(double tolerance) {
  const int64_t batch = 3, M = 5, N = 7, K = 4;
  CounterRng rng(123);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (T beta : {T(0), T(0.5)}) {
        // Stored shapes: A is MxK or KxM, B is KxN or NxK; padded rows.
        int64_t aRows = ta ? K : M, aCols = ta ? M : K;
        int64_t bRows = tb ? N : K, bCols = tb ? K : N;
        int64_t lda = aCols + 3, ldb = bCols + 2, ldc = N + 1;
        int64_t sA = aRows * lda + 5, sB = bRows * ldb + 1, sC = M * ldc + 4;
        std::vector<S> A(batch * sA), B(batch * sB);
        std::vector<double> a(A.size()), bv(B.size());
        std::vector<T> C(batch * sC);
        for (size_t i = 0; i < A.size(); ++i)
          A[i] = operand<S>(rng, a[i]);
        for (size_t i = 0; i < B.size(); ++i)
          B[i] = operand<S>(rng, bv[i]);
        for (T &v : C)
          v = static_cast<T>(rng.uniform() - 0.5);
        std::vector<T> expected = C;
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              double sum = 0;
              for (int64_t k = 0; k < K; ++k)
                sum +=
                    (ta ? a[b * sA + k * lda + i] : a[b * sA + i * lda + k]) *
                    (tb ? bv[b * sB + j * ldb + k] : bv[b * sB + k * ldb + j]);
              T &c = expected[b * sC + i * ldc + j];
              c = static_cast<T>(sum + double(beta) * double(c));
            }
        gemm<T, S>(batch, ta, tb, M, N, K, A.data(), lda, sA, B.data(), ldb, sB,
                   beta, C.data(), ldc, sC);
        for (size_t i = 0; i < C.size(); ++i)
          // Padding between rows and batches is compared too: it must be
          // untouched.
          ASSERT_NEAR(C[i], expected[i], tolerance)
              << "transA=" << ta << " transB=" << tb << " beta=" << beta
              << " at " << i;
      }
}

} // namespace

TEST(Gemm, F32MatchesNaiveLoop) { checkAgainstNaive<float>(1e-5); }
TEST(Gemm, F64MatchesNaiveLoop) { checkAgainstNaive<double>(1e-12); }
// Exact products and small sums: only f32 summation order can differ.
TEST(Gemm, Bf16MatchesNaiveLoop) { checkAgainstNaive<float, Bf16>(1e-6); }

TEST(Gemm, EmptyInnerDimensionScalesC) {
  std::vector<double> C = {1, 2, 3, 4};
  loom_rt_gemm_f64(1, 0, 0, 2, 2, 0, nullptr, 1, 0, nullptr, 2, 0, 0.5,
                   C.data(), 2, 0);
  EXPECT_EQ(C, (std::vector<double>{0.5, 1, 1.5, 2}));
  loom_rt_gemm_f64(1, 0, 0, 2, 2, 0, nullptr, 1, 0, nullptr, 2, 0, 0.0,
                   C.data(), 2, 0);
  EXPECT_EQ(C, (std::vector<double>{0, 0, 0, 0}));
}

TEST(Gemm, ServicesAreExportedForArtifacts) {
  // A dlopen'ed artifact finds these in the global scope.
  for (const char *name :
       {"loom_rt_gemm_f32", "loom_rt_gemm_f64", "loom_rt_gemm_bf16",
        "memrefCopy", "_mlir_memref_to_llvm_alloc",
        "_mlir_memref_to_llvm_aligned_alloc", "_mlir_memref_to_llvm_free"})
    EXPECT_NE(dlsym(RTLD_DEFAULT, name), nullptr) << name;
}
