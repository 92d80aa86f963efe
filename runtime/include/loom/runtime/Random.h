//===- Random.h - Counter-based deterministic random numbers ----*- C++ -*-===//
//
// Initial values and synthetic data must be identical on every process and
// every rank, independent of thread count or call order. A counter-based
// generator gives that: value i of stream (seed, name) is a pure function
// mix(key + i), so any element can be computed on its own.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_RANDOM_H
#define LOOM_RUNTIME_RANDOM_H

#include <cstdint>
#include <string>

namespace loom::rt {

/// 64-bit FNV-1a of `text`.
uint64_t fnv1a64(const std::string &text);

/// The SplitMix64 finaliser: a bijective, well-mixing 64-bit hash.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// A stream of 64-bit values; the i-th draw is mix64(key + (i+1)*golden), i.e.
/// SplitMix64 started at `key`, so streams can be indexed randomly.
class CounterRng {
public:
  explicit CounterRng(uint64_t key) : key(key) {}
  /// Key of the stream named `name` under run seed `seed`.
  static CounterRng forName(uint64_t seed, const std::string &name);
  /// Key of a sub-stream, e.g. one per batch: pure function of (key, index).
  CounterRng substream(uint64_t index) const;

  /// The value at position `index` of the stream.
  uint64_t at(uint64_t index) const {
    return mix64(key + (index + 1) * 0x9E3779B97F4A7C15ULL);
  }
  uint64_t next() { return at(counter++); }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return (next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n > 0 (multiply-shift; bias < n / 2^64).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >>
                                 64);
  }
  /// Standard normal via Box-Muller (uses two draws per value so that each
  /// value depends only on its own position).
  double normal();

  uint64_t position() const { return counter; }
  void seek(uint64_t position) { counter = position; }

private:
  uint64_t key;
  uint64_t counter = 0;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_RANDOM_H
