//===- Stages.cpp - The stages loomc runs, as a table ---------------------===//
//
// loomc compiles in four stages after the model, each one named pass
// pipeline: train (the model to a training step), linalg (loom ops to
// linalg on tensors, entry points on memrefs), bufferized (memrefs only) and
// lowered (the LLVM dialect, for the CPU or for CUDA). A stage's name
// (passes/Analysis/Stage.h) is what --dump-pass-pipeline prints,
// --mlir-timing reports and --emit=mlir --stage=... selects. The manifest
// reads the module between stages. Each stage is one row of kStages;
// runStages() walks them.
//
//===----------------------------------------------------------------------===//
#include "Compilation.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Support/PassCounter.h"
#include "passes/Analysis/CostModel.h"
#include "passes/Analysis/Stage.h"
#include "passes/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

namespace {
/// One stage: a pass pipeline, and what loomc does around it.
struct StageRow {
  /// The IR this stage produces; its name is what --dump-pass-pipeline
  /// prints ("loomc: stage NAME: ...") and --mlir-timing reports.
  Stage produces;
  /// Whether `module` still needs the stage (null: always). A stage that
  /// is not needed is skipped whole, `before` and `after` included.
  bool (*needed)(ModuleOp module);
  /// Runs before the pipeline is built (null: nothing).
  LogicalResult (*before)(Compilation &c, ModuleOp module);
  void (*build)(PassManager &pm, Compilation &c);
  /// Runs after the pipeline (null: nothing).
  LogicalResult (*after)(Compilation &c, ModuleOp module);
};
} // namespace

/// A module that is already at the train stage (e.g. the output of
/// --stage=train fed back in) skips the train pipeline.
static bool needsTrainStage(ModuleOp module) { return !isTrainingStep(module); }

/// The train pipeline's options, each group whole: the optimizer and its
/// schedule, the parallelism, CO2, and the cost model's view of the machine.
static TrainOptions trainOptions(const Compilation &c) {
  const CompileOptions &options = c.options;
  const MachineModel &machine = c.resolved.machine;
  TrainOptions train;
  train.optimizer = c.optimizer;
  train.dp = options.dp;
  train.tp = options.tp;
  train.sequenceParallel = options.sequenceParallel;
  train.pp = options.pp;
  train.microBatches = options.microBatches;
  train.overlap = options.overlap;
  train.zero = options.zero;
  train.partitionSequences = options.partitionSequences;
  train.bucketMiB = options.bucketMiB > 0
                        ? options.bucketMiB
                        : chooseBucketBytes(machine) / (1024 * 1024);
  train.co2 = c.co2;
  train.zo = c.zo;
  train.compress = c.compress;
  train.machine = toMachineOptions(machine);
  return train;
}

static void buildTrainStage(PassManager &pm, Compilation &c) {
  TrainOptions train = trainOptions(c);
  // The manifest records the bucket size the stage was built with.
  c.resolved.bucketMiB = train.bucketMiB;
  buildTrainPipeline(pm, train);
}

/// Says why CO2 chose its local steps (with local-steps=auto).
static LogicalResult reportCO2Choice(Compilation &c, ModuleOp module) {
  if (auto co2 = module->getAttrOfType<CO2Attr>(kCO2Attr))
    if (!co2.getLocalStepsReason().empty())
      c.diagnostics << "loomc: co2: " << co2.getLocalStepsReason() << "\n";
  return success();
}

/// The manifest reads the model from the train stage's IR, whether loomc
/// ran that stage or was given its output.
static LogicalResult recordModel(Compilation &c, ModuleOp module) {
  return c.manifest.addModel(module, c.resolved);
}

static void buildLinalgStage(PassManager &pm, Compilation &c) {
  // The CPU runtime's kernels on the CPU target's own loop nests (not
  // those emulating a GPU's).
  const bool cpu = !c.cuda() && c.options.emulateGpuKernels.empty() &&
                   !c.options.emulateGpuLoops;
  buildLowerToLinalgPipeline(pm, c.bf16(), cpu && !c.bf16(),
                             cpu && c.options.outlineLayers);
}

