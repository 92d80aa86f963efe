//===- Pipelines.cpp - Loom's named pass pipelines ------------------------===//
#include "passes/Pipelines/Pipelines.h"

#include "passes/Analysis/Passes.h"
#include "passes/Bufferize/Passes.h"
#include "passes/CPU/Passes.h"
#include "passes/Distribute/Passes.h"
#include "passes/GPU/Passes.h"
#include "passes/Schedule/Passes.h"
#include "passes/ToLinalg/Passes.h"
#include "passes/Train/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::loom;

/// Appends an upstream pipeline written in mlir-opt syntax. The text is a
/// constant of this file, so a parse error is a bug in Loom.
static void addUpstream(OpPassManager &pm, StringRef pipeline) {
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("loom: bad built-in pipeline: " + pipeline);
}

TrainOptions TrainPipelineOptions::bind() const {
  TrainOptions o;
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) o.optimizer.NAME = NAME;
#include "passes/Train/OptimizerOptions.def"
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) o.machine.NAME = NAME;
#include "passes/Analysis/MachineOptions.def"
  o.dp = dp;
  o.tp = tp;
  o.sequenceParallel = sequenceParallel;
  o.pp = pp;
  o.microBatches = microBatches;
  o.overlap = overlap;
  o.zero = zero;
  o.partitionSequences = partitionSequences;
  o.bucketMiB = bucketMiB;
  if (co2) {
    o.co2.emplace();
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) o.co2->NAME = co2_##NAME;
#include "passes/Distribute/CO2Options.def"
  }
  if (compress) {
    o.compress.emplace();
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  o.compress->NAME = compress_##NAME;
#include "passes/Distribute/CompressOptions.def"
  }
  if (zo) {
    o.zo.emplace();
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) o.zo->NAME = zo_##NAME;
#include "passes/Train/ZOOptions.def"
  }
  return o;
}

static void buildStepPasses(OpPassManager &pm, const TrainOptions &o);

void mlir::loom::buildTrainPipeline(OpPassManager &pm, const TrainOptions &o) {
  addUpstream(pm, "inline,canonicalize,cse");
  if (o.zo) {
    // A forward-only step: no gradients, so nothing of the first-order
    // path below applies (loomc refuses its flags with --zo).
    pm.addPass(createZerothOrderPass(*o.zo, o.dp));
    addUpstream(pm, "canonicalize,cse");
    return;
  }
  if (o.tp != 1) {
    // Before autodiff, which turns its fan-outs and slices into the
    // backward pass's collectives.
    TensorParallelPassOptions tensor;
    tensor.ranks = o.tp;
    tensor.dp = o.dp;
    pm.addPass(createTensorParallelPass(tensor));
    if (o.sequenceParallel)
      pm.addPass(createSequenceParallelPass());
  }
  if (o.partitionSequences) {
    // Before autodiff, which differentiates its gathers.
    PartitionSequencesPassOptions partition;
    partition.ranks = o.dp;
    pm.addPass(createPartitionSequencesPass(partition));
  }
  if (o.pp != 1) {
    // Each stage a module of its own, trained as a model is; the stages'
    // steps merged into one module at the end.
    PipelineSplitPassOptions split;
    split.stages = o.pp;
    split.microBatches = o.microBatches;
    split.dp = o.dp;
    pm.addPass(createPipelineSplitPass(split));
    OpPassManager &stage = pm.nest<ModuleOp>();
    stage.addPass(createAutodiffPass());
    stage.addPass(createPipelineSchedulePass());
    buildStepPasses(stage, o);
    pm.addPass(createPipelineMergePass());
    addUpstream(pm, "canonicalize,cse");
    return;
  }
  pm.addPass(createAutodiffPass());
  buildStepPasses(pm, o);
}

