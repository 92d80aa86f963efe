//===- Manifest.h - manifest.json from the compiled module ------*- C++ -*-===//
#ifndef LOOM_LIB_DRIVER_MANIFEST_H
#define LOOM_LIB_DRIVER_MANIFEST_H

#include "loom/Driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace mlir::loom::driver {

/// What the runtime needs, read from the train-stage module (parameters,
/// inputs, task) and from the module after the buffer calling convention
/// (entry points and their arguments). Schema: docs/artifact.md; its keys:
/// loom/runtime/ManifestSchema.def, shared with the runtime's reader.
struct ManifestBuilder {
  llvm::json::Object manifest;
  /// ZeRO: the parameters whose state is each rank's slice (loom.zero).
  llvm::StringSet<> shardedParams;

  /// Reads parameters, batch inputs and the task from the train stage.
  LogicalResult addModel(ModuleOp train, const CompileOptions &options);
  /// Reads entries and state tensors from the lowered (memref) module.
  LogicalResult addEntries(ModuleOp lowered);
  /// Writes `dir/manifest.json`.
  LogicalResult write(StringRef dir);
};

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_MANIFEST_H
