//===- BigramArtifact.c - A hand-written stand-in LM artifact -----*- C -*-===//
//
// A bigram language model (logits of the next token = row `token` of
// W [V, V]) trained by plain SGD, written by hand against abi.h. It has the
// `lm` task's inputs and no optimizer state, so the tests cover token-file
// data, resumes that depend on the data position, and empty optimizer files.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/abi.h"

#include <math.h>

enum { B = 4, T = 16, V = 256 };

static const double kLr = 20.0;

/// Mean cross-entropy of the batch; if dW is given, adds the gradient of the
/// mean loss to it (it must be zeroed first).
static double lossAndGrad(const float *W, const int32_t *tokens,
                          const int32_t *targets, float *dW) {
  double total = 0;
  double *probs = (double *)_mlir_memref_to_llvm_alloc(sizeof(double) * V);
  for (int n = 0; n < B * T; ++n) {
    const float *row = W + tokens[n] * V;
    double max = -INFINITY, sum = 0;
    for (int v = 0; v < V; ++v)
      if (row[v] > max)
        max = row[v];
    for (int v = 0; v < V; ++v)
      sum += (probs[v] = exp(row[v] - max));
    total += max + log(sum) - row[targets[n]];
    if (dW)
      for (int v = 0; v < V; ++v)
        dW[tokens[n] * V + v] +=
            (float)((probs[v] / sum - (v == targets[n])) / (B * T));
  }
  _mlir_memref_to_llvm_free(probs);
  return total / (B * T);
}

// args: W, step, tokens, targets, loss, lr, grad_norm
void loom_train_step(void **args) {
  float *W = args[0];
  float *dW = (float *)_mlir_memref_to_llvm_alloc(sizeof(float) * V * V);
  for (int i = 0; i < V * V; ++i)
    dW[i] = 0;
  double loss = lossAndGrad(W, args[2], args[3], dW);
  double norm = 0;
  for (int i = 0; i < V * V; ++i) {
    norm += (double)dW[i] * dW[i];
    W[i] -= (float)(kLr * dW[i]);
  }
  *(float *)args[4] = (float)loss;
  *(float *)args[5] = (float)kLr;
  *(float *)args[6] = (float)sqrt(norm);
  _mlir_memref_to_llvm_free(dW);
}
