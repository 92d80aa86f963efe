//===- CompressOptions.h - Gradient compression's options -------*- C++ -*-===//
//
// One field per line of CompressOptions.def, with its default: what
// --loom-compress is built from (createCompressPass), filled once by loomc
// from --compress or by loom-opt from the pass's or the train pipeline's
// options.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_DISTRIBUTE_COMPRESSOPTIONS_H
#define LOOM_PASSES_DISTRIBUTE_COMPRESSOPTIONS_H

#include <cstdint>
#include <string>

namespace mlir::loom {

struct CompressOptions {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) TYPE NAME = DEFAULT;
#include "passes/Distribute/CompressOptions.def"
};

} // namespace mlir::loom

#endif // LOOM_PASSES_DISTRIBUTE_COMPRESSOPTIONS_H
