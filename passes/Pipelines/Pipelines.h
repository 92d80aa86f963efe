//===- Pipelines.h - Loom's named pass pipelines ----------------*- C++ -*-===//
//
// Every stage of the compiler is a function here and a named pipeline in
// loom-opt; the driver calls the same functions, so `loom-opt
// --loom-<stage>-pipeline` reproduces exactly what `loomc` does.
//
//   model --(train)--> train --(lower-to-linalg)--> linalg
//         --(bufferize)--> bufferized --(lower-to-llvm | lower-to-cuda)-->
//         lowered
//
// (the stage names of passes/Analysis/Stage.h). The lowering pipelines
// start with --loom-check-stage, so IR of an earlier stage is refused with
// a message that says what to run first.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_PIPELINES_PIPELINES_H
#define LOOM_PASSES_PIPELINES_PIPELINES_H

#include "passes/Analysis/MachineOptions.h"
#include "passes/Distribute/CO2Options.h"
#include "passes/Distribute/CompressOptions.h"
#include "passes/Train/OptimizerOptions.h"
#include "passes/Train/ZOOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace mlir::loom {

/// What the train stage is built from, each group handed whole to its pass:
/// bound once per compilation, by loomc from its flags (lib/Driver/
/// Stages.cpp) or by loom-opt from TrainPipelineOptions.
struct TrainOptions {
  OptimizerOptions optimizer;
  int64_t dp = 1;                ///< data-parallel ranks (1: no averaging)
  int64_t tp = 1;                ///< tensor-parallel ranks (1: not split)
  bool sequenceParallel = false; ///< with tp > 1: --loom-sequence-parallel
  int64_t pp = 1;                ///< pipeline stages (1: not pipelined)
  int64_t microBatches = 1;      ///< micro-batches per step (with pp > 1)
  bool overlap = false; ///< bucketed, asynchronous, scheduled all-reduces
  int64_t zero = 0;     ///< ZeRO stage (0: none; 1, 2: --loom-shard-state)
  bool partitionSequences = false; ///< --loom-partition-sequences
  double bucketMiB = 1.0;
  std::optional<CO2Options> co2;           ///< none: no CO2
  std::optional<CompressOptions> compress; ///< none: plain fp32 averaging
  std::optional<ZOOptions> zo; ///< zeroth-order steps instead of autodiff
  MachineOptions machine;      ///< what the cost model assumes
};

/// --loom-train-pipeline's options: the optimizer's and the machine's under
/// their pass flags, CO2's as co2-<flag>, compression's as
/// compress-<flag>, each from its .def file.
struct TrainPipelineOptions : public PassPipelineOptions<TrainPipelineOptions> {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Train/OptimizerOptions.def"
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Analysis/MachineOptions.def"
  Option<int64_t> dp{*this, "dp",
                     llvm::cl::desc("Data-parallel ranks (1: no averaging)"),
                     llvm::cl::init(TrainOptions().dp)};
  Option<int64_t> tp{*this, "tp",
                     llvm::cl::desc("Tensor-parallel ranks "
                                    "(--loom-tensor-parallel; 1: not split)"),
                     llvm::cl::init(TrainOptions().tp)};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("With tp > 1: the norms and residual adds between the "
                     "tensor-parallel blocks on each rank's share of the "
                     "tokens (--loom-sequence-parallel)"),
      llvm::cl::init(false)};
  Option<int64_t> pp{*this, "pp",
                     llvm::cl::desc("Pipeline stages (--loom-pipeline-split; "
                                    "1: not pipelined)"),
                     llvm::cl::init(TrainOptions().pp)};
  Option<int64_t> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Micro-batches per step with pp > 1 (the model's batch "
                     "is one micro-batch)"),
      llvm::cl::init(TrainOptions().microBatches)};
  Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Bucket the gradient all-reduces, split them into "
                     "start/wait and schedule them to overlap with compute"),
      llvm::cl::init(TrainOptions().overlap)};
  Option<int64_t> zero{*this, "zero",
                       llvm::cl::desc("ZeRO stage: 0 (off), 1 (sharded "
                                      "optimizer state), 2 (and gradients) "
                                      "or 3 (and parameters)"),
                       llvm::cl::init(TrainOptions().zero)};
  Option<bool> partitionSequences{
      *this, "partition-sequences",
      llvm::cl::desc("Documents placed on the dp ranks by the runtime's "
                     "planner (--loom-partition-sequences)"),
      llvm::cl::init(false)};
  Option<double> bucketMiB{*this, "bucket-mib",
                           llvm::cl::desc("Largest all-reduce bucket (MiB)"),
                           llvm::cl::init(TrainOptions().bucketMiB)};
  Option<bool> co2{*this, "co2",
                   llvm::cl::desc("CO2 local steps with a stale outer "
                                  "all-reduce (needs dp > 1)"),
                   llvm::cl::init(false)};
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> co2_##NAME{*this, "co2-" FLAG, llvm::cl::desc(HELP),            \
                          llvm::cl::init(DEFAULT)};
