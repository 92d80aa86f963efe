//===- CublasGemm.cpp - The GEMM service of cuda artifacts ------*- C++ -*-===//
//
// loom_rt_gpu_gemm_f32/f64/bf16 (abi.h): loom_rt_gemm_*'s row-major strided
// batched GEMM on device pointers, enqueued on the compute stream with one
// cublas<t>gemmStridedBatched call (GemmMapping.h turns the row-major call
// into cuBLAS's column-major one). FP32 GEMMs compute in FP32: TF32 tensor
// cores only with LOOM_CUDA_TF32=1 (CudaDevice.cpp), because cuda results
// are checked against the CPU path to 1e-3.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "GemmMapping.h"
#include "KernelProfile.h"
#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "support/Export.h"

#include <cstdint>
#include <string>

using namespace loom::rt;
using namespace loom::rt::cuda;

namespace {

cublasOperation_t operation(bool transpose) {
  return transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/// The largest power of two (up to 256) that divides `p`'s address: cuBLAS
/// picks its vectorised kernels by operand alignment, so the profile's rows
/// show it.
unsigned alignment(const void *p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  unsigned a = 1;
  while (a < 256 && address % (2 * a) == 0)
    a *= 2;
  return a;
}

/// A GEMM's row of the kernel profile: sizes, transposes, leading
/// dimensions (row-major, as compiled code passes them) and alignments.
std::string gemmShape(const RowMajorGemm &g, const void *A, const void *B,
                      const void *C) {
  return formatString(
      "M=%lld N=%lld K=%lld batch=%lld%s%s ld=%lld/%lld/%lld align=%u/%u/%u",
      static_cast<long long>(g.M), static_cast<long long>(g.N),
      static_cast<long long>(g.K), static_cast<long long>(g.batch),
      g.transA ? " A^T" : "", g.transB ? " B^T" : "",
      static_cast<long long>(g.lda), static_cast<long long>(g.ldb),
      static_cast<long long>(g.ldc), alignment(A), alignment(B), alignment(C));
}

/// Operands of type `In`, C, alpha and beta of type `T`.
template <typename T, typename In, typename Gemm, typename Geam>
void gpuGemm(const char *caller, const char *call, Gemm gemm, Geam geam,
             int64_t batch, int32_t transA, int32_t transB, int64_t M,
             int64_t N, int64_t K, const In *A, int64_t lda, int64_t strideA,
             const In *B, int64_t ldb, int64_t strideB, T beta, T *C,
             int64_t ldc, int64_t strideC) {
  CudaDevice &device = CudaDevice::forCompiledCode(caller);
  if (batch <= 0 || M == 0 || N == 0)
    return;
  RowMajorGemm g;
  g.batch = batch;
  g.transA = transA != 0;
  g.transB = transB != 0;
  g.M = M, g.N = N, g.K = K;
  g.lda = lda, g.strideA = strideA;
  g.ldb = ldb, g.strideB = strideB;
  g.ldc = ldc, g.strideC = strideC;
  std::string error;
  CublasGemm c = toCublas(g, error);
  if (!error.empty())
    abortJob(formatString("%s: %s", caller, error.c_str()));
  const T one = 1, zero = 0;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  KernelProfiler *profile = kernelProfiler(device.driver());
  CUevent start = profile ? profile->begin(device.computeStream()) : nullptr;
  if (K == 0) {
    // C = beta C. cuBLAS accepts k = 0, but as on the CPU path the
    // degenerate case is spelled out rather than left to the library:
    // geam with alpha 0 scales each C (in place, as geam allows), writing
    // zeros for beta 0 without reading C.
    for (int64_t b = 0; b < batch && status == CUBLAS_STATUS_SUCCESS; ++b) {
      T *matrix = C + b * strideC;
      status = geam(device.blas(), CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, &zero,
                    matrix, c.ldc, &beta, matrix, c.ldc, matrix, c.ldc);
    }
    call = "cublas<t>geam";
  } else {
    status = gemm(device.blas(), operation(c.transa), operation(c.transb), c.m,
                  c.n, c.k, &one, B, c.lda, c.strideA, A, c.ldb, c.strideB,
                  &beta, C, c.ldc, c.strideC, c.batch);
  }
  if (status != CUBLAS_STATUS_SUCCESS)
    abortJob(formatString("%s: %s failed (M=%lld N=%lld K=%lld batch=%lld): "
                          "%s",
                          caller, call, static_cast<long long>(M),
                          static_cast<long long>(N), static_cast<long long>(K),
                          static_cast<long long>(batch),
                          cublasStatusText(status)));
  if (profile)
    profile->end(device.computeStream(), start, call, gemmShape(g, A, B, C));
  device.afterEnqueue(caller);
}

/// cublas<t>gemmStridedBatched's signature for bf16 operands into f32,
/// on bf16 tensor cores (the default math mode allows them for 16-bit
/// inputs) with FP32 accumulation.
cublasStatus_t gemmBf16(cublasHandle_t handle, cublasOperation_t ta,
                        cublasOperation_t tb, int m, int n, int k,
                        const float *alpha, const uint16_t *A, int lda,
                        long long strideA, const uint16_t *B, int ldb,
                        long long strideB, const float *beta, float *C, int ldc,
                        long long strideC, int batch) {
  return cublasGemmStridedBatchedEx(
      handle, ta, tb, m, n, k, alpha, A, CUDA_R_16BF, lda, strideA, B,
      CUDA_R_16BF, ldb, strideB, beta, C, CUDA_R_32F, ldc, strideC, batch,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

} // namespace

extern "C" {

LOOM_RT_ABI_EXPORT void
loom_rt_gpu_gemm_f32(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                     int64_t N, int64_t K, const float *A, int64_t lda,
                     int64_t strideA, const float *B, int64_t ldb,
                     int64_t strideB, float beta, float *C, int64_t ldc,
                     int64_t strideC) {
  gpuGemm<float>("loom_rt_gpu_gemm_f32", "cublasSgemmStridedBatched",
                 cublasSgemmStridedBatched, cublasSgeam, batch, transA, transB,
                 M, N, K, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                 strideC);
}

LOOM_RT_ABI_EXPORT void
loom_rt_gpu_gemm_f64(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                     int64_t N, int64_t K, const double *A, int64_t lda,
                     int64_t strideA, const double *B, int64_t ldb,
                     int64_t strideB, double beta, double *C, int64_t ldc,
                     int64_t strideC) {
  gpuGemm<double>("loom_rt_gpu_gemm_f64", "cublasDgemmStridedBatched",
                  cublasDgemmStridedBatched, cublasDgeam, batch, transA, transB,
                  M, N, K, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                  strideC);
}

LOOM_RT_ABI_EXPORT void
loom_rt_gpu_gemm_bf16(int64_t batch, int32_t transA, int32_t transB, int64_t M,
                      int64_t N, int64_t K, const uint16_t *A, int64_t lda,
                      int64_t strideA, const uint16_t *B, int64_t ldb,
                      int64_t strideB, float beta, float *C, int64_t ldc,
                      int64_t strideC) {
  gpuGemm<float>("loom_rt_gpu_gemm_bf16", "cublasGemmStridedBatchedEx",
                 gemmBf16, cublasSgeam, batch, transA, transB, M, N, K, A, lda,
                 strideA, B, ldb, strideB, beta, C, ldc, strideC);
}

} // extern "C"
