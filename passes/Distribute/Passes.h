//===- Passes.h - Distribution passes ---------------------------*- C++ -*-===//
#ifndef LOOM_PASSES_DISTRIBUTE_PASSES_H
#define LOOM_PASSES_DISTRIBUTE_PASSES_H

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Support/PassCounter.h"
#include "passes/Distribute/CO2Options.h"
#include "passes/Distribute/CompressOptions.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/Distribute/Passes.h.inc"

/// --loom-co2 with `options`.
std::unique_ptr<Pass> createCO2Pass(const CO2Options &options);
/// --loom-compress with `options`.
std::unique_ptr<Pass> createCompressPass(const CompressOptions &options);

#define GEN_PASS_REGISTRATION
#include "passes/Distribute/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_DISTRIBUTE_PASSES_H
