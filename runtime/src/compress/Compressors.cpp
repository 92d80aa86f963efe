//===- Compressors.cpp - Compressed averaging of one gradient ---*- C++ -*-===//
#include "compress/Compressors.h"

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace loom::rt {

using namespace wire;

namespace {

int64_t elementsOf(const SlotState &slot) { return slot.rows * slot.cols; }

/// C (m x n) = op(A) op(B), row-major, single precision.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, const float *b, float *c) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0f,
              a, transA ? int(m) : int(k), b, transB ? int(k) : int(n), 0.0f, c,
              int(n));
}

/// Modified Gram-Schmidt on the columns of p (rows x r, row-major), sums in
/// double. A column that vanishes stays zero (it then carries nothing).
void orthogonalise(float *p, int64_t rows, int r) {
  for (int j = 0; j < r; ++j) {
    for (int k = 0; k < j; ++k) {
      double dot = 0;
      for (int64_t i = 0; i < rows; ++i)
        dot += double(p[i * r + k]) * p[i * r + j];
      for (int64_t i = 0; i < rows; ++i)
        p[i * r + j] -= float(dot) * p[i * r + k];
    }
    double norm = 0;
    for (int64_t i = 0; i < rows; ++i)
      norm += double(p[i * r + j]) * p[i * r + j];
    norm = std::sqrt(norm);
    float scale = norm > 1e-30 ? float(1 / norm) : 0.0f;
    for (int64_t i = 0; i < rows; ++i)
      p[i * r + j] *= scale;
  }
}

} // namespace

/// Uniform in [-1, 1) from splitmix64 of `seed`.
std::vector<float> powerSgdStartQ(uint64_t seed, int64_t cols, int r) {
  std::vector<float> q(static_cast<size_t>(cols * r));
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (float &v : q) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = float(double(z >> 40) / double(1ull << 23) - 1.0);
  }
  return q;
}

namespace {

/// One PowerSGD power iteration on m (rows x cols) at rank r: P = m Q,
/// reduce(P), orthogonalise P, Q = m^T P, reduce(Q); `reduce` averages
/// over the ranks (or, measuring locally, does nothing).
template <typename Reduce>
void powerIteration(const float *m, int64_t rows, int64_t cols, int r, float *p,
                    float *q, Reduce reduce) {
  gemm(false, false, rows, r, cols, m, q, p);
  reduce(p, rows * r);
  orthogonalise(p, rows, r);
  gemm(true, false, cols, r, rows, m, p, q);
  reduce(q, cols * r);
}

/// m ~ P Q^T with Q refined from `q` by `iterations` power iterations,
/// locally (no communication).
void lowRankLocally(const float *m, int64_t rows, int64_t cols, int r,
                    std::vector<float> q, int iterations, float *out) {
  std::vector<float> p(static_cast<size_t>(rows * r));
  for (int it = 0; it < iterations; ++it)
    powerIteration(m, rows, cols, r, p.data(), q.data(),
                   [](float *, int64_t) {});
  gemm(false, true, rows, cols, r, p.data(), q.data(), out);
}

void averagePowerSgd(Communicator &comm, const Candidate &c, SlotState &slot,
                     float *m) {
  const int64_t rows = slot.rows, cols = slot.cols;
  const int r = effectiveRank(c, rows, cols);
  if (slot.qRank != r) {
    slot.q = powerSgdStartQ(slot.seed, cols, r);
    slot.qRank = r;
  }
  std::vector<float> p(static_cast<size_t>(rows * r));
  powerIteration(m, rows, cols, r, p.data(), slot.q.data(),
                 [&comm](float *x, int64_t n) {
                   comm.allReduce(x, n, DType::F32, ReduceOp::Mean);
                 });
  // residual = m - P Q^T; the result is P Q^T, the same on every rank.
  std::vector<float> approx(static_cast<size_t>(rows * cols));
  gemm(false, true, rows, cols, r, p.data(), slot.q.data(), approx.data());
  slot.residual.resize(size_t(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    slot.residual[i] = m[i] - approx[i];
    m[i] = approx[i];
  }
}

/// Per-block absolute maxima of m (the scales before the ranks agree).
std::vector<float> blockMaxima(const float *m, int64_t n) {
  std::vector<float> scales(size_t(quantBlocks(n)), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    float &s = scales[size_t(i / kQuantBlock)];
    s = std::max(s, std::fabs(m[i]));
  }
  return scales;
}

/// The code of x in [-L, L] at scale s, and the value a code stands for.
int64_t quantCode(float x, float s, int64_t levels) {
  if (!(s > 0))
    return 0;
  double code = std::nearbyint(double(x) / s * double(levels));
  return static_cast<int64_t>(
      std::clamp<double>(code, -double(levels), double(levels)));
}
float dequantised(int64_t code, float s, int64_t levels) {
  return float(code) * (s / float(levels));
}

void averageQuant(Communicator &comm, const Candidate &c, SlotState &slot,
                  float *m) {
  const int64_t n = elementsOf(slot);
  const int ranks = comm.size();
  const int64_t levels = quantLevels(c.bits);
  const int width = fieldBits(c.bits, ranks);
  const int64_t perWord = fieldsPerWord(c.bits, ranks);
  std::vector<float> scales = blockMaxima(m, n);
  comm.allReduce(scales.data(), int64_t(scales.size()), DType::F32,
                 ReduceOp::Max);
  std::vector<int64_t> words(size_t(quantWords(n, c.bits, ranks)), 0);
  slot.residual.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    float s = scales[size_t(i / kQuantBlock)];
    int64_t code = quantCode(m[i], s, levels);
    slot.residual[i] = m[i] - dequantised(code, s, levels);
    uint64_t field = uint64_t(code + levels);
    words[size_t(i / perWord)] |= int64_t(field << (width * int(i % perWord)));
  }
  // Each field's sum over ranks fits its width, so the integer sum of the
  // words is the sum of each field: no carry crosses a field.
  comm.allReduce(words.data(), int64_t(words.size()), DType::I64,
                 ReduceOp::Sum);
  const uint64_t mask = (uint64_t(1) << width) - 1;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t word = uint64_t(words[size_t(i / perWord)]);
    int64_t sum = int64_t((word >> (width * int(i % perWord))) & mask);
    float s = scales[size_t(i / kQuantBlock)];
    m[i] = dequantised(sum - ranks * levels, s, levels) / float(ranks);
  }
}

