//===- Passes.h - Collective scheduling passes ------------------*- C++ -*-===//
#ifndef LOOM_PASSES_SCHEDULE_PASSES_H
#define LOOM_PASSES_SCHEDULE_PASSES_H

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Support/PassCounter.h"

#include "mlir/Pass/Pass.h"

namespace mlir::loom {

#define GEN_PASS_DECL
#include "passes/Schedule/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Schedule/Passes.h.inc"

} // namespace mlir::loom

#endif // LOOM_PASSES_SCHEDULE_PASSES_H