/// From the gradients to the training step: averaging, the optimizer,
/// sharding, overlap.
static void buildStepPasses(OpPassManager &pm, const TrainOptions &o) {
  // Bad option values are the passes' to diagnose (an error at the module,
  // not a crash of the tool): dp < 1 reaches --loom-data-parallel, co2
  // without it or with overlap reaches --loom-co2.
  if (o.dp != 1) {
    // The machine, for the passes below that reason about time.
    pm.addPass(createDescribeMachinePass(o.machine));
    DataParallelPassOptions dp;
    dp.ranks = o.dp;
    pm.addPass(createDataParallelPass(dp));
  }
  // Compression marks the data-parallel pass's gradient means (without it,
  // the pass says what to run first).
  if (o.compress)
    pm.addPass(createCompressPass(*o.compress));
  pm.addPass(createAddOptimizerPass(o.optimizer));
  // ZeRO's collectives exist before the overlap passes place them.
  if (o.zero > 0) {
    ShardStatePassOptions shard;
    shard.stage = o.zero;
    // Asynchronous gathers of ZeRO-3 parameters start one bucket ahead;
    // the bucket is the all-reduces' (from the cost model, or --bucket-mib).
    shard.prefetch = o.overlap ? 1 : 0;
    shard.bucketMiB = o.overlap ? o.bucketMiB : 0;
    pm.addPass(createShardStatePass(shard));
  }
  if (o.dp != 1 && o.overlap) {
    BucketCollectivesPassOptions bucket;
    bucket.maxMiB = o.bucketMiB;
    pm.addPass(createBucketCollectivesPass(bucket));
    pm.addPass(createAsyncCollectivesPass());
    pm.addPass(createScheduleOverlapPass());
  }
  if (o.co2)
    pm.addPass(createCO2Pass(*o.co2));
  addUpstream(pm, "canonicalize,cse");
}

void mlir::loom::buildLowerToLinalgPipeline(OpPassManager &pm, bool bf16,
                                            bool runtimeKernels,
                                            bool outlineLayers) {
  addUpstream(pm, "inline,symbol-dce");
  DecomposePassOptions decompose;
  decompose.keepRuntimeKernels = runtimeKernels;
  pm.addPass(createDecomposePass(decompose));
  addUpstream(pm, "canonicalize,cse");
  // After CSE, which lets a layer's backward pass use what its forward pass
  // computed (attention's probabilities, a norm's statistics) rather than
  // recompute them in a function of its own; before the lowering, so that
  // every pass after it sees one copy of a layer.
  if (outlineLayers)
    pm.addPass(createOutlineLayersPass());
  pm.addPass(createLowerEntryPointsPass());
  pm.addPass(createLowerToLinalgPass());
  addUpstream(pm, "canonicalize,cse");
  // Before fusion, so each rounding merges into its operand's producer.
  if (bf16)
    pm.addPass(createDemoteMatmulsPass());
  pm.addPass(createFuseElementwisePass());
  addUpstream(pm, "canonicalize,cse");
  if (outlineLayers) {
    // Again, on what the lowering added per layer: optimizer updates and
    // the writes of their results into the entry's buffers.
    pm.addPass(createOutlineLayersPass());
    pm.addPass(createLowerLayerCallsPass());
  }
}

/// One-shot bufferization and deallocation; `stack` promotes small buffers
/// to the host stack (CPU only: a GPU's buffers live in device memory).
static void addBufferize(OpPassManager &pm, bool stack) {
  pm.addNestedPass<func::FuncOp>(createDuplicateInitsPass());
  // No eliminate-empty-tensors: with destinations that are function arguments
  // it let two reductions sharing one CSE-d init write the same output buffer
  // (caught by test/e2e/gradcheck/layernorm.mlir).
  addUpstream(pm, std::string("empty-tensor-to-alloc-tensor,"
                              "one-shot-bufferize,canonicalize,"
                              "func.func(buffer-hoisting") +
                      (stack ? ",promote-buffers-to-stack{"
                               "max-alloc-size-in-bytes=4096}"
                             : "") +
                      "),ownership-based-buffer-deallocation,canonicalize,"
                      "func.func(loom-split-deallocs),"
                      "buffer-deallocation-simplification,"
                      "bufferization-lower-deallocations,cse,canonicalize");
  pm.addPass(createFinalizeCommPass());
}

