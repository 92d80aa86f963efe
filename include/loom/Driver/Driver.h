//===- Driver.h - The loomc compiler driver ---------------------*- C++ -*-===//
#ifndef LOOM_DRIVER_DRIVER_H
#define LOOM_DRIVER_DRIVER_H

#include "loom/Driver/Specs.h"
#include "passes/Analysis/CostModel.h"
#include "passes/Analysis/Stage.h"

#include "mlir/Support/LLVM.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Diagnostic;
class PassManager;
} // namespace mlir

namespace mlir::loom::driver {

/// The stages whose IR `--emit=mlir --stage=...` prints.
using Stage = ::mlir::loom::Stage;

struct CompileOptions {
  std::string inputFile; ///< a model .mlir file ("-": stdin), or
  std::string modelSpec; ///< a built-in model spec (--model=...)
  /// For callers that hold the model in memory (the compiler's fuzz target):
  /// its text, read instead of the file; inputFile still names it in
  /// diagnostics.
  std::optional<std::string> inputText;
  /// Where errors, warnings and notes go (nullptr: stderr).
  llvm::raw_ostream *diagnostics = nullptr;
  /// Called with each diagnostic about the IR before it is printed (the
  /// fuzz target checks where errors point); loomc's own errors about
  /// options and files are not diagnostics and only printed.
  std::function<void(Diagnostic &)> onDiagnostic;
  /// Called on each stage's pass manager before it runs (the fuzz target
  /// verifies the IR after every pass itself, to tell a pass that broke it
  /// from one that rejected it).
  std::function<void(PassManager &)> configurePasses;
  /// Whether diagnostics print the op they are about in full (MLIR's "see
  /// current operation" note) as MLIR's --mlir-print-op-on-diagnostic says
  /// (on unless it is given =false). Off: never; the error's file:line:col
  /// and source line say where, and a pass's error about the module would
  /// print all of it.
  bool printOpOnDiagnostic = false;
  /// Print each stage's pass pipeline to `diagnostics` before running it,
  /// as text that `loom-opt --pass-pipeline=...` runs.
  bool dumpPassPipeline = false;
  /// The options the user gave explicitly, by name without dashes
  /// ("optimizer", "dp"): loomc refuses those that cannot apply to the
  /// input (a training step's optimizer was chosen when it was made).
  std::vector<std::string> givenFlags;
  std::string outputDir; ///< artifact directory (or file for --emit=mlir)
  bool emitMlir = false; ///< print IR instead of writing an artifact
  /// With emitMlir: print here instead of to the outputDir file.
  llvm::raw_ostream *printTo = nullptr;
  Stage stage = Stage::Lowered;
  std::string optimizer = "adamw";
  std::string dtype = "f32";
  /// f32, or bf16: GEMMs on bf16 operands with f32 accumulation, everything
  /// else (master weights, optimizer) f32.
  std::string precision = "f32";
  /// The schedule over --optimizer's lr (defaults: OptimizerOptions.def).
  int64_t warmupSteps = OptimizerOptions().warmupSteps;
  int64_t decaySteps = OptimizerOptions().decaySteps;
  double minLr = OptimizerOptions().minLr;
  double clipNorm = OptimizerOptions().clipNorm;
  int64_t dp = 1; ///< data-parallel ranks
  int64_t tp = 1; ///< tensor-parallel ranks (--loom-tensor-parallel)
  bool sequenceParallel = false; ///< --loom-sequence-parallel (with tp)
  int64_t pp = 1;                ///< pipeline stages (--loom-pipeline-split)
  int64_t microBatches = 1;      ///< micro-batches of a pipelined step
  bool overlap = false;   ///< async, bucketed, overlapped gradient all-reduce
  double bucketMiB = 0.0; ///< largest bucket with overlap (0: from the model)
  int64_t zero = 0;       ///< ZeRO stage (0: none; 1, 2: sharded state)
  /// Documents placed on the ranks by the runtime's planner
  /// (--loom-partition-sequences).
  bool partitionSequences = false;
  std::string co2;      ///< --co2 spec ("": plain data parallelism)
  std::string compress; ///< --compress spec ("": none)
  std::string zo;       ///< --zo spec ("": first-order training)
  /// --plan: rank the layouts of the --model on --cluster (plan()).
  bool plan = false;
  std::string clusterSpec; ///< --cluster spec (MachineSpec.h)
  /// The cost model's inputs: a calibration file (loom-run --calibrate),
  /// then a --link spec over it (loom/Driver/MachineSpec.h).
  std::string calibrationFile, linkSpec;
  /// What those resolve to (set by compile(); recorded in the manifest).
  MachineModel machine;
  std::string commandLine;    ///< recorded in the manifest
  std::string target = "cpu"; ///< cpu or cuda
  std::string cudaChip = "sm_90";
  /// CPU target, for tests: the GPU's loop nests, run sequentially.
  bool emulateGpuLoops = false;
  /// CPU target, for tests: the GPU's kernels and host code, each launch
  /// run as loops over its blocks and threads: "" (off), "forward" or
  /// "reverse" (from the last thread down).
  std::string emulateGpuKernels;
  /// For comparison: temporaries freed at the end of the step.
  bool lateFrees = false;
  /// CPU target: temporaries at planned offsets of one arena
  /// (--loom-plan-buffers); false, for comparison: one allocation each.
  bool planBuffers = true;
  /// CPU target: each distinct loop nest a function of its own
  /// (--loom-outline-loop-nests); false, for comparison: one function.
  bool outlineNests = true;
  /// CPU target: each entry's repeated runs (a model's layers) compiled
  /// once (--loom-outline-layers); false, for comparison: every copy.
  bool outlineLayers = true;
  /// CPU target: each entry's runs of repeated calls one loop
  /// (--loom-roll-layer-calls); false, for comparison: one call each.
  bool rollLayers = true;
  /// --loom-outline-segments' size; 0: the entries are not cut. Entries
  /// whose layers are outlined stay under it to about 100 layers (a cut
  /// passes every buffer alive there to the next function: cut at 2000
  /// ops, a 48-layer GPT took 4.6 s to compile instead of 2.6 s).
  int64_t segmentOps = 8000;
  /// Threads that optimise and compile the LLVM module, each a part of its
  /// functions (0: one per core).
  unsigned compileThreads = 0;
  /// With --mlir-timing: each LLVM optimisation pass timed in the report.
  bool timeLlvmPasses = false;
};

/// Registers every upstream and Loom pass and pipeline (once per process):
/// compile() needs them, and so do pass-naming command-line options such as
/// --mlir-print-ir-after=<pass>, which loomc parses before compiling. Also
/// constructs the pass manager's and the timing manager's command-line
/// options (--mlir-print-ir-*, --mlir-pass-pipeline-crash-reproducer,
/// --mlir-timing), which compile() applies to every stage.
void registerPassesOnce();

/// `ir` without what upstream's gpu-module-to-binary records of its own
/// timing in gpu.object properties ({ISAToBinaryTimeInMs = 163 : i64, ...}),
/// which the artifact does not keep: for comparing two compilations.
std::string withoutCompileTimes(std::string ir);

/// Runs the whole driver: parse or build the model, run the pipelines up to
/// the requested stage, then print IR or write OUTDIR/{model.so,
/// manifest.json}. Diagnostics go to stderr (with file:line:col for IR).
LogicalResult compile(const CompileOptions &options);

/// loomc --plan: compiles every layout of the --model on the --cluster's
/// ranks (dp x tp, ZeRO stage, overlap) to the train stage, prints them
/// ranked by predicted step time with their memory per rank (those over
/// the cluster's memory last, marked), says why the first wins, and with
/// an output directory compiles it there.
LogicalResult plan(const CompileOptions &options);

} // namespace mlir::loom::driver

#endif // LOOM_DRIVER_DRIVER_H