/// Top-k's indices of m (the k largest magnitudes; ties to the lower index).
std::vector<int64_t> topKIndices(const float *m, int64_t n, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    order[size_t(i)] = i;
  auto larger = [m](int64_t a, int64_t b) {
    float fa = std::fabs(m[a]), fb = std::fabs(m[b]);
    return fa != fb ? fa > fb : a < b;
  };
  std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), larger);
  order.resize(size_t(k));
  std::sort(order.begin(), order.end());
  return order;
}

void averageTopK(Communicator &comm, const Candidate &c, SlotState &slot,
                 float *m) {
  const int64_t n = elementsOf(slot);
  const int ranks = comm.size();
  const int64_t k = topKCount(c.density, n);
  std::vector<int64_t> mine(static_cast<size_t>(k));
  slot.residual.assign(m, m + n);
  std::vector<int64_t> chosen = topKIndices(m, n, k);
  for (int64_t j = 0; j < k; ++j) {
    int64_t i = chosen[size_t(j)];
    uint32_t bits;
    std::memcpy(&bits, &m[i], sizeof bits);
    mine[size_t(j)] = int64_t((uint64_t(i) << 32) | bits);
    slot.residual[size_t(i)] = 0;
  }
  std::vector<int64_t> all(static_cast<size_t>(k * ranks));
  comm.allGather(mine.data(), all.data(), k, DType::I64);
  std::fill(m, m + n, 0.0f);
  for (int64_t pair : all) {
    uint32_t bits = uint32_t(uint64_t(pair) & 0xffffffffu);
    float value;
    std::memcpy(&value, &bits, sizeof value);
    m[uint64_t(pair) >> 32] += value;
  }
  for (int64_t i = 0; i < n; ++i)
    m[i] /= float(ranks);
}

void averageBf16(Communicator &comm, SlotState &slot, float *m) {
  const int64_t n = elementsOf(slot);
  const int ranks = comm.size();
  const int64_t words = (n + 3) / 4;
  std::vector<int64_t> mine(size_t(words), 0);
  slot.residual.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    uint16_t b = toBf16(m[i]);
    slot.residual[size_t(i)] = m[i] - fromBf16(b);
    mine[size_t(i / 4)] |= int64_t(uint64_t(b) << (16 * (i % 4)));
  }
  std::vector<int64_t> all(static_cast<size_t>(words * ranks));
  comm.allGather(mine.data(), all.data(), words, DType::I64);
  std::fill(m, m + n, 0.0f);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < n; ++i) {
      uint64_t word = uint64_t(all[size_t(r * words + i / 4)]);
      m[i] += fromBf16(uint16_t(word >> (16 * (i % 4))));
    }
  for (int64_t i = 0; i < n; ++i)
    m[i] /= float(ranks);
}

} // namespace