/// Stops the pipeline at its start unless the input has reached `stage`
/// (instead of failing deep inside a conversion on IR it cannot handle).
static void addCheckStage(OpPassManager &pm, Stage stage, bool cuda = false) {
  CheckStagePassOptions check;
  check.stage = stage;
  check.cuda = cuda;
  pm.addPass(createCheckStagePass(check));
}

void mlir::loom::buildBufferizePipeline(OpPassManager &pm, bool gpuLoops) {
  addCheckStage(pm, Stage::Linalg);
  if (gpuLoops)
    pm.addNestedPass<func::FuncOp>(createSplitReductionsPass());
  addBufferize(pm, /*stack=*/true);
}

/// The step's frees after last uses, once the loop nests are built (a
/// pass that moves loops past each other may not move them past frees).
static std::string hoistDeallocs(bool lateFrees) {
  return lateFrees ? "" : "loom-hoist-deallocs,";
}

void mlir::loom::buildLowerToLLVMPipeline(OpPassManager &pm,
                                          const PrecisionOptions &o) {
  bool bf16 = o.bf16, gpuLoops = o.gpuLoops;
  addCheckStage(pm, Stage::Bufferized);
  pm.addPass(createLowerGemmToRuntimePass());
  pm.addPass(createApproximateMathPass());
  // Each part ends with a comma.
  std::string nests =
      (gpuLoops ? gpuLoopNests(CudaPipelineOptions().blockSize) +
                      ",loom-reverse-parallel-loops,"
                : std::string()) +
      hoistDeallocs(o.lateFrees);
  // The arena is planned from where the frees are, before loops hide ops.
  std::string loops =
      o.planBuffers
          ? (nests.empty()
                 ? ""
                 : "func.func(" + nests.substr(0, nests.size() - 1) + "),") +
                "loom-plan-buffers,func.func(convert-linalg-to-loops),"
          : "func.func(" + nests + "convert-linalg-to-loops),";
  if (o.outlineNests)
    loops += "loom-outline-loop-nests,";
  // The exported entries, each address loaded where it is used; then a
  // model's layers one loop, and what is left cut into segments.
  loops += "loom-load-entry-arguments,";
  if (o.rollLayers && !gpuLoops)
    loops += "loom-roll-layer-calls,";
  if (o.outlineNests && o.segmentOps > 0)
    loops += "loom-outline-segments{ops=" + std::to_string(o.segmentOps) + "},";
  // LLVM lowers bf16 <-> f32 conversions on CPUs without AVX512-BF16 to
  // libgcc calls the artifact does not link; as integer ops they vectorise.
  addUpstream(
      pm, loops + (bf16 ? "arith-expand{include-bf16=1}," : "") +
              "lower-affine,"
              "convert-scf-to-cf,canonicalize,expand-strided-metadata,"
              "lower-affine,finalize-memref-to-llvm{use-generic-functions=1},"
              "convert-math-to-llvm,convert-math-to-libm,"
              "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
              "convert-arith-to-llvm,convert-cf-to-llvm,convert-index-to-llvm,"
              "reconcile-unrealized-casts");
}

void mlir::loom::buildCpuPipeline(OpPassManager &pm,
                                  const PrecisionOptions &o) {
  buildLowerToLinalgPipeline(pm, o.bf16, !o.bf16 && !o.gpuLoops,
                             o.outlineLayers && !o.gpuLoops);
  buildBufferizePipeline(pm, o.gpuLoops);
  buildLowerToLLVMPipeline(pm, o);
}

