//===- CompressionWire.h - What a compressed averaging sends ----*- C++ -*-===//
//
// The methods of gradient compression and the bytes one averaging sends,
// header-only: the runtime's compressors and L-GreCo's cost rule use it,
// and so does loomc, to choose CO2's local steps for a compressed outer
// round. One model for both, so the compiler's estimate is the runtime's
// plan's count. See docs/compression.md.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_COMPRESSIONWIRE_H
#define LOOM_RUNTIME_COMPRESSIONWIRE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace loom::rt {

enum class CompressMethod { Fp32, Bf16, PowerSGD, Quant, TopK };

/// One method with its parameter.
struct Candidate {
  CompressMethod method = CompressMethod::Fp32;
  /// PowerSGD's rank.
  int rank = 0;
  /// Quantisation's bits: 2, 4 or 8.
  int bits = 0;
  /// Top-k's density, in (0, 1].
  double density = 0;

  static Candidate fp32() { return {}; }
  static Candidate bf16() { return {CompressMethod::Bf16}; }
  static Candidate powerSgd(int r) { return {CompressMethod::PowerSGD, r}; }
  static Candidate quant(int b) { return {CompressMethod::Quant, 0, b}; }
  static Candidate topK(double d) { return {CompressMethod::TopK, 0, 0, d}; }

  /// "fp32", "bf16", "powersgd:rank=4", "quant:bits=4", "topk:density=0.01"
  /// (defined in the runtime).
  std::string name() const;
  bool operator==(const Candidate &other) const {
    return method == other.method && rank == other.rank && bits == other.bits &&
           density == other.density;
  }
};

/// Elements per quantisation scale.
constexpr int64_t kQuantBlock = 256;

namespace wire {

/// PowerSGD's rank for a rows x cols gradient.
inline int effectiveRank(const Candidate &c, int64_t rows, int64_t cols) {
  return static_cast<int>(std::min<int64_t>(c.rank, std::min(rows, cols)));
}

inline int64_t topKCount(double density, int64_t n) {
  auto k = static_cast<int64_t>(std::ceil(density * static_cast<double>(n)));
  return std::clamp<int64_t>(k, 1, n);
}

/// Quantisation: the largest code magnitude, and the bits of one packed
/// field, wide enough for the sum over `ranks` of codes in [0, 2 L].
inline int64_t quantLevels(int bits) { return (int64_t(1) << (bits - 1)) - 1; }
inline int fieldBits(int bits, int ranks) {
  uint64_t largest = static_cast<uint64_t>(ranks) * 2 * quantLevels(bits);
  int width = 1;
  while ((largest >> width) != 0)
    ++width;
  return width;
}
/// Fields per 64-bit word, the sign bit left out: the words' sum over the
/// ranks then stays below 2^63 and never overflows the signed integers the
/// all-reduce adds.
inline int64_t fieldsPerWord(int bits, int ranks) {
  return 63 / fieldBits(bits, ranks);
}
inline int64_t quantWords(int64_t n, int bits, int ranks) {
  int64_t perWord = fieldsPerWord(bits, ranks);
  return (n + perWord - 1) / perWord;
}
inline int64_t quantBlocks(int64_t n) {
  return (n + kQuantBlock - 1) / kQuantBlock;
}

/// PowerSGD's minimum compression rule (Vogels et al.): rank r sends
/// r (rows + cols) values, which must be at most half of rows x cols.
inline bool powerSgdShrinks(int rank, int64_t rows, int64_t cols) {
  return 2 * int64_t(rank) * (rows + cols) <= rows * cols;
}

/// What one rank sends of a ring all-reduce of `bytes`.
inline double allReduceWire(double bytes, int ranks) {
  return 2 * bytes * (ranks - 1) / ranks;
}

} // namespace wire

/// The bytes one rank sends for one averaging of a rows x cols gradient with
/// `c` over `ranks` ranks, with the ring model of the collectives (an
/// all-reduce of B bytes: 2 B (p - 1) / p; an all-gather of B bytes from
/// each rank: B (p - 1)). 0 on one rank.
inline double wireBytes(const Candidate &c, int64_t rows, int64_t cols,
                        int ranks) {
  using namespace wire;
  if (ranks <= 1)
    return 0;
  const int64_t n = rows * cols;
  switch (c.method) {
  case CompressMethod::Fp32:
    return allReduceWire(4.0 * n, ranks);
  case CompressMethod::Bf16:
    return 8.0 * double((n + 3) / 4) * (ranks - 1);
  case CompressMethod::PowerSGD:
    return allReduceWire(4.0 * effectiveRank(c, rows, cols) * (rows + cols),
                         ranks);
  case CompressMethod::Quant:
    return allReduceWire(
        4.0 * quantBlocks(n) + 8.0 * quantWords(n, c.bits, ranks), ranks);
  case CompressMethod::TopK:
    return 8.0 * topKCount(c.density, n) * (ranks - 1);
  }
  return 0;
}

/// The collectives one averaging issues (each costs the link's latency).
inline int collectivesPerAveraging(const Candidate &c) {
  return c.method == CompressMethod::PowerSGD ||
                 c.method == CompressMethod::Quant
             ? 2
             : 1;
}

} // namespace loom::rt

#endif // LOOM_RUNTIME_COMPRESSIONWIRE_H
