//===- Passes.h - buffers -> LLVM passes for the CPU ------------*- C++ -*-===//
#ifndef LOOM_PASSES_CPU_PASSES_H
#define LOOM_PASSES_CPU_PASSES_H

#include "loom/Support/PassCounter.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/CPU/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_CPU_PASSES_H
