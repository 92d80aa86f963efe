//===- SyntheticData.h - Seeded synthetic batches ---------------*- C++ -*-===//
//
// Internal to the runtime: the `--data synthetic` sources, built by
// makeDataSource.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_SYNTHETICDATA_H
#define LOOM_RUNTIME_SRC_SYNTHETICDATA_H

#include "loom/runtime/Data.h"

namespace loom::rt {

/// x ~ N(0, 1), y = argmax of a fixed random teacher MLP drawn from the seed.
std::unique_ptr<DataSource>
makeSyntheticClassifySource(const DataOptions &options, const TaskSpec &task);

/// Uniform random token rows of seq + 1 tokens (targets = tokens shifted).
std::unique_ptr<DataSource> makeSyntheticLMSource(const DataOptions &options,
                                                  const TaskSpec &task);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_SYNTHETICDATA_H
