//===- Passes.h - Training passes -------------------------------*- C++ -*-===//
#ifndef LOOM_PASSES_TRAIN_PASSES_H
#define LOOM_PASSES_TRAIN_PASSES_H

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Support/PassCounter.h"
#include "passes/Train/OptimizerOptions.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/Train/Passes.h.inc"

/// --loom-add-optimizer with `options`.
std::unique_ptr<Pass> createAddOptimizerPass(const OptimizerOptions &options);

#define GEN_PASS_REGISTRATION
#include "passes/Train/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_TRAIN_PASSES_H