std::string mlir::loom::gpuLoopNests(int64_t blockSize) {
  // Reductions with their outputs as the parallel loop (one kernel, not
  // one per reduced row), scalar reductions as one-iteration nests, their
  // accumulators in registers, every parallel nest one-dimensional
  // (coalesced, no sequential dimensions), consecutive independent nests
  // merged (one launch), tiled into blocks of blockSize threads (no min/max
  // bounds: a guard instead, so the launch sizes are constants).
  std::string block = std::to_string(blockSize);
  // (canonicalize would inline a one-iteration nest: it comes before.)
  return "loom-interchange-reductions,convert-linalg-to-parallel-loops,"
         "loom-collapse-parallel-loops,canonicalize,"
         "loom-parallelize-host-loops,loom-promote-accumulators,"
         "loom-fuse-parallel-loops{block-size=" +
         block +
         "},scf-parallel-loop-tiling{parallel-loop-tile-sizes=" + block +
         " no-min-max-bounds=1}";
}

/// buildGpuKernelsPipeline, with the GEMMs calling `<gemmPrefix>_<type>`.
static void addGpuKernels(OpPassManager &pm, const CudaPipelineOptions &o,
                          StringRef gemmPrefix) {
  addCheckStage(pm, Stage::Bufferized, /*cuda=*/true);
  LowerGemmToRuntimePassOptions gemm;
  gemm.prefix = gemmPrefix.str();
  pm.addPass(createLowerGemmToRuntimePass(gemm));
  // Polynomials instead of libdevice calls for exp/log/tanh.
  pm.addPass(createApproximateMathPass());
  addUpstream(pm, "func.func(loom-copies-to-linalg," +
                      gpuLoopNests(o.blockSize) + "," +
                      hoistDeallocs(o.lateFrees) +
                      "gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
                      "canonicalize,cse");
  pm.addPass(createGpuHostToDevicePass());
  addUpstream(pm, "canonicalize,cse");
}

void mlir::loom::buildGpuKernelsPipeline(OpPassManager &pm,
                                         const CudaPipelineOptions &o) {
  addGpuKernels(pm, o, "loom_rt_gpu_gemm");
}

void mlir::loom::buildEmulatedGpuPipeline(OpPassManager &pm,
                                          const PrecisionOptions &o,
                                          bool reverse) {
  CudaPipelineOptions gpu;
  gpu.bf16 = o.bf16;
  gpu.lateFrees = o.lateFrees;
  addGpuKernels(pm, gpu, LowerGemmToRuntimePassOptions().prefix);
  EmulateGpuLaunchesPassOptions emulate;
  emulate.reverse = reverse;
  pm.addNestedPass<func::FuncOp>(createEmulateGpuLaunchesPass(emulate));
  if (o.gpuLoops)
    llvm::report_fatal_error("loom: the emulated GPU pipeline builds the "
                             "GPU's loop nests itself (no gpuLoops)");
  buildLowerToLLVMPipeline(pm, o);
}

void mlir::loom::buildGpuToLLVMPipeline(OpPassManager &pm,
                                        const CudaPipelineOptions &o) {
  addUpstream(
      pm, "func.func(loom-sink-dynamic-views),"
          "gpu-launch-sink-index-computations,gpu-kernel-outlining,"
          "loom-merge-gpu-modules,"
          "func.func(gpu-async-region),nvvm-attach-target{"
          "chip=" +
              o.chip.getValue() +
              (o.features.empty() ? "" : " features=" + o.features.getValue()) +
              " O=3},gpu.module(loom-precise-gpu-sqrt,convert-gpu-to-nvvm{"
              "use-bare-ptr-memref-call-conv=1},canonicalize,cse,"
              "reconcile-unrealized-casts),"
              "lower-affine,convert-scf-to-cf,canonicalize,"
              "expand-strided-metadata,lower-affine,"
              "gpu-to-llvm{use-bare-pointers-for-host=1 "
              "use-bare-pointers-for-kernels=1},"
              "finalize-memref-to-llvm,convert-math-to-llvm,"
              "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
              "convert-arith-to-llvm,convert-cf-to-llvm,"
              "convert-index-to-llvm,reconcile-unrealized-casts,"
              "gpu-module-to-binary{format=" +
              o.format.getValue() + " toolkit=" + o.toolkit.getValue() + "}");
  pm.addPass(createEmitEntryWrappersPass());
}

