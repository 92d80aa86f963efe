//===- Documents.h - Rows packed with documents -----------------*- C++ -*-===//
//
// Internal to the runtime: the `--data docs:PATH` and `--data
// synthetic-docs[:...]` sources, and the windowing that the token-file
// sources share with them (Data.h, "Token windows").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_DOCUMENTS_H
#define LOOM_RUNTIME_SRC_DOCUMENTS_H

#include "loom/runtime/Data.h"

#include <cstdint>
#include <vector>

namespace loom::rt {

/// The windows of `seq` tokens (plus the shifted target) in a stream of
/// `count` tokens, (count - 1) / seq; throws Error naming `spec` when not
/// even one row fits.
int64_t streamWindows(const std::string &spec, int64_t count, int64_t seq);

/// Where global row `row`'s window of `seq` tokens starts in a stream of
/// `count` tokens: row mod (count - 1) / seq windows in order, or with
/// options.shuffle a start drawn from [0, count - seq - 1] keyed on
/// (seed, row).
int64_t windowStart(const DataOptions &options, int64_t row, int64_t count,
                    int64_t seq);

/// The document inputs of one row whose window starts at stream offset
/// `start`: `segments[t]` the index of the document holding token
/// start + t, `positions[t]` its distance from the document's start or
/// from the window's, whichever is later (a document cut by the window
/// starts again at position 0). `starts` holds each document's first
/// offset, ascending, starting with 0.
void fillDocumentRow(const std::vector<int64_t> &starts, int64_t start,
                     int64_t seq, int32_t *segments, int32_t *positions);

/// docs:PATH or synthetic-docs[:median=N,sigma=S,count=N]; throws Error
/// for an empty document, one longer than a step's global token budget,
/// tokens outside the vocabulary or a model without document inputs.
std::unique_ptr<DataSource> makeDocumentSource(const DataOptions &options,
                                               const TaskSpec &task);

/// What is wrong with the fields of a synthetic-docs spec, or "".
std::string syntheticDocsProblem(const std::string &spec);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_DOCUMENTS_H
