//===- Compressors.h - Compressed averaging of one gradient -----*- C++ -*-===//
//
// Internal to the runtime. One gradient ("slot": a parameter's gradient seen
// as a rows x cols matrix, its last dimension being cols) averaged over the
// ranks with one of the candidate methods of docs/compression.md, with error
// feedback: what a rank's compression leaves out of its accumulated gradient
// (gradient + residual) is kept as its residual and added to the next step's
// gradient, so nothing is lost, only delayed.
//
//   fp32      plain all-reduce (the residual, if any, flushed in).
//   bf16      each rank's values rounded to bfloat16 and all-gathered.
//   powersgd  rank-r PowerSGD (Vogels et al. 2019): P = M Q, all-reduce P,
//             orthogonalise P, Q = M^T P, all-reduce Q, M ~ P Q^T; Q is
//             warm-started from the previous step (identical on every rank).
//   quant     b-bit quantisation with per-block scales shared by the ranks
//             (one max all-reduce of the scales), the codes summed by an
//             integer all-reduce of packed fields wide enough for the sum of
//             every rank's code (63 bits of a word used, so the sums never
//             overflow): an all-reduce, whatever the collective algorithm,
//             and exact in its sum.
//   topk      the k = ceil(d n) largest magnitudes, (index, value) pairs
//             all-gathered and summed.
//
// Every rank computes the same result bit for bit: reductions over ranks run
// in rank order (or are exact), and every choice depends only on data the
// ranks share.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMPRESS_COMPRESSORS_H
#define LOOM_RUNTIME_SRC_COMPRESS_COMPRESSORS_H

#include "loom/runtime/CompressionWire.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt {

class Communicator;

/// The method family's name ("powersgd"), as loomc's --compress spells it.
const char *methodName(CompressMethod method);
std::optional<CompressMethod> parseMethodName(const std::string &name);

/// Why `c` cannot compress a rows x cols gradient ("" if it can): PowerSGD's
/// rank above the smaller dimension, or no smaller than plain sending
/// (r (rows + cols) must be at most half of rows x cols: its minimum
/// compression rate), bits outside {2, 4, 8}, a density outside (0, 1].
std::string whyNotApplicable(const Candidate &c, int64_t rows, int64_t cols);

/// What one gradient keeps between steps.
struct SlotState {
  int64_t rows = 0, cols = 0;
  /// Where the ranks' initial PowerSGD Q comes from: the same on every rank.
  uint64_t seed = 0;
  /// Error feedback: what compression has left out so far (empty: zeros).
  std::vector<float> residual;
  /// PowerSGD's Q (cols x qRank, row-major), warm-started step to step.
  std::vector<float> q;
  int qRank = 0;
};

/// In place: `grad` (rows x cols, this rank's) becomes the mean over the
/// ranks of their compressed accumulated gradients; `slot`'s residual (and
/// Q) updated. Collective: every rank calls it with the same `c` and slot.
void averageCompressed(Communicator &comm, const Candidate &c, SlotState &slot,
                       float *grad);

/// What this rank alone would send of accumulated gradient `m` with `c`
/// (`out`, rows x cols), without communicating: for measuring each
/// candidate's error. PowerSGD runs two power iterations from a fixed
/// start; quantisation uses this rank's own scales.
void compressLocally(const Candidate &c, const SlotState &slot, const float *m,
                     float *out);

/// The accumulated gradient: `grad` + the slot's residual, into `out`.
void accumulate(const SlotState &slot, const float *grad, float *out);

/// Squared L2 distance of two n-element arrays, summed in double.
double squaredError(const float *a, const float *b, int64_t n);

/// PowerSGD's first Q for a gradient of `cols` columns at rank `r` (cols x
/// r, row-major): uniform in [-1, 1) from `seed`, the same on every rank.
std::vector<float> powerSgdStartQ(uint64_t seed, int64_t cols, int r);

/// bfloat16 rounding (to nearest, ties to even; NaN kept a NaN).
uint16_t toBf16(float value);
float fromBf16(uint16_t bits);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMPRESS_COMPRESSORS_H
