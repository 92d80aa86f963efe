//===- Passes.td - Distribution passes ---------------------*- tablegen -*-===//
#ifndef LOOM_PASSES_DISTRIBUTE_PASSES_TD
#define LOOM_PASSES_DISTRIBUTE_PASSES_TD

include "mlir/Pass/PassBase.td"

def DataParallelPass : Pass<"loom-data-parallel", "mlir::ModuleOp"> {
  let summary = "Averages gradients (and the loss) over data-parallel ranks.";
  let description = [{
    Runs after `--loom-autodiff`. Declares `comm.mesh @<mesh> shape = [ranks]
    axes = [<axis>]` (or uses an existing mesh with that axis) and makes
    `@loss_and_grad` return the mean over the axis of the loss and of every
    gradient, with one `comm.all_reduce ... mean` each. They are issued in
    the order the backward pass produces the values (ties: result order), a
    function of the IR alone, so every rank issues them identically.

    With R ranks each taking B rows, the step then matches one rank taking
    the R·B rows of the global batch (global-batch semantics).
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Data-parallel ranks (the mesh size when the pass creates it).">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the mesh symbol.">,
    Option<"axis", "axis", "std::string", /*default=*/"\"dp\"",
           "Mesh axis the gradients are averaged over.">,
  ];
  let statistics = [
    Statistic<"numAllReduces", "num-all-reduces", "Collectives inserted">,
  ];
}

#endif // LOOM_PASSES_DISTRIBUTE_PASSES_TD
