//===- Gemm.cpp - The strided batched GEMM service --------------*- C++ -*-===//
//
// Implements loom_rt_gemm_f32/f64/bf16 (abi.h) on OpenBLAS, one cblas call
// per batch matrix, and the BLAS thread setting.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Blas.h"
#include "loom/runtime/abi.h"
#include "support/Export.h"

#include <cblas.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace loom::rt {

void setBlasThreads(int threads) {
  openblas_set_num_threads(threads < 1 ? 1 : threads);
}

int getBlasThreads() { return openblas_get_num_threads(); }

namespace {

/// cblas takes `int` dimensions; compiled code cannot catch an exception, so
/// an impossible size is reported and the process stops.
int checkedDim(int64_t value, const char *what) {
  if (value < 0 || value > INT_MAX) {
    std::fprintf(stderr, "loom runtime: gemm %s = %lld is out of range\n", what,
                 static_cast<long long>(value));
    std::abort();
  }
  return static_cast<int>(value);
}

template <typename T>
void scaleMatrix(T *C, int64_t M, int64_t N, int64_t ldc, T beta) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
}

template <typename T, typename Fn>
void batchedGemm(Fn gemm, int64_t batch, int32_t transA, int32_t transB,
                 int64_t M, int64_t N, int64_t K, const T *A, int64_t lda,
                 int64_t strideA, const T *B, int64_t ldb, int64_t strideB,
                 T beta, T *C, int64_t ldc, int64_t strideC) {
  if (batch <= 0 || M == 0 || N == 0)
    return;
  if (K == 0) {
    // C = 0 * AB + beta C; handled here because BLAS implementations differ
    // on whether they touch C when K is 0.
    for (int64_t b = 0; b < batch; ++b)
      scaleMatrix(C + b * strideC, M, N, ldc, beta);
    return;
  }
  int m = checkedDim(M, "M"), n = checkedDim(N, "N"), k = checkedDim(K, "K");
  int la = checkedDim(lda, "lda"), lb = checkedDim(ldb, "ldb"),
      lc = checkedDim(ldc, "ldc");
  CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  for (int64_t b = 0; b < batch; ++b)
    gemm(CblasRowMajor, ta, tb, m, n, k, T(1), A + b * strideA, la,
         B + b * strideB, lb, beta, C + b * strideC, lc);
}

/// Elements spanned by a batch of row-major matrices of `rows` x `cols`
/// with row stride `ld` and batch stride `stride`.
size_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t cols,
              int64_t ld) {
  return static_cast<size_t>((batch - 1) * stride + (rows - 1) * ld + cols);
}

/// bf16 bits -> f32 (exact: bf16 is the upper half of an f32).
const float *widenBf16(const uint16_t *in, size_t n, std::vector<float> &out) {
  if (out.size() < n)
    out.resize(n); // grows once to the largest GEMM, then reused
  // Through plain pointers: stores through `out` itself could alias its own
  // members and keep the loop from vectorising.
  float *__restrict dst = out.data();
  const uint16_t *__restrict src = in;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    dst[i] = value;
  }
  return dst;
}

} // namespace
} // namespace loom::rt

extern "C" {

LOOM_RT_ABI_EXPORT void
loom_rt_gemm_f32(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                 int64_t N, int64_t K, const float *A, int64_t lda,
                 int64_t strideA, const float *B, int64_t ldb, int64_t strideB,
                 float beta, float *C, int64_t ldc, int64_t strideC) {
  loom::rt::batchedGemm<float>(cblas_sgemm, batch, transA, transB, M, N, K, A,
                               lda, strideA, B, ldb, strideB, beta, C, ldc,
                               strideC);
}

LOOM_RT_ABI_EXPORT void
loom_rt_gemm_f64(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                 int64_t N, int64_t K, const double *A, int64_t lda,
                 int64_t strideA, const double *B, int64_t ldb, int64_t strideB,
                 double beta, double *C, int64_t ldc, int64_t strideC) {
  loom::rt::batchedGemm<double>(cblas_dgemm, batch, transA, transB, M, N, K, A,
                                lda, strideA, B, ldb, strideB, beta, C, ldc,
                                strideC);
}

LOOM_RT_ABI_EXPORT void loom_rt_gemm_bf16(int64_t batch, int32_t transA,
                                          int32_t transB, int64_t M, int64_t N,
                                          int64_t K, const uint16_t *A,
                                          int64_t lda, int64_t strideA,
                                          const uint16_t *B, int64_t ldb,
                                          int64_t strideB, float beta, float *C,
                                          int64_t ldc, int64_t strideC) {
  using namespace loom::rt;
  if (batch <= 0 || M == 0 || N == 0 || K == 0) {
    batchedGemm<float>(cblas_sgemm, batch, transA, transB, M, N, K, nullptr,
                       lda, strideA, nullptr, ldb, strideB, beta, C, ldc,
                       strideC);
    return;
  }
  // One rank calls from one thread; per thread, the widened copies.
  thread_local std::vector<float> wideA, wideB;
  const float *a = widenBf16(
      A, extent(batch, strideA, transA ? K : M, transA ? M : K, lda), wideA);
  const float *b = widenBf16(
      B, extent(batch, strideB, transB ? N : K, transB ? K : N, ldb), wideB);
  batchedGemm<float>(cblas_sgemm, batch, transA, transB, M, N, K, a, lda,
                     strideA, b, ldb, strideB, beta, C, ldc, strideC);
}

} // extern "C"
