//===- Passes.h - linalg -> buffers passes ----------------------*- C++ -*-===//
#ifndef LOOM_PASSES_BUFFERIZE_PASSES_H
#define LOOM_PASSES_BUFFERIZE_PASSES_H

#include "loom/Support/PassCounter.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace loom {

#define GEN_PASS_DECL
#include "passes/Bufferize/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Bufferize/Passes.h.inc"

/// Attaches the one-shot bufferization models of the comm collectives
/// (they bufferize to calls of the runtime's collectives).
void registerCommBufferizationModels(DialectRegistry &registry);

/// Attaches the one-shot bufferization models of the loom ops the CPU
/// runtime computes (loom.document_attention and its gradient).
void registerKernelBufferizationModels(DialectRegistry &registry);

} // namespace loom
} // namespace mlir

#endif // LOOM_PASSES_BUFFERIZE_PASSES_H
