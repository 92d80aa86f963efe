//===- EmitObject.h - LLVM dialect module to a shared object ----*- C++ -*-===//
#ifndef LOOM_LIB_DRIVER_EMITOBJECT_H
#define LOOM_LIB_DRIVER_EMITOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

namespace mlir::loom::driver {

/// Translates `module` (LLVM dialect) to LLVM IR, optimizes it at -O3 for
/// the host CPU on `threads` threads (0: one per core), emits object files
/// and links `dir/model.so` with the system C compiler driver (`cc
/// -shared`). Each step is timed under `scope`.
LogicalResult emitSharedObject(ModuleOp module, StringRef dir, unsigned threads,
                               TimingScope &scope);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_EMITOBJECT_H
