//===- Random.cpp - Counter-based deterministic random numbers --*- C++ -*-===//
//
// FNV-1a for names, SplitMix64 streams, Box-Muller normals.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Random.h"

#include <cmath>

namespace loom::rt {

uint64_t fnv1a64(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

CounterRng CounterRng::forName(uint64_t seed, const std::string &name) {
  return CounterRng(mix64(seed ^ fnv1a64(name)));
}

CounterRng CounterRng::substream(uint64_t index) const {
  // Hash (key, index) jointly so that neighbouring substreams do not overlap
  // as shifted copies of one SplitMix sequence.
  return CounterRng(mix64(key ^ mix64(index + 0x632BE59BD9B4E019ULL)));
}

double CounterRng::normal() {
  // 1 - u lies in (0, 1], so the log is finite.
  double u1 = 1.0 - uniform();
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

} // namespace loom::rt
