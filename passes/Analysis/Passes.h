//===- Passes.h - What the cost model reads ---------------------*- C++ -*-===//
#ifndef LOOM_PASSES_ANALYSIS_PASSES_H
#define LOOM_PASSES_ANALYSIS_PASSES_H

#include "loom/Support/PassCounter.h"
#include "passes/Analysis/MachineOptions.h"
#include "passes/Analysis/Stage.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/Analysis/Passes.h.inc"

/// --loom-describe-machine with `machine`'s values.
std::unique_ptr<Pass> createDescribeMachinePass(const MachineOptions &machine);

#define GEN_PASS_REGISTRATION
#include "passes/Analysis/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_ANALYSIS_PASSES_H
