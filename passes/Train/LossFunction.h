//===- LossFunction.h - The model's loss function ---------------*- C++ -*-===//
//
// What the passes that build a training step from `@loss` require of it
// (--loom-autodiff, --loom-zo), checked once.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_TRAIN_LOSSFUNCTION_H
#define LOOM_PASSES_TRAIN_LOSSFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom {

/// The function `name` of `module`, with one block and one scalar float
/// result; an error at the module or the function otherwise.
FailureOr<func::FuncOp> lookupLossFunction(ModuleOp module, StringRef name);

/// Marks `loss` as the artifact's `loss` entry (evaluation).
void markLossEntry(func::FuncOp loss);

/// An empty `@train_step(%step: tensor<i64>, inputs...) -> (loss, lr,
/// grad_norm)` after `from`, whose inputs (and their names) it takes, with
/// the attributes of the artifact's `train_step` entry; `lossType` is the
/// type of each result. The caller fills its body.
func::FuncOp createTrainStep(OpBuilder &b, func::FuncOp from,
                             RankedTensorType lossType);

} // namespace mlir::loom

#endif // LOOM_PASSES_TRAIN_LOSSFUNCTION_H