std::string Candidate::name() const {
  std::string family = methodName(method);
  switch (method) {
  case CompressMethod::PowerSGD:
    return family + ":rank=" + std::to_string(rank);
  case CompressMethod::Quant:
    return family + ":bits=" + std::to_string(bits);
  case CompressMethod::TopK:
    return family + formatString(":density=%g", density);
  case CompressMethod::Fp32:
  case CompressMethod::Bf16:
    break;
  }
  return family;
}

const char *methodName(CompressMethod method) {
  switch (method) {
  case CompressMethod::Fp32:
    return "fp32";
  case CompressMethod::Bf16:
    return "bf16";
  case CompressMethod::PowerSGD:
    return "powersgd";
  case CompressMethod::Quant:
    return "quant";
  case CompressMethod::TopK:
    return "topk";
  }
  return "?";
}

std::optional<CompressMethod> parseMethodName(const std::string &name) {
  for (CompressMethod m :
       {CompressMethod::Fp32, CompressMethod::Bf16, CompressMethod::PowerSGD,
        CompressMethod::Quant, CompressMethod::TopK})
    if (name == methodName(m))
      return m;
  return std::nullopt;
}

std::string whyNotApplicable(const Candidate &c, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  switch (c.method) {
  case CompressMethod::Fp32:
  case CompressMethod::Bf16:
    return "";
  case CompressMethod::PowerSGD: {
    if (c.rank < 1)
      return formatString("rank %d is not positive", c.rank);
    int64_t smaller = std::min(rows, cols);
    if (c.rank > smaller)
      return formatString("rank %d is above the gradient's smaller dimension "
                          "%lld",
                          c.rank, static_cast<long long>(smaller));
    if (!powerSgdShrinks(c.rank, rows, cols))
      return formatString("rank %d sends %lld values, more than half of the "
                          "%lld it replaces",
                          c.rank,
                          static_cast<long long>(c.rank * (rows + cols)),
                          static_cast<long long>(n));
    return "";
  }
  case CompressMethod::Quant:
    if (c.bits != 2 && c.bits != 4 && c.bits != 8)
      return formatString("%d bits is not one of 2, 4, 8", c.bits);
    return "";
  case CompressMethod::TopK:
    if (!(c.density > 0 && c.density <= 1))
      return formatString("density %g is outside (0, 1]", c.density);
    if (n >= (int64_t(1) << 32))
      return "top-k indices are 32-bit: the gradient has 2^32 elements or "
             "more";
    return "";
  }
  return "unknown method";
}

void accumulate(const SlotState &slot, const float *grad, float *out) {
  const int64_t n = elementsOf(slot);
  if (slot.residual.empty()) {
    std::copy(grad, grad + n, out);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = grad[i] + slot.residual[size_t(i)];
}

void averageCompressed(Communicator &comm, const Candidate &c, SlotState &slot,
                       float *grad) {
  accumulate(slot, grad, grad);
  switch (c.method) {
  case CompressMethod::Fp32:
    comm.allReduce(grad, elementsOf(slot), DType::F32, ReduceOp::Mean);
    slot.residual.clear(); // all of it sent
    return;
  case CompressMethod::Bf16:
    return averageBf16(comm, slot, grad);
  case CompressMethod::PowerSGD:
    return averagePowerSgd(comm, c, slot, grad);
  case CompressMethod::Quant:
    return averageQuant(comm, c, slot, grad);
  case CompressMethod::TopK:
    return averageTopK(comm, c, slot, grad);
  }
}

void compressLocally(const Candidate &c, const SlotState &slot, const float *m,
                     float *out) {
  const int64_t n = elementsOf(slot);
  switch (c.method) {
  case CompressMethod::Fp32:
    std::copy(m, m + n, out);
    return;
  case CompressMethod::Bf16:
    for (int64_t i = 0; i < n; ++i)
      out[i] = fromBf16(toBf16(m[i]));
    return;
  case CompressMethod::PowerSGD: {
    int r = effectiveRank(c, slot.rows, slot.cols);
    lowRankLocally(m, slot.rows, slot.cols, r,
                   powerSgdStartQ(slot.seed, slot.cols, r), 2, out);
    return;
  }
  case CompressMethod::Quant: {
    std::vector<float> scales = blockMaxima(m, n);
    int64_t levels = quantLevels(c.bits);
    for (int64_t i = 0; i < n; ++i) {
      float s = scales[size_t(i / kQuantBlock)];
      out[i] = dequantised(quantCode(m[i], s, levels), s, levels);
    }
    return;
  }
  case CompressMethod::TopK: {
    std::fill(out, out + n, 0.0f);
    for (int64_t i : topKIndices(m, n, topKCount(c.density, n)))
      out[i] = m[i];
    return;
  }
  }
}

double squaredError(const float *a, const float *b, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = double(a[i]) - double(b[i]);
    sum += d * d;
  }
  return sum;
}

uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

float fromBf16(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

} // namespace loom::rt
