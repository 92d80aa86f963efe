//===- TaskCheck.h - The loom.task attribute against the model --*- C++ -*-===//
#ifndef LOOM_LIB_DRIVER_TASKCHECK_H
#define LOOM_LIB_DRIVER_TASKCHECK_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom::driver {

/// Checks a module's `loom.task` against its loss: the runtime feeds labels
/// (classify) or target tokens (lm) in [0, classes) or [0, vocab), and
/// `loom.cross_entropy` reads the logit of each label, so a task that names
/// more classes than the logits have would make compiled code read past
/// them. Emits a located error and fails on a mismatch; a module without a
/// task, or whose cross-entropies take no such input, passes.
LogicalResult verifyTask(ModuleOp module);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_TASKCHECK_H
