//===- ModelZoo.h - Built-in models (--model=mlp:..., gpt:...) --*- C++ -*-===//
#ifndef LOOM_DRIVER_MODELZOO_H
#define LOOM_DRIVER_MODELZOO_H

#include "loom/Driver/Specs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::loom::driver {

/// Builds the model-stage module (loom.param declarations and @loss) for a
/// spec, with parameters of `elementType` (f32 or f64). The module carries a
/// `loom.task` attribute that tells the runtime how to feed it.
OwningOpRef<ModuleOp> buildModel(MLIRContext *ctx, const ModelSpec &spec,
                                 Type elementType);

} // namespace mlir::loom::driver

#endif // LOOM_DRIVER_MODELZOO_H