/// The entry points and state tensors, from the buffer calling convention.
static LogicalResult recordEntries(Compilation &c, ModuleOp module) {
  return c.manifest.addEntries(module);
}

/// Buffers as the target needs them: for a GPU (the cuda target, and the
/// CPU emulating its kernels) nothing on the host stack.
static void buildBufferizedStage(PassManager &pm, Compilation &c) {
  if (c.cuda() || !c.options.emulateGpuKernels.empty())
    return buildBufferizeForDevicePipeline(pm);
  buildBufferizePipeline(pm, c.options.emulateGpuLoops);
}

static void buildCudaLowering(PassManager &pm, const Compilation &c) {
  CudaPipelineOptions gpu;
  gpu.chip = c.options.cudaChip;
  gpu.features = cudaFeatures(c.options.cudaChip);
  gpu.bf16 = c.bf16();
  gpu.lateFrees = c.options.lateFrees;
  buildLowerToCudaPipeline(pm, gpu);
}

static void buildLoweredStage(PassManager &pm, Compilation &c) {
  if (c.cuda())
    return buildCudaLowering(pm, c);
  const CompileOptions &options = c.options;
  PrecisionOptions cpu;
  cpu.bf16 = c.bf16();
  cpu.gpuLoops = options.emulateGpuLoops;
  cpu.lateFrees = options.lateFrees;
  cpu.planBuffers = options.planBuffers;
  cpu.outlineNests = options.outlineNests;
  cpu.segmentOps = options.segmentOps;
  cpu.rollLayers = options.rollLayers;
  if (!options.emulateGpuKernels.empty())
    return buildEmulatedGpuPipeline(pm, cpu,
                                    options.emulateGpuKernels == "reverse");
  buildLowerToLLVMPipeline(pm, cpu);
}

/// In order.
static const StageRow kStages[] = {
    {Stage::Train, needsTrainStage, nullptr, buildTrainStage, reportCO2Choice},
    {Stage::Linalg, nullptr, recordModel, buildLinalgStage, recordEntries},
    {Stage::Bufferized, nullptr, nullptr, buildBufferizedStage, nullptr},
    {Stage::Lowered, nullptr, nullptr, buildLoweredStage, nullptr},
};

/// Prints the pipeline if asked, then runs it on `module`, timed under
/// `root`, with MLIR's pass manager options (--mlir-print-ir-*, the crash
/// reproducer, --mlir-pass-statistics with Loom's counters) and the
/// caller's configurePasses applied.
static LogicalResult runPipeline(PassManager &pm, ModuleOp module,
                                 TimingScope &root, StringRef name,
                                 const Compilation &c) {
  if (c.options.dumpPassPipeline) {
    c.diagnostics << "loomc: stage " << name << ": ";
    pm.printAsTextualPipeline(c.diagnostics);
    c.diagnostics << "\n";
  }
  TimingScope scope = root.nest(name);
  pm.enableTiming(scope);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  addPassCounterReport(pm);
  if (c.options.configurePasses)
    c.options.configurePasses(pm);
  return pm.run(module);
}

static LogicalResult runStage(const StageRow &stage, Compilation &c,
                              ModuleOp module, TimingScope &root) {
  if (stage.needed && !stage.needed(module))
    return success();
  if (stage.before && failed(stage.before(c, module)))
    return failure();
  PassManager pm(module.getContext());
  stage.build(pm, c);
  if (failed(runPipeline(pm, module, root, getStageName(stage.produces), c)))
    return failure();
  return stage.after ? stage.after(c, module) : success();
}

LogicalResult mlir::loom::driver::runStages(Compilation &c, ModuleOp module,
                                            TimingScope &root, Stage last) {
  for (const StageRow &stage : kStages) {
    if (stage.produces > last)
      break;
    if (failed(runStage(stage, c, module, root)))
      return failure();
  }
  return success();
}
