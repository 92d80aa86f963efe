//===- Data.h - Batch sources for the artifact inputs -----------*- C++ -*-===//
//
// A DataSource writes batch number k into the artifact's input buffers. Every
// batch is a pure function of (source, seed, k, rank), which is what makes a
// resumed run (k restored from the checkpoint) bitwise identical to an
// uninterrupted one, and what will let each data-parallel rank read its own
// slice without coordination.
//
// Sources (the `--data` flag):
//   synthetic     classify: x ~ N(0,1), y = argmax of a fixed random teacher
//                 MLP (features -> 64 relu -> classes); lm: uniform tokens.
//   text:PATH     the file's bytes are the tokens (needs vocab >= 256 unless
//                 the file's bytes are all below vocab).
//   tokens:PATH   little-endian uint16 tokens (nanoGPT's train.bin).
//   docs:PATH     documents (a directory's files or a JSONL's "text"
//                 fields) packed into one stream read like text:, with each
//                 token's document and position (docs/sequences.md).
//   synthetic-docs[:median=N,sigma=S,count=N]
//                 documents of lognormal lengths and uniform tokens.
// Task `none` takes only `synthetic`: whatever inputs such a model declares
// (e.g. the operand of a single-op gradient check) get seeded N(0,1) values
// if floating point and zeros if integer.
//
// Rows: batch k of rank r of R (B rows each) is rows [r*B, (r+1)*B) of
// global batch k, which has R*B rows; row i of it is global row
// g = (k*R + r)*B + i. Every row is a pure function of (seed, g), so R ranks
// with batch B see exactly the rows that one rank with batch R*B sees.
//
// Token windows: with T tokens per row and n tokens in the file there are
// nwin = (n - 1) / T windows; row g reads window w = g mod nwin: tokens
// data[w*T, w*T+T) and targets data[w*T+1, w*T+T+1). With shuffling, the
// window start is drawn uniformly from [0, n - T - 1] by a generator keyed
// on (seed, g).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_DATA_H
#define LOOM_RUNTIME_DATA_H

#include "loom/runtime/Error.h"
#include "loom/runtime/Manifest.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

class Artifact;
class Tensor;

struct DataOptions {
  /// "synthetic", "text:PATH", "tokens:PATH", "docs:PATH" or
  /// "synthetic-docs[:...]".
  std::string spec = "synthetic";
  uint64_t seed = 0;
  bool shuffle = false;
  /// Data-parallel position of this process; batches of different ranks are
  /// disjoint slices of the global batch sequence.
  int rank = 0;
  int worldSize = 1;
};

/// Where a batch goes. Pointers are null for inputs the task does not have.
struct BatchBuffers {
  int32_t *tokens = nullptr;  // lm: [batch, seq]
  int32_t *targets = nullptr; // lm: [batch, seq]
  void *x = nullptr;          // classify: [batch, features]
  bool xIsF64 = false;
  int32_t *y = nullptr;         // classify: [batch]
  int32_t *segments = nullptr;  // lm with documents: [batch, seq]
  int32_t *positions = nullptr; // lm with documents: [batch, seq]
  /// Task none: every declared input.
  std::vector<Tensor *> others;

  /// Binds to the artifact's input tensors; throws Error if the task's inputs
  /// are missing or mistyped.
  static BatchBuffers forArtifact(Artifact &artifact);
};

class DataSource {
public:
  virtual ~DataSource();
  /// Writes global batch `k` (0-based) into `out`.
  virtual void fill(int64_t k, const BatchBuffers &out) = 0;
  /// One line for logs, e.g. "text:corpus.txt (1.2M tokens, sequential)".
  virtual std::string describe() const = 0;
  /// Rows in one pass over the data read in order (token windows); 0 when
  /// the source has no end (synthetic data, shuffled windows).
  virtual int64_t rowsPerPass() const { return 0; }
  /// Documents: the lengths of the documents global batch `k` (every
  /// rank's rows) holds, in order, each cut only where the step's rows are
  /// not consecutive in the stream; empty for sources without documents.
  /// What the per-step planner (SequencePlan.h) places.
  virtual std::vector<int64_t> stepDocuments(int64_t k) const {
    (void)k;
    return {};
  }
};

/// Global row index of row `row` of batch `k` of this rank (see above);
/// throws Error for a batch whose rows do not fit in int64_t, whose index
/// would wrap negative and read before the data (a checkpoint's data
/// position is what k comes from).
inline int64_t globalRow(const DataOptions &options, int64_t k, int64_t batch,
                         int64_t row) {
  int64_t first = 0, end = 0;
  if (k < 0 ||
      __builtin_mul_overflow(k, static_cast<int64_t>(options.worldSize),
                             &first) ||
      __builtin_add_overflow(first, options.rank + 1, &end) ||
      __builtin_mul_overflow(end, batch, &end))
    fail("data position %lld is out of range (its rows would be past 2^63)",
         static_cast<long long>(k));
  return end - batch + row;
}

/// What is wrong with the form of a --data spec ("unknown data source
/// 'foo' ..."), or "" if it is one of the forms makeDataSource takes; the
/// tools check it when parsing the command line (a usage error), before
/// any file is read.
std::string dataSpecProblem(const std::string &spec);

/// Builds the source for `options.spec` and `task`; throws Error with a clear
/// message for unknown specs, unreadable files, too-short files, tokens out
/// of vocab, or a source the task cannot use.
std::unique_ptr<DataSource> makeDataSource(const DataOptions &options,
                                           const TaskSpec &task);

} // namespace loom::rt

#endif // LOOM_RUNTIME_DATA_H
