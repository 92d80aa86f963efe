//===- Passes.td - Training passes (autodiff, optimizers) --*- tablegen -*-===//
#ifndef LOOM_PASSES_TRAIN_PASSES_TD
#define LOOM_PASSES_TRAIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"loom-autodiff", "mlir::ModuleOp"> {
  let summary = "Builds @loss_and_grad: the loss and every parameter's gradient.";
  let description = [{
    Reverse-mode differentiation of the model's loss function. The pass
    clones `@loss` into `@loss_and_grad`, walks its ops backwards and asks
    each for its vector-Jacobian product (`VJPOpInterface`), summing the
    gradients of values with several uses. `@loss_and_grad` returns the loss
    followed by one gradient per `loom.param`, in declaration order; each
    gradient result carries `loom.grad_of = @param`. Parameters that do not
    influence the loss get a zero gradient.

    Assumes: `@loss` has one block, returns one scalar float tensor, and
    calls no functions (the train pipeline inlines first).
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"lossFunction", "loss-function", "std::string", /*default=*/"\"loss\"",
           "Name of the function to differentiate.">,
  ];
  let statistics = [
    Statistic<"numBackwardOps", "num-backward-ops", "Ops created for the backward pass">,
  ];
}

def AddOptimizerPass : Pass<"loom-add-optimizer", "mlir::ModuleOp"> {
  let summary = "Builds @train_step: loss, gradients, clipping, LR schedule, updates.";
  let description = [{
    Adds `@train_step(%step, inputs...) -> (loss, lr, grad_norm)`, which
    calls `@loss_and_grad`, computes the global gradient norm, clips the
    gradients to `clip-norm` when it is positive, evaluates the learning-rate
    schedule at `%step` and updates every parameter with `loom.adamw` or
    `loom.sgd`. Parameters marked `no_weight_decay` get no weight decay.

    Options: one per line of `passes/Train/OptimizerOptions.def` (optimizer,
    lr, beta1, beta2, eps, weight-decay, momentum, warmup-steps,
    decay-steps, min-lr, clip-norm), which defines each with its default and
    help once; `loom-opt --help` lists them.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // LOOM_PASSES_TRAIN_PASSES_TD