#include "passes/Distribute/CO2Options.def"
  Option<bool> compress{*this, "compress",
                        llvm::cl::desc("Compressed gradient averaging "
                                       "(--loom-compress; needs dp > 1)"),
                        llvm::cl::init(false)};
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> compress_##NAME{*this, "compress-" FLAG, llvm::cl::desc(HELP),  \
                               llvm::cl::init(DEFAULT)};
#include "passes/Distribute/CompressOptions.def"
  Option<bool> zo{*this, "zo",
                  llvm::cl::desc("Zeroth-order (MeZO) steps: two forward "
                                 "passes, no backward, no optimizer state"),
                  llvm::cl::init(false)};
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> zo_##NAME{*this, "zo-" FLAG, llvm::cl::desc(HELP),              \
                         llvm::cl::init(DEFAULT)};
#include "passes/Train/ZOOptions.def"

  /// The options above as the pipeline takes them.
  TrainOptions bind() const;
};

/// model -> train: inline helpers, differentiate @loss, average gradients
/// over `dp` ranks, add @train_step.
void buildTrainPipeline(OpPassManager &pm, const TrainOptions &options);

/// The options of the CPU lowering pipelines: numerics (loomc --precision)
/// and the testing variants.
struct PrecisionOptions : public PassPipelineOptions<PrecisionOptions> {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Pipelines/LoweringOptions.def"
  Option<bool> gpuLoops{
      *this, "emulate-gpu-loops",
      llvm::cl::desc("CPU pipelines only, for testing: split reductions and "
                     "build the loop nests as for a GPU (gpuLoopNests), run "
                     "sequentially"),
      llvm::cl::init(false)};
  Option<bool> planBuffers{
      *this, "plan-buffers",
      llvm::cl::desc("Place the temporaries at offsets of one arena planned "
                     "from their lifetimes (--loom-plan-buffers)"),
      llvm::cl::init(true)};
  Option<bool> outlineNests{
      *this, "outline-nests",
      llvm::cl::desc("Each loop nest of an entry a function, the same nests "
                     "one function (--loom-outline-loop-nests): LLVM "
                     "optimises each distinct nest once"),
      llvm::cl::init(true)};
  Option<bool> outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("Each entry's repeated runs (a model's layers) one "
                     "function called per repetition (--loom-outline-layers, "
                     "--loom-lower-layer-calls): the passes after it see one "
                     "copy of a layer"),
      llvm::cl::init(true)};
  Option<bool> rollLayers{
      *this, "roll-layers",
      llvm::cl::desc("Each entry's runs of repeated calls (a model's layers) "
                     "one loop over the repetitions "
                     "(--loom-roll-layer-calls): the entries no longer grow "
                     "with depth"),
      llvm::cl::init(true)};
  Option<int64_t> segmentOps{
      *this, "segment-ops",
      llvm::cl::desc("With outline-nests: cut each entry into functions of "
                     "at most this many ops (--loom-outline-segments); 0: "
                     "leave the entries whole"),
      llvm::cl::init(8000)};
};

/// train -> linalg: inline, decompose composite ops, buffer calling
/// convention, loom -> linalg, [bf16: --loom-demote-matmuls], elementwise
/// fusion.
/// `runtimeKernels`: keep the ops the CPU runtime computes
/// (loom.document_attention) for the bufferization to call (the CPU target
/// in f32 or f64, its loop nests its own).
/// `outlineLayers`: each entry's repeated runs (a model's layers) compiled
/// once (--loom-outline-layers, --loom-lower-layer-calls).
void buildLowerToLinalgPipeline(OpPassManager &pm, bool bf16 = false,
                                bool runtimeKernels = false,
                                bool outlineLayers = false);

