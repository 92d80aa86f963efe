//===- Passes.h - Lowering passes -------------------------------*- C++ -*-===//
#ifndef LOOM_PASSES_LOWERING_PASSES_H
#define LOOM_PASSES_LOWERING_PASSES_H

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
class RewritePatternSet;
namespace loom {

#define GEN_PASS_DECL
#include "passes/Lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Lowering/Passes.h.inc"

/// Attaches the one-shot bufferization models of the comm collectives
/// (they bufferize to calls of the runtime's collectives).
void registerCommBufferizationModels(DialectRegistry &registry);

/// Patterns of --loom-decompose, for reuse by other passes.
void populateDecomposePatterns(RewritePatternSet &patterns);

} // namespace loom
} // namespace mlir

#endif // LOOM_PASSES_LOWERING_PASSES_H
