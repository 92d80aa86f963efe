//===- Passes.h - GPU loop nest and kernel passes ---------------*- C++ -*-===//
#ifndef LOOM_PASSES_GPU_PASSES_H
#define LOOM_PASSES_GPU_PASSES_H

#include "loom/Support/PassCounter.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/GPU/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_GPU_PASSES_H
