//===- EmitObject.h - LLVM dialect module to a shared object ----*- C++ -*-===//
#ifndef LOOM_LIB_DRIVER_EMITOBJECT_H
#define LOOM_LIB_DRIVER_EMITOBJECT_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom::driver {

/// Translates `module` (LLVM dialect) to LLVM IR, optimizes it at -O3 for
/// the host CPU, emits an object file and links `dir/model.so` with the
/// system C compiler driver (`cc -shared`).
LogicalResult emitSharedObject(ModuleOp module, StringRef dir);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_EMITOBJECT_H
