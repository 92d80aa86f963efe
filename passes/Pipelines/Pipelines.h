//===- Pipelines.h - Loom's named pass pipelines ----------------*- C++ -*-===//
//
// Every stage of the compiler is a function here and a named pipeline in
// loom-opt; the driver calls the same functions, so `loom-opt
// --loom-<stage>-pipeline` reproduces exactly what `loomc` does.
//
//   model --(train)--> train --(lower-to-linalg)--> linalg
//         --(bufferize)--> buffers --(lower-to-llvm)--> llvm
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_PIPELINES_PIPELINES_H
#define LOOM_PASSES_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::loom {

struct TrainPipelineOptions : public PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("adamw or sgd"),
                                llvm::cl::init("adamw")};
  Option<double> lr{*this, "lr", llvm::cl::desc("Peak learning rate"),
                    llvm::cl::init(1e-3)};
  Option<double> beta1{*this, "beta1", llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::init(1e-8)};
  Option<double> weightDecay{*this, "weight-decay", llvm::cl::init(0.01)};
  Option<double> momentum{*this, "momentum", llvm::cl::init(0.0)};
  Option<int64_t> warmupSteps{*this, "warmup-steps", llvm::cl::init(0)};
  Option<int64_t> decaySteps{*this, "decay-steps", llvm::cl::init(0)};
  Option<double> minLr{*this, "min-lr", llvm::cl::init(0.0)};
  Option<double> clipNorm{*this, "clip-norm", llvm::cl::init(0.0)};
  Option<int64_t> dp{*this, "dp",
                     llvm::cl::desc("Data-parallel ranks (1: no averaging)"),
                     llvm::cl::init(1)};
  Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Bucket the gradient all-reduces, split them into "
                     "start/wait and schedule them to overlap with compute"),
      llvm::cl::init(false)};
  Option<double> bucketMiB{*this, "bucket-mib",
                           llvm::cl::desc("Largest all-reduce bucket (MiB)"),
                           llvm::cl::init(1.0)};
  Option<bool> co2{*this, "co2",
                   llvm::cl::desc("CO2 local steps with a stale outer "
                                  "all-reduce (needs dp > 1)"),
                   llvm::cl::init(false)};
  Option<int64_t> co2LocalSteps{*this, "co2-local-steps",
                                llvm::cl::desc("0: from the cost model"),
                                llvm::cl::init(12)};
  Option<double> co2OuterLr{*this, "co2-outer-lr", llvm::cl::init(0.8)};
  Option<double> co2OuterMomentum{*this, "co2-outer-momentum",
                                  llvm::cl::init(0.0)};
  Option<double> co2GapPenalty{*this, "co2-gap-penalty", llvm::cl::init(2.0)};
  Option<double> co2Clip{*this, "co2-clip", llvm::cl::init(1.0)};
  Option<bool> co2Sharded{*this, "co2-sharded",
                          llvm::cl::desc("Shard CO2's outer state over the "
                                         "ranks"),
                          llvm::cl::init(false)};
  // The cost model of the overlap scheduler and of CO2's local steps
  // (loom/Analysis/MachineSpec.h).
  Option<double> linkGbps{*this, "link-gbps",
                          llvm::cl::desc("Link bandwidth (Gbit/s)"),
                          llvm::cl::init(10.0)};
  Option<double> linkLatencyUs{*this, "link-latency-us",
                               llvm::cl::desc("Collective latency (us)"),
                               llvm::cl::init(50.0)};
  Option<double> commCpu{*this, "comm-cpu",
                         llvm::cl::desc("Compute lost per second of a "
                                        "background collective"),
                         llvm::cl::init(0.2)};
  Option<double> gflops{*this, "gflops",
                        llvm::cl::desc("Compute rate (GFLOP/s)"),
                        llvm::cl::init(50.0)};
};

/// model -> train: inline helpers, differentiate @loss, average gradients
/// over `dp` ranks, add @train_step.
void buildTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &options);

/// The options of the CPU lowering pipelines: numerics (loomc --precision)
/// and the testing variants.
struct PrecisionOptions : public PassPipelineOptions<PrecisionOptions> {
  Option<bool> bf16{*this, "bf16",
                    llvm::cl::desc("Mixed precision: GEMMs on bf16 operands "
                                   "with f32 accumulation "
                                   "(--loom-demote-matmuls)"),
                    llvm::cl::init(false)};
  Option<bool> gpuLoops{
      *this, "emulate-gpu-loops",
      llvm::cl::desc("CPU pipelines only, for testing: split reductions and "
                     "build the loop nests as for a GPU (gpuLoopNests), run "
                     "sequentially"),
      llvm::cl::init(false)};
  Option<bool> lateFrees{
      *this, "late-frees",
      llvm::cl::desc("For comparison: free temporaries at the end of the "
                     "step, where bufferization puts the frees (no "
                     "--loom-hoist-deallocs)"),
      llvm::cl::init(false)};
  Option<bool> planBuffers{
      *this, "plan-buffers",
      llvm::cl::desc("Place the temporaries at offsets of one arena planned "
                     "from their lifetimes (--loom-plan-buffers)"),
      llvm::cl::init(true)};
};

/// train -> linalg: inline, decompose composite ops, buffer calling
/// convention, loom -> linalg, [bf16: --loom-demote-matmuls], elementwise
/// fusion.
void buildLowerToLinalgPipeline(OpPassManager &pm, bool bf16 = false);

/// linalg -> buffers: one-shot bufferization and deallocation. With
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
  Option<bool> bf16{*this, "bf16",
                    llvm::cl::desc("Mixed precision: GEMMs on bf16 operands "
                                   "with f32 accumulation (cuBLAS tensor "
                                   "cores)"),
                    llvm::cl::init(false)};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of a mapped "
                                           "loop nest"),
                            llvm::cl::init(256)};
  Option<bool> lateFrees{*this, "late-frees",
                         llvm::cl::desc("For comparison: no "
                                        "--loom-hoist-deallocs"),
                         llvm::cl::init(false)};
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

/// linalg -> llvm for the CPU through the GPU's kernel stage, for testing
/// it without a GPU (loomc --emulate-gpu-kernels): buffers as for a GPU,
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

/// train -> llvm for NVIDIA GPUs: lower-to-linalg, bufferize for device
/// buffers (nothing on the host stack), the two above.
void buildCudaPipeline(OpPassManager &pm, const CudaPipelineOptions &options);

/// Registers the pipelines above as --loom-<stage>-pipeline.
void registerPipelines();

} // namespace mlir::loom

#endif // LOOM_PASSES_PIPELINES_PIPELINES_H
