//===- OptimizerOptions.h - The optimizer's options as a struct -*- C++ -*-===//
//
// One field per line of OptimizerOptions.def, with its default: what
// --loom-add-optimizer is built from (createAddOptimizerPass), filled once
// by loomc from --optimizer and the schedule flags, or by loom-opt from the
// pass's or the train pipeline's options.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TRAIN_OPTIMIZEROPTIONS_H
#define LOOM_PASSES_TRAIN_OPTIMIZEROPTIONS_H

#include <cstdint>
#include <string>

namespace mlir::loom {

struct OptimizerOptions {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) TYPE NAME = DEFAULT;
#include "passes/Train/OptimizerOptions.def"
};

} // namespace mlir::loom

#endif // LOOM_PASSES_TRAIN_OPTIMIZEROPTIONS_H
