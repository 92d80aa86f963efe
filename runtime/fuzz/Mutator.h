//===- Mutator.h - Seeded mutations of a fuzz corpus ------------*- C++ -*-===//
//
// The input generator of FuzzMain.cpp, the driver used when the compiler has
// no libFuzzer. It has no coverage feedback, so its mutations aim at what
// the readers parse: bytes and little-endian integers (the safetensors
// length field), JSON text (numbers replaced by extreme ones, strings by
// other strings of the corpus, nesting), and chunks moved within and between
// inputs. A file that starts with its own length is mostly mutated inside
// that length, with the field kept consistent, so that mutants get past the
// first check. Everything derives from one seed: a run is reproducible.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_FUZZ_MUTATOR_H
#define LOOM_RUNTIME_FUZZ_MUTATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::fuzz {

using Bytes = std::vector<uint8_t>;

class Mutator {
public:
  /// `corpus` must outlive the mutator and may be empty.
  Mutator(uint64_t seed, const std::vector<Bytes> &corpus, size_t maxLen);

  /// A mutant of a randomly chosen corpus input, at most maxLen bytes.
  Bytes next();

  /// For targets with a mutator of their own (LLVMFuzzerCustomMutator): a
  /// randomly chosen corpus input (empty if none), the next random number,
  /// and a few byte-level mutations of `data` (LLVMFuzzerMutate).
  const Bytes &pick();
  uint64_t random();
  void mutate(Bytes &data);

private:
  /// Uniform in [0, n); 0 when n is 0.
  size_t below(size_t n);

  void mutateOnce(Bytes &data);
  void insert(Bytes &data, size_t at, const Bytes &chunk);
  void writeInteger(Bytes &data);
  void replaceNumber(Bytes &data);
  void replaceString(Bytes &data);
  void splice(Bytes &data);

  uint64_t state;
  const std::vector<Bytes> &corpus;
  size_t maxLen;
  /// Quoted strings and tokens worth inserting: built in plus every JSON
  /// string of the corpus (field names, dtypes, tensor names).
  std::vector<Bytes> dictionary;
  /// Numbers at the edges of int64, uint64, double and the readers' caps.
  std::vector<Bytes> numbers;
};

} // namespace loom::fuzz

#endif // LOOM_RUNTIME_FUZZ_MUTATOR_H
