//===- TaskCheck.h - The loom.task attribute against the model --*- C++ -*-===//
#ifndef LOOM_LIB_DRIVER_TASKCHECK_H
#define LOOM_LIB_DRIVER_TASKCHECK_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom::driver {

/// Checks a module's `loom.task` against its loss, as the runtime will: the
/// kind is lm, classify or none; the sizes the runtime reads are there;
/// @loss takes exactly the batch inputs the task's data source produces
/// (tokens/targets or x/y, by name, shape and type); and its
/// cross-entropies have as many logits as the task has labels (the runtime
/// draws labels in [0, classes) or [0, vocab), and `loom.cross_entropy`
/// reads the logit of each, so more would read past them). Emits a located
/// error and fails on a mismatch. A module without a task passes with a
/// warning: loom-run would train it on random inputs.
LogicalResult verifyTask(ModuleOp module);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_TASKCHECK_H
