//===- MachineOptions.h - The machine model as a struct --------*- C++ -*-===//
//
// One field per line of MachineOptions.def, in the units users give them
// (Gbit/s, microseconds, GFLOP/s): what --loom-describe-machine records as
// the module's #loom.machine and the cost model reads back (CostModel.h).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_ANALYSIS_MACHINEOPTIONS_H
#define LOOM_PASSES_ANALYSIS_MACHINEOPTIONS_H

namespace mlir::loom {

struct MachineOptions {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) TYPE NAME = DEFAULT;
#include "passes/Analysis/MachineOptions.def"
};

} // namespace mlir::loom

#endif // LOOM_PASSES_ANALYSIS_MACHINEOPTIONS_H
