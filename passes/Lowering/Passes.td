//===- Passes.td - Lowering passes (loom -> linalg -> LLVM) --*- tablegen -*-===//
#ifndef LOOM_PASSES_LOWERING_PASSES_TD
#define LOOM_PASSES_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def DecomposePass : Pass<"loom-decompose", "mlir::ModuleOp"> {
  let summary = "Rewrites composite loom ops into primitive loom ops.";
  let description = [{
    `loom.linear`, `loom.layernorm`, `loom.softmax`, `loom.attention` and
    `loom.cross_entropy` become matmuls, elementwise ops and reductions
    (numerically stable: softmax and cross-entropy subtract the row maximum).
    Runs after autodiff, so gradients were built from the composite ops.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::arith::ArithDialect"];
}

def LowerEntryPointsPass : Pass<"loom-lower-entry-points", "mlir::ModuleOp"> {
  let summary = "Gives every entry function the runtime's buffer calling convention.";
  let description = [{
    Rewrites each function marked `loom.entry` into the ABI of
    `runtime/include/loom/runtime/abi.h`: it takes one memref per parameter,
    optimizer state tensor, step, input and output (in that order, recorded
    in the `loom.abi` attribute) and returns nothing. Parameter reads become
    `bufferization.to_tensor` of their buffer; `loom.adamw`/`loom.sgd` become
    one fused `linalg.generic` each; all new values are written back with
    `bufferization.materialize_in_destination` at the end of the function,
    after every read. Then the `loom.param` declarations are removed.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LowerToLinalgPass : Pass<"loom-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers primitive loom ops to linalg, tensor and arith.";
  let description = [{
    Elementwise ops (with broadcasting) become `linalg.generic`, matmuls
    `linalg.matmul`/`linalg.batch_matmul` (transposes as indexing maps),
    reductions `linalg.reduce`, shape ops `tensor` reshapes, slices and
    `linalg.transpose`/`linalg.broadcast`. Leaves no loom op behind.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def DemoteMatmulsPass : Pass<"loom-demote-matmuls", "mlir::ModuleOp"> {
  let summary = "Runs f32 matmuls on bf16 operands with f32 accumulation.";
  let description = [{
    Mixed precision as `torch.autocast(dtype=torch.bfloat16)` does it for
    GEMMs: every `linalg.matmul` and `linalg.batch_matmul` on tensors whose
    operands and result are f32 gets its two operands rounded to bf16
    (`arith.truncf`, round to nearest even, in one elementwise
    `linalg.generic` each) and becomes a matmul of bf16 operands into an f32
    result. The products of two bf16 numbers are exact in f32 and the sums
    are f32, which is what cuBLAS computes for bf16 inputs with
    `CUBLAS_COMPUTE_32F`. Everything else (the optimizer and its master
    weights, layer norms, softmax, losses, gradients between GEMMs) stays
    f32; runs after autodiff, so the backward GEMMs are demoted too. f64
    matmuls are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numDemoted", "num-demoted", "Matmuls given bf16 operands">,
  ];
}

def FuseElementwisePass : Pass<"loom-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses chains of elementwise linalg ops, keeping GEMMs intact.";
  let description = [{
    Upstream elementwise fusion, restricted so that a producer is never
    fused into a named contraction (`linalg.matmul`, `linalg.batch_matmul`):
    that would turn the matmul into a `linalg.generic` that
    `--loom-lower-gemm-to-runtime` can no longer hand to BLAS.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def LowerGemmToRuntimePass : Pass<"loom-lower-gemm-to-runtime", "mlir::ModuleOp"> {
  let summary = "Calls the runtime's BLAS for bufferized matmuls.";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on memrefs (plain or
    with transposed operand maps) by a call to `<prefix>_f32/f64`, or
    `<prefix>_bf16` for bf16 operands into an f32 result
    (`--loom-demote-matmuls`):
    `loom_rt_gemm_*`, which the runtime implements with OpenBLAS, or for
    device buffers `loom_rt_gpu_gemm_*` (cuBLAS on the compute stream; same
    arguments, abi.h). Matmuls of other shapes are left for the loop
    lowering.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"loom_rt_gemm\"",
           "The runtime GEMM to call, without its _f32/_f64/_bf16 suffix.">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numGemms", "num-gemms", "Matmuls turned into runtime calls">,
  ];
}

def ApproximateMathPass : Pass<"loom-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replaces f32 exp/log/tanh by vectorisable polynomials.";
  let description = [{
    Upstream polynomial approximations (a few ulp) for f32 `math.exp`,
    `math.log`, `math.tanh` and friends. Calls into libm's scalar versions
    took 40 % of a small GPT step and kept the loops around them from being
    vectorised. f64 math (used by the gradient checks) keeps libm.
  }];
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def FinalizeCommPass : Pass<"loom-finalize-comm", "mlir::ModuleOp"> {
  let summary = "Drops comm.mesh declarations after bufferization.";
  let description = [{
    Bufferization turns every collective into a runtime call; the meshes
    they named have no meaning in the LLVM dialect. Fails, naming the op,
    if a collective was left behind.
  }];
}

def CopiesToLinalgPass : Pass<"loom-copies-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Turns memref.copy into linalg.copy.";
  let description = [{
    Bufferization copies buffers with `memref.copy`, which lowers to a host
    `memcpy` or the runtime's `memrefCopy`. On a GPU the buffers are device
    memory, so the copy must be a kernel like any other loop nest: as a
    `linalg.copy` it follows the elementwise ops onto the GPU.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def GpuHostToDevicePass : Pass<"loom-gpu-host-to-device", "mlir::ModuleOp"> {
  let summary = "Leaves the host no access to device memory.";
  let description = [{
    Runs after `convert-parallel-loops-to-gpu` on functions whose buffers
    are GPU memory (every entry argument and temporary of a `--target=cuda`
    artifact). The host code may still touch memory where the loop mapping
    left it: a full reduction's loop, a 0-d elementwise op, a scalar the
    optimizer reads (the step, the learning rate). This pass
    - turns `memref.alloc`/`dealloc` into `gpu.alloc`/`gpu.dealloc` (the
      runtime's device pool);
    - copies into each `gpu.launch` the scalar loads and the pure
      computations on them whose results the kernel uses (so the step is
      read on the device, after the kernels before it wrote it), unless a
      host op between could write the loaded buffer;
    - wraps every remaining run of host ops that reads or writes memory in
      a one-thread `gpu.launch`: correct, not fast (a full reduction runs
      on one GPU thread);
    - fails, naming the op, if the host still accesses a buffer.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numWrapped", "num-wrapped",
              "One-thread launches made of host code">,
    Statistic<"numSunk", "num-sunk", "Ops copied into launches">,
  ];
}

def MergeGpuModulesPass : Pass<"loom-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Puts every outlined kernel into one gpu.module.";
  let description = [{
    Runs after `gpu-kernel-outlining`, which makes one `gpu.module` per
    kernel. `gpu-module-to-binary` compiles each module on its own (LLVM's
    NVPTX backend, then a ptxas process), so a GPT step with a hundred
    kernels spent most of its compile time starting ptxas, and the runtime
    loaded a hundred cubins. This pass moves each kernel, renamed to its
    old module's (unique) name, into one module `@loom_kernels` and points
    every `gpu.launch_func` at it. Modules holding anything besides one
    `gpu.func`, or with attributes that differ, are left as they are.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged", "Kernels moved into the merged module">,
  ];
}

def EmitEntryWrappersPass : Pass<"loom-emit-entry-wrappers", "mlir::ModuleOp"> {
  let summary = "Adds the `void loom_<entry>(void **args)` C entry points.";
  let description = [{
    Runs on the LLVM dialect, after functions were converted with the bare
    pointer calling convention. For every function carrying `loom.entry`,
    emits an exported `loom_<entry>` that loads one pointer per argument
    from its array and calls the function.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // LOOM_PASSES_LOWERING_PASSES_TD
