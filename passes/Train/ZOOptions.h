//===- ZOOptions.h - Zeroth-order training's options as a struct -*- C++
//-*-===//
//
// One field per line of ZOOptions.def, with its default: what --loom-zo is
// built from (createZerothOrderPass), filled once by loomc from --zo or by
// loom-opt from the pass's or the train pipeline's options.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TRAIN_ZOOPTIONS_H
#define LOOM_PASSES_TRAIN_ZOOPTIONS_H

#include <cstdint>

namespace mlir::loom {

struct ZOOptions {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) TYPE NAME = DEFAULT;
#include "passes/Train/ZOOptions.def"
};

} // namespace mlir::loom

#endif // LOOM_PASSES_TRAIN_ZOOPTIONS_H
