/*===- LinearArtifact.c - A hand-written artifact for cpu and cuda --------===*
 *
 * Linear regression trained with SGD, written the way compiled code is, so
 * that the runtime's GPU path can be tested without the compiler:
 *   r = x w - y,  loss = mean(r^2),  g = mean over ranks of (2/B) x^T r,
 *   w -= lr g
 * with x [B, F], y [B, 1], w [F, 1], all f64 (task none: the data source
 * fills x and y with seeded N(0,1) values).
 *
 * Built twice. LOOM_TEST_CUDA=0: a cpu artifact on host buffers (abi.h's
 * loom_rt_gemm_f64, malloc). LOOM_TEST_CUDA=1: a cuda artifact whose
 * arguments are device pointers and which uses only what MLIR's GPU
 * lowering emits plus the runtime's GPU services: the PTX of a kernel
 * loaded by a global constructor with mgpuModuleLoadJIT (as the LLVM IR
 * translation of gpu.binary does), mgpuStreamCreate/Synchronize/Destroy,
 * mgpuMemAlloc/Free, mgpuMemcpy, mgpuMemset32, mgpuModuleGetFunction,
 * mgpuLaunchKernel (12 arguments, as MLIR 22 declares it),
 * loom_rt_gpu_gemm_f64, and the loom_rt_* collectives (a synchronous
 * all-reduce and an asynchronous start/wait pair) on device buffers. The two
 * builds compute the same thing, so their trained weights must agree.
 *
 *===----------------------------------------------------------------------===*/

#include "loom/runtime/abi.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define B 8
#define F 4
static const double kLearningRate = 0.05;

#if LOOM_TEST_CUDA
/* The mgpu* signatures of MLIR 22's lowering (runtime/src/cuda/Mgpu.cpp). */
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream);

#include "ScalePtx.h"
static void *kernels;

__attribute__((constructor)) static void loadKernels(void) {
  kernels = mgpuModuleLoadJIT((void *)kScalePtx, 2);
}

__attribute__((destructor)) static void unloadKernels(void) {
  mgpuModuleUnload(kernels);
}

static void *stream;
#define GEMM loom_rt_gpu_gemm_f64

static double *allocate(size_t bytes) {
  return (double *)mgpuMemAlloc(bytes, stream, false);
}
static void release(void *ptr) { mgpuMemFree(ptr, stream); }
static void copyIn(double *device, const double *host, size_t bytes) {
  mgpuMemcpy(device, (void *)host, bytes, stream);
}
static void scale(double *p, double factor, long long n) {
  void *function = mgpuModuleGetFunction(kernels, "loom_scale");
  void *params[] = {&p, &factor, &n};
  mgpuLaunchKernel(function, 1, 1, 1, n, 1, 1, 0, stream, params, NULL, 3);
}
#else
#define GEMM loom_rt_gemm_f64
static double *allocate(size_t bytes) { return (double *)malloc(bytes); }
static void release(void *ptr) { free(ptr); }
static void copyIn(double *dst, const double *src, size_t bytes) {
  memcpy(dst, src, bytes);
}
static void scale(double *p, double factor, long long n) {
  for (long long i = 0; i < n; ++i)
    p[i] *= factor;
}
#endif

/* -I (B x B) and -lr I (F x F), made once, where the GEMMs read them. */
static double *negIdentity, *negLrIdentity;

static void makeConstants(void) {
  double host[B * B];
  memset(host, 0, sizeof(host));
  for (int i = 0; i < B; ++i)
    host[i * B + i] = -1;
  negIdentity = allocate(sizeof(host));
  copyIn(negIdentity, host, sizeof(host));
  double hostLr[F * F];
  memset(hostLr, 0, sizeof(hostLr));
  for (int i = 0; i < F; ++i)
    hostLr[i * F + i] = -kLearningRate;
  negLrIdentity = allocate(sizeof(hostLr));
  copyIn(negLrIdentity, hostLr, sizeof(hostLr));
}

#if !LOOM_TEST_CUDA
/* Freed when the runtime unloads the artifact (a leak to LeakSanitizer
   otherwise; scripts/sanitize.sh). The cuda build's go with the device. */
__attribute__((destructor)) static void releaseConstants(void) {
  release(negIdentity);
  release(negLrIdentity);
}
#endif

/* args: w (param), step, x, y (inputs), loss, lr (outputs). */
void loom_linear_train_step(void **args) {
  double *w = (double *)args[0];
  double *x = (double *)args[2], *y = (double *)args[3];
  double *loss = (double *)args[4], *lr = (double *)args[5];
#if LOOM_TEST_CUDA
  stream = mgpuStreamCreate();
#endif
  if (!negIdentity)
    makeConstants();
  double *r = allocate(B * sizeof(double));
  double *g = allocate(F * sizeof(double));
#if LOOM_TEST_CUDA
  mgpuMemset32(g, 0, F * 2, stream); /* overwritten below (beta 0) */
#endif
  /* r = -y, then r = x w + r */
  GEMM(1, 0, 0, B, 1, B, negIdentity, B, 0, y, 1, 0, 0.0, r, 1, 0);
  GEMM(1, 0, 0, B, 1, F, x, F, 0, w, 1, 0, 1.0, r, 1, 0);
  /* loss = r^T r / B */
  GEMM(1, 1, 0, 1, 1, B, r, 1, 0, r, 1, 0, 0.0, loss, 1, 0);
  scale(loss, 1.0 / B, 1);
  /* g = (2/B) x^T r, averaged over ranks while the learning rate is set */
  GEMM(1, 1, 0, F, 1, B, x, F, 0, r, 1, 0, 0.0, g, 1, 0);
  scale(g, 2.0 / B, F);
  int64_t pending = loom_rt_all_reduce_start(0, g, F, LOOM_F64, LOOM_MEAN);
  copyIn(lr, &kLearningRate, sizeof(double));
  loom_rt_wait(pending);
  loom_rt_all_reduce(0, loss, 1, LOOM_F64, LOOM_SUM); /* one rank: loss */
  /* w = -lr I g + w */
  GEMM(1, 0, 0, F, 1, F, negLrIdentity, F, 0, g, 1, 0, 1.0, w, 1, 0);
  release(r);
  release(g);
#if LOOM_TEST_CUDA
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
#endif
}
