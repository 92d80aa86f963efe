//===- SoftmaxArtifact.c - A hand-written stand-in artifact -------*- C -*-===//
//
// What loomc would emit for softmax regression (W [C, F], b [C]) with SGD +
// momentum, written by hand against abi.h so the runtime's loader, trainer
// and gradient checker can be tested without the compiler. Like compiled
// code it gets temporaries from _mlir_memref_to_llvm_alloc and matrix
// products from loom_rt_gemm_*, which the loading process must provide.
//
// Variants (compile definitions): LOOM_TEST_F64 selects the element type;
// LOOM_TEST_BAD_GRAD scales dW by 1.1 so gradcheck must fail;
// LOOM_TEST_NAN_AT_STEP makes train_step report a NaN loss at that step.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/abi.h"

#include <math.h>
#include <string.h>

#if LOOM_TEST_F64
typedef double real;
#define GEMM loom_rt_gemm_f64
#else
typedef float real;
#define GEMM loom_rt_gemm_f32
#endif

enum { B = 16, F = 8, C = 4 };

static const double kBaseLr = 0.2;
static const double kMomentum = 0.9;
static const int64_t kWarmup = 5;

/// Loss of the batch; if dW/db are given, also the gradients of the mean loss.
static real lossAndGrad(const real *W, const real *b, const real *x,
                        const int32_t *y, real *dW, real *db) {
  real *logits = (real *)_mlir_memref_to_llvm_alloc(sizeof(real) * B * C);
  // logits[B, C] = x[B, F] * W[C, F]^T
  GEMM(1, 0, 1, B, C, F, x, F, 0, W, F, 0, 0, logits, C, 0);
  double total = 0;
  for (int i = 0; i < B; ++i) {
    real *row = logits + i * C;
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < C; ++c) {
      row[c] += b[c];
      if (row[c] > max)
        max = row[c];
    }
    for (int c = 0; c < C; ++c)
      sum += exp(row[c] - max);
    total += max + log(sum) - row[y[i]];
    // row becomes dloss/dlogits of the mean loss.
    for (int c = 0; c < C; ++c)
      row[c] = (real)((exp(row[c] - max) / sum - (c == y[i])) / B);
  }
  if (dW) {
    // dW[C, F] = dlogits[B, C]^T * x[B, F]
    GEMM(1, 1, 0, C, F, B, logits, C, 0, x, F, 0, 0, dW, F, 0);
#if LOOM_TEST_BAD_GRAD
    for (int i = 0; i < C * F; ++i)
      dW[i] *= (real)1.1;
#endif
    for (int c = 0; c < C; ++c) {
      db[c] = 0;
      for (int i = 0; i < B; ++i)
        db[c] += logits[i * C + c];
    }
  }
  _mlir_memref_to_llvm_free(logits);
  return (real)(total / B);
}

// args: W, b, x, y, loss
void loom_loss(void **args) {
  *(real *)args[4] = lossAndGrad(args[0], args[1], args[2], args[3], 0, 0);
}

// args: W, b, x, y, loss, grad:W, grad:b
void loom_loss_and_grad(void **args) {
  *(real *)args[4] =
      lossAndGrad(args[0], args[1], args[2], args[3], args[5], args[6]);
}

// args: W, b, W.momentum_buffer, b.momentum_buffer, step, x, y,
//       loss, lr, grad_norm
void loom_train_step(void **args) {
  real *W = args[0], *b = args[1], *mW = args[2], *mb = args[3];
  int64_t step = *(int64_t *)args[4];
  real *dW = (real *)_mlir_memref_to_llvm_alloc(sizeof(real) * C * F);
  real *db = (real *)_mlir_memref_to_llvm_alloc(sizeof(real) * C);
  real loss = lossAndGrad(W, b, args[5], args[6], dW, db);
  double lr = kBaseLr * (step < kWarmup ? (double)step / kWarmup : 1.0);
  double norm = 0;
  for (int i = 0; i < C * F; ++i)
    norm += (double)dW[i] * dW[i];
  for (int c = 0; c < C; ++c)
    norm += (double)db[c] * db[c];
  for (int i = 0; i < C * F; ++i) {
    mW[i] = (real)(kMomentum * mW[i] + dW[i]);
    W[i] -= (real)(lr * mW[i]);
  }
  for (int c = 0; c < C; ++c) {
    mb[c] = (real)(kMomentum * mb[c] + db[c]);
    b[c] -= (real)(lr * mb[c]);
  }
#ifdef LOOM_TEST_NAN_AT_STEP
  if (step >= LOOM_TEST_NAN_AT_STEP)
    loss = (real)NAN;
#endif
  *(real *)args[7] = loss;
  *(real *)args[8] = (real)lr;
  *(real *)args[9] = (real)sqrt(norm);
  _mlir_memref_to_llvm_free(db);
  _mlir_memref_to_llvm_free(dW);
}
