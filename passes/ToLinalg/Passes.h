//===- Passes.h - train -> linalg passes ------------------------*- C++ -*-===//
#ifndef LOOM_PASSES_TOLINALG_PASSES_H
#define LOOM_PASSES_TOLINALG_PASSES_H

#include "loom/Support/PassCounter.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace loom {

#define GEN_PASS_DECL
#include "passes/ToLinalg/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/ToLinalg/Passes.h.inc"

/// Patterns of --loom-decompose, for reuse by other passes.
void populateDecomposePatterns(RewritePatternSet &patterns);

} // namespace loom
} // namespace mlir

#endif // LOOM_PASSES_TOLINALG_PASSES_H