/// --loom-bufferize-pipeline's options: the CPU's (the default), the
/// CPU's with reductions split as for a GPU, or the GPU's.
struct BufferizePipelineOptions
    : public PassPipelineOptions<BufferizePipelineOptions> {
  Option<bool> device{*this, "device",
                      llvm::cl::desc("For the NVIDIA GPU target (loomc "
                                     "--target=cuda): reductions split "
                                     "first, nothing on the host stack"),
                      llvm::cl::init(false)};
  Option<bool> gpuLoops{*this, "emulate-gpu-loops",
                        llvm::cl::desc("CPU, for testing: split reductions "
                                       "first, as for a GPU"),
                        llvm::cl::init(false)};
};

/// linalg -> bufferized: one-shot bufferization and deallocation. With
/// `gpuLoops`, reductions are split first as for a GPU.
void buildBufferizePipeline(OpPassManager &pm, bool gpuLoops = false);

/// buffers -> llvm: GEMMs to the runtime, frees after last uses, loops,
/// [bf16: bf16 conversions as integer ops, which every x86 CPU has], LLVM
/// dialect, C wrappers. With `gpuLoops`, the loop nests are the GPU's
/// (gpuLoopNests), which the CPU runs sequentially: a test of those
/// transformations' semantics on the whole training step.
void buildLowerToLLVMPipeline(OpPassManager &pm, const PrecisionOptions &o);

/// train -> llvm: the three above.
void buildCpuPipeline(OpPassManager &pm, const PrecisionOptions &o);

/// The NVIDIA GPU target (loomc --target=cuda; docs/gpu.md).
struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU architecture"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features (ptxas needs "
                                              "+ptx80 for sm_90)"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary: bin (cubin), isa (PTX text, for "
                     "tests), fatbin"),
      llvm::cl::init("bin")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit (ptxas, libdevice)"),
                              llvm::cl::init("/usr/local/cuda")};
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Pipelines/LoweringOptions.def"
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of a mapped "
                                           "loop nest"),
                            llvm::cl::init(256)};
};

/// linalg -> buffers for a GPU: reductions with few outputs split in two
/// stages (--loom-split-reductions), then as buildBufferizePipeline, with
/// nothing on the host stack.
void buildBufferizeForDevicePipeline(OpPassManager &pm);

/// The loop-building part of a func.func pipeline for GPU kernels: linalg on
/// buffers to one-dimensional scf.parallel nests tiled into blocks of
/// `blockSize` threads, reductions as loops inside them.
std::string gpuLoopNests(int64_t blockSize);

/// The PTX features ptxas needs for `chip` (sm_90 needs PTX 8.0).
std::string cudaFeatures(llvm::StringRef chip);

/// buffers -> kernels: linalg on device buffers to gpu.launch (loop nests
/// tiled into blocks of `block-size` threads, leftover host accesses moved
/// onto the GPU), GEMMs to the runtime's cuBLAS.
void buildGpuKernelsPipeline(OpPassManager &pm,
                             const CudaPipelineOptions &options);

/// bufferized (as for a GPU) -> lowered for the CPU through the GPU's
/// kernel stage, for testing it without a GPU (loomc --emulate-gpu-kernels):
/// buildGpuKernelsPipeline with the CPU's GEMMs, every launch as loops
/// over its blocks and threads (--loom-emulate-gpu-launches, from the last
/// down with `reverse`), then as buildLowerToLLVMPipeline (`o.gpuLoops`
/// must be false: the kernel stage builds the loop nests).
void buildEmulatedGpuPipeline(OpPassManager &pm, const PrecisionOptions &o,
                              bool reverse);

/// kernels -> llvm: outline, NVVM, host code to LLVM with mgpu* runtime
/// calls, kernels to a cubin embedded in the module, C wrappers.
void buildGpuToLLVMPipeline(OpPassManager &pm,
                            const CudaPipelineOptions &options);

/// bufferized -> lowered for NVIDIA GPUs: the two above.
void buildLowerToCudaPipeline(OpPassManager &pm,
                              const CudaPipelineOptions &options);

/// train -> llvm for NVIDIA GPUs: lower-to-linalg, bufferize for device
/// buffers (nothing on the host stack), the two above.
void buildCudaPipeline(OpPassManager &pm, const CudaPipelineOptions &options);

/// Registers the pipelines above as --loom-<stage>-pipeline.
void registerPipelines();

} // namespace mlir::loom

#endif // LOOM_PASSES_PIPELINES_PIPELINES_H