void mlir::loom::buildBufferizeForDevicePipeline(OpPassManager &pm) {
  addCheckStage(pm, Stage::Linalg);
  pm.addNestedPass<func::FuncOp>(createSplitReductionsPass());
  addBufferize(pm, /*stack=*/false);
}

std::string mlir::loom::cudaFeatures(StringRef chip) {
  unsigned sm = 0;
  if (chip.starts_with("sm_") &&
      !chip.drop_front(3).take_while(llvm::isDigit).getAsInteger(10, sm) &&
      sm >= 90)
    return "+ptx80";
  return "";
}

void mlir::loom::buildLowerToCudaPipeline(OpPassManager &pm,
                                          const CudaPipelineOptions &o) {
  buildGpuKernelsPipeline(pm, o);
  buildGpuToLLVMPipeline(pm, o);
}

void mlir::loom::buildCudaPipeline(OpPassManager &pm,
                                   const CudaPipelineOptions &o) {
  buildLowerToLinalgPipeline(pm, o.bf16);
  buildBufferizeForDevicePipeline(pm);
  buildLowerToCudaPipeline(pm, o);
}

void mlir::loom::registerPipelines() {
  PassPipelineRegistration<TrainPipelineOptions>(
      "loom-train-pipeline",
      "model -> train: autodiff and the optimizer (@loss_and_grad, "
      "@train_step).",
      [](OpPassManager &pm, const TrainPipelineOptions &o) {
        buildTrainPipeline(pm, o.bind());
      });
  PassPipelineRegistration<PrecisionOptions>(
      "loom-lower-to-linalg-pipeline",
      "train -> linalg: decompose, buffer ABI, loom -> linalg, fusion.",
      [](OpPassManager &pm, const PrecisionOptions &o) {
        buildLowerToLinalgPipeline(pm, o.bf16, !o.bf16 && !o.gpuLoops,
                                   o.outlineLayers && !o.gpuLoops);
      });
  PassPipelineRegistration<BufferizePipelineOptions>(
      "loom-bufferize-pipeline",
      "linalg -> bufferized: one-shot bufferization, frees.",
      [](OpPassManager &pm, const BufferizePipelineOptions &o) {
        if (o.device)
          return buildBufferizeForDevicePipeline(pm);
        buildBufferizePipeline(pm, o.gpuLoops);
      });
  PassPipelineRegistration<PrecisionOptions>(
      "loom-lower-to-llvm-pipeline",
      "bufferized -> lowered (CPU): runtime GEMMs, loops, LLVM dialect, C "
      "wrappers.",
      [](OpPassManager &pm, const PrecisionOptions &o) {
        buildLowerToLLVMPipeline(pm, o);
      });
  PassPipelineRegistration<PrecisionOptions>(
      "loom-cpu-pipeline", "train -> lowered: every CPU lowering stage.",
      buildCpuPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "loom-gpu-kernels-pipeline",
      "bufferized (device=1) -> gpu.launch kernels and runtime cuBLAS "
      "calls.",
      buildGpuKernelsPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "loom-gpu-to-llvm-pipeline",
      "kernels -> llvm: NVVM, cubin, host code with mgpu* calls.",
      buildGpuToLLVMPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "loom-lower-to-cuda-pipeline",
      "bufferized -> lowered (NVIDIA GPU): the two above.",
      buildLowerToCudaPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "loom-cuda-pipeline",
      "train -> lowered: every NVIDIA GPU lowering stage.", buildCudaPipeline);
}
