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

def CheckStagePass : Pass<"loom-check-stage", "mlir::ModuleOp"> {
  let summary = "Stops a pipeline given IR of an earlier stage, saying which.";
  let description = [{
    Fails unless the module has reached `stage` (see `passes/Analysis/
    Stage.h`): `linalg` means no loom ops are left, `bufferized` also no
    tensors. The error points at the first op that shows the stage the input
    is really at, names it, and says which pipelines make the expected
    stage from it. The lowering pipelines run it first, so that
    `loom-opt linalg.mlir --loom-lower-to-llvm-pipeline` says that the input
    is not bufferized yet rather than failing inside `convert-arith-to-llvm`.

    Example: `loom-opt in.mlir --loom-check-stage=stage=bufferized`.
  }];
  let options = [
    Option<"stage", "stage", "::mlir::loom::Stage",
           "::mlir::loom::Stage::Bufferized",
           "The stage the input must have reached (linalg or bufferized)",
           [{::llvm::cl::values(
             clEnumValN(::mlir::loom::Stage::Linalg, "linalg",
                        "no loom ops left"),
             clEnumValN(::mlir::loom::Stage::Bufferized, "bufferized",
                        "no loom ops and no tensors"))}]>,
    Option<"cuda", "cuda", "bool", /*default=*/"false",
           "Name the NVIDIA GPU target's pipelines in the error (buffers "
           "for the device: --loom-bufferize-pipeline=device=1)">,
  ];
}

#endif // LOOM_PASSES_ANALYSIS_PASSES_TD
