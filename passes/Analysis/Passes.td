//===- Passes.td - What the cost model reads ---------------*- tablegen -*-===//
#ifndef LOOM_PASSES_ANALYSIS_PASSES_TD
#define LOOM_PASSES_ANALYSIS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DescribeMachinePass : Pass<"loom-describe-machine", "mlir::ModuleOp"> {
  let summary = "Records the machine the cost model assumes as loom.machine.";
  let description = [{
    Sets the module attribute `loom.machine = #loom.machine<...>` (the link
    bandwidth and latency, the compute rate, and the compute a background
    collective costs) that every pass reasoning about time reads through
    the cost model (`getMachineModel`), in the spirit of MLIR's data-layout
    attributes: the machine is described once, not re-passed to each pass.
    `loomc` runs it first, from `--link` and `--calibration`; in a test,
    run it before `--loom-schedule-overlap` or `--loom-co2`, or write the
    attribute into the input.

    Options: one per line of `passes/Analysis/MachineOptions.def`
    (`link-gbps`, `link-latency-us`, `gflops`, `comm-cpu`), which defines
    each with its default and help once.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
}

#endif // LOOM_PASSES_ANALYSIS_PASSES_TD
