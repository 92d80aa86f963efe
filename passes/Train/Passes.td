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
    influence the loss get a zero gradient. A `comm.all_gather` in `@loss`
    (`--loom-partition-sequences` gathers keys and values) has the
    `comm.reduce_scatter ... sum` of its result's gradient as its input's:
    every rank's slice was read by every rank. Tensor parallelism's ops
    (`--loom-tensor-parallel`) follow Megatron-LM's conventions: a
    `comm.fan_out`'s input gets the `comm.all_reduce ... sum` of its
    result's gradient, and a `comm.all_reduce ... sum`'s input its result's
    gradient unchanged (the sum, and the loss computed from it, are the same
    on every rank).

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
    The squares of the gradients of parameters split by tensor parallelism
    (`loom.tensor_split`: each rank holds its part) are summed over the
    ranks of the split with one `comm.all_reduce ... sum` before they join
    the others'.

    Options: one per line of `passes/Train/OptimizerOptions.def` (optimizer,
    lr, beta1, beta2, eps, weight-decay, momentum, warmup-steps,
    decay-steps, min-lr, clip-norm), which defines each with its default and
    help once; `loom-opt --help` lists them.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::loom::comm::CommDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def ZerothOrderPass : Pass<"loom-zo", "mlir::ModuleOp"> {
  let summary = "Builds a zeroth-order @train_step (MeZO): two forward passes, no backward.";
  let description = [{
    Adds `@train_step(%step, inputs...) -> (loss, lr, grad_norm)` built from
    `@loss` alone (no `--loom-autodiff`): the loss `l+` at every parameter
    moved by `+eps z` and `l-` at `-eps z`, the projected gradient
    `g = (l+ - l-) / (2 eps)` (with `ranks` > 1 averaged over the
    data-parallel ranks, one scalar), and the update
    `theta <- (1 - lr wd) theta - lr g z` along the same `z`. `z` is
    `loom.perturb`'s direction for `(seed, parameter index, step)`,
    regenerated each time, never stored: the step needs the memory of a
    forward pass. Each forward pass reads a perturbed copy of a parameter
    made just before its first use; the parameters themselves are written
    once, by the update. `loss` is the mean of `l+` and `l-`, `grad_norm`
    is `|g|`. Parameters marked `no_weight_decay` get no weight decay.

    With `perturbation-ranks=2` (DistZO2's perturbation parallelism) the two
    forward passes run on the two ranks of a pair (mesh axis `pert`): each
    rank computes one loss, at `+eps z` on the pair's rank 0 and `-eps z` on
    its rank 1, and two scalar all-reduces over the pair give every rank
    `l+ - l-` and `l+ + l-`. The mesh is then `[ranks, 2]` along `dp` and
    `pert`.

    Options: one per line of `passes/Train/ZOOptions.def` (eps, lr,
    weight-decay, seed, perturbation-ranks), and `ranks`.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Data-parallel ranks: each evaluates both losses on its own "
           "micro-batch and the projected gradient is averaged (one scalar).">,
  ];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::loom::comm::CommDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // LOOM_PASSES_TRAIN_PASSES_TD
