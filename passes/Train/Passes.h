//===- Passes.h - Training passes -------------------------------*- C++ -*-===//
#ifndef LOOM_PASSES_TRAIN_PASSES_H
#define LOOM_PASSES_TRAIN_PASSES_H

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Support/PassCounter.h"
#include "passes/Train/OptimizerOptions.h"
#include "passes/Train/ZOOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/Train/Passes.h.inc"

/// --loom-add-optimizer with `options`.
std::unique_ptr<Pass> createAddOptimizerPass(const OptimizerOptions &options);

/// --loom-zo with `options` over `ranks` data-parallel ranks.
std::unique_ptr<Pass> createZerothOrderPass(const ZOOptions &options,
                                            int64_t ranks);

#define GEN_PASS_REGISTRATION
#include "passes/Train/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_TRAIN_PASSES_H
