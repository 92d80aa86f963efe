//===- EmitObject.h - LLVM dialect module to a shared object ----*- C++ -*-===//
#ifndef LOOM_LIB_DRIVER_EMITOBJECT_H
#define LOOM_LIB_DRIVER_EMITOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

namespace mlir::loom::driver {

/// How emitSharedObject builds.
struct EmitOptions {
  unsigned threads = 0;    ///< that build the parts (0: one per core)
  bool timePasses = false; ///< each LLVM pass timed under llvm-optimize
};

/// Translates `module` (LLVM dialect) to LLVM IR, optimizes it at -O3 for
/// the host CPU, in parts on `options.threads` threads, emits object files
/// and links `dir/model.so` with the system C compiler driver (`cc
/// -shared`). Each step is timed under `scope`.
LogicalResult emitSharedObject(ModuleOp module, StringRef dir,
                               const EmitOptions &options, TimingScope &scope);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_EMITOBJECT_H
