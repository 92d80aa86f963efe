/* A hand-written data-parallel artifact (what loomc --dp=N emits, reduced to
 * softmax regression), so the runtime's multi-rank paths can be tested
 * without the compiler. f64, W [C, F] and b [C], SGD with momentum 0.9 and
 * lr 0.1. Compile definitions: BATCH (rows per rank), RANKS (the mesh
 * size); COLLECTIVES 0 (none),
 * 1 (gradients averaged with loom_rt_all_reduce MEAN), 2 (the same through
 * loom_rt_reduce_scatter MEAN + loom_rt_all_gather, and the params
 * broadcast from rank 0 at step 1, which changes nothing). */
#include "loom/runtime/abi.h"

#include <math.h>
#include <string.h>

enum { F = 8, C = 4, N = C * F + C };

/* Gradients padded so that reduce_scatter splits them evenly over RANKS. */
#define PADDED ((N + RANKS - 1) / RANKS * RANKS)

static void averageOverRanks(double *grad) {
#if COLLECTIVES == 1
  loom_rt_all_reduce(0, grad, N, LOOM_F64, LOOM_MEAN);
#elif COLLECTIVES == 2
  double slice[PADDED / RANKS];
  loom_rt_reduce_scatter(0, grad, slice, PADDED / RANKS, LOOM_F64, LOOM_MEAN);
  loom_rt_all_gather(0, slice, grad, PADDED / RANKS, LOOM_F64);
#else
  (void)grad;
#endif
}

/* args: W, b, W.momentum_buffer, b.momentum_buffer, step, x, y, loss, lr,
 * grad_norm */
void loom_train_step(void **args) {
  double *W = args[0], *b = args[1], *mW = args[2], *mb = args[3];
  int64_t step = *(int64_t *)args[4];
  const double *x = args[5];
  const int32_t *y = args[6];
#if COLLECTIVES == 2
  if (step == 1) {
    loom_rt_broadcast(0, W, C * F, LOOM_F64, 0);
    loom_rt_broadcast(0, b, C, LOOM_F64, 0);
  }
#endif
  double grad[PADDED] = {0};
  double *dW = grad, *db = grad + C * F;
  double total = 0;
  for (int i = 0; i < BATCH; ++i) {
    double logits[C], max = -INFINITY, sum = 0;
    for (int c = 0; c < C; ++c) {
      logits[c] = b[c];
      for (int f = 0; f < F; ++f)
        logits[c] += W[c * F + f] * x[i * F + f];
      if (logits[c] > max)
        max = logits[c];
    }
    for (int c = 0; c < C; ++c)
      sum += exp(logits[c] - max);
    total += max + log(sum) - logits[y[i]];
    for (int c = 0; c < C; ++c) {
      double d = (exp(logits[c] - max) / sum - (c == y[i])) / BATCH;
      db[c] += d;
      for (int f = 0; f < F; ++f)
        dW[c * F + f] += d * x[i * F + f];
    }
  }
  averageOverRanks(grad);
  double norm = 0;
  for (int i = 0; i < N; ++i)
    norm += grad[i] * grad[i];
  for (int i = 0; i < C * F; ++i) {
    mW[i] = 0.9 * mW[i] + dW[i];
    W[i] -= 0.1 * mW[i];
  }
  for (int c = 0; c < C; ++c) {
    mb[c] = 0.9 * mb[c] + db[c];
    b[c] -= 0.1 * mb[c];
  }
  *(double *)args[7] = total / BATCH;
  *(double *)args[8] = 0.1;
  *(double *)args[9] = sqrt(norm);
  (void)step;
}
