//===- GemmMapping.h - Row-major GEMM calls as cuBLAS calls -----*- C++ -*-===//
//
// Internal to libLoomCuda.so. loom_rt_gpu_gemm_* take abi.h's row-major
// arguments; cuBLAS is column-major. A row-major M x N matrix with leading
// dimension ld is, byte for byte, the column-major N x M matrix of its
// transpose with the same ld, so
//     C = op(A) op(B)   (row-major)   is   C^T = op(B)^T op(A)^T
// in column-major terms: cuBLAS multiplies the row-major B by the row-major
// A with m = N, n = M, and each operand keeps its own transpose flag and
// leading dimension. toCublas computes that call; it is pure so that the
// tests check it against the CPU GEMM on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_GEMMMAPPING_H
#define LOOM_RUNTIME_SRC_CUDA_GEMMMAPPING_H

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace loom::rt::cuda {

/// The arguments of loom_rt_gemm_* (abi.h) without the pointers and beta.
struct RowMajorGemm {
  int64_t batch = 1;
  bool transA = false, transB = false;
  int64_t M = 0, N = 0, K = 0;
  int64_t lda = 0, strideA = 0;
  int64_t ldb = 0, strideB = 0;
  int64_t ldc = 0, strideC = 0;
};

/// One cublas<t>gemmStridedBatched call. Its first operand ("A" in cuBLAS's
/// documentation) is the row-major B, its second the row-major A.
struct CublasGemm {
  bool transa = false, transb = false;
  int m = 0, n = 0, k = 0;
  /// Leading dimension and batch stride of cuBLAS's first operand (the
  /// row-major B), of its second (the row-major A), and of C.
  int lda = 0, ldb = 0, ldc = 0;
  long long strideA = 0, strideB = 0, strideC = 0;
  int batch = 0;
};

/// The cuBLAS call computing `g`; sets `error` (if still empty) when a
/// dimension does not fit cuBLAS's int arguments. The leading dimension of
/// an empty operand means nothing, but cuBLAS still checks it against the
/// operand's rows, so it is raised to that minimum.
inline CublasGemm toCublas(const RowMajorGemm &g, std::string &error) {
  CublasGemm c;
  auto narrow = [&](int64_t value, const char *what) {
    if (value < 0 || value > INT_MAX) {
      if (error.empty())
        error = std::string(what) + " = " + std::to_string(value) +
                " is outside cuBLAS's range [0, 2^31)";
      return 0;
    }
    return static_cast<int>(value);
  };
  c.transa = g.transB;
  c.transb = g.transA;
  c.m = narrow(g.N, "N");
  c.n = narrow(g.M, "M");
  c.k = narrow(g.K, "K");
  // Rows of each operand as cuBLAS stores it (column-major): its minimum
  // leading dimension. The row-major B is K x N (N x K transposed), so as a
  // column-major matrix it has N rows untransposed and K rows transposed.
  int64_t rowsA = g.transB ? g.K : g.N;
  int64_t rowsB = g.transA ? g.M : g.K;
  auto leading = [&](int64_t ld, int64_t rows, bool empty, const char *what) {
    return narrow(empty ? std::max<int64_t>({ld, rows, 1}) : ld, what);
  };
  c.lda = leading(g.ldb, rowsA, g.K == 0 || g.N == 0, "ldb");
  c.ldb = leading(g.lda, rowsB, g.K == 0 || g.M == 0, "lda");
  c.ldc = leading(g.ldc, g.N, g.M == 0 || g.N == 0, "ldc");
  c.strideA = g.strideB;
  c.strideB = g.strideA;
  c.strideC = g.strideC;
  c.batch = narrow(g.batch, "batch");
  return c;
}

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_GEMMMAPPING_H
