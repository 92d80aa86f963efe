//===- Passes.h - Distribution passes ---------------------------*- C++ -*-===//
#ifndef LOOM_PASSES_DISTRIBUTE_PASSES_H
#define LOOM_PASSES_DISTRIBUTE_PASSES_H

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/Distribute/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Distribute/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_DISTRIBUTE_PASSES_H
