//===- Blas.h - BLAS configuration ------------------------------*- C++ -*-===//
//
// The GEMM service of abi.h runs on OpenBLAS; its thread count is a process
// setting (loom-run --threads), 1 by default so that ranks sharing a machine
// do not oversubscribe it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_BLAS_H
#define LOOM_RUNTIME_BLAS_H

namespace loom::rt {

void setBlasThreads(int threads);
int getBlasThreads();

} // namespace loom::rt

#endif // LOOM_RUNTIME_BLAS_H
