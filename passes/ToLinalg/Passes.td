//===- Passes.td - train -> linalg passes ------------------*- tablegen -*-===//
#ifndef LOOM_PASSES_TOLINALG_PASSES_TD
#define LOOM_PASSES_TOLINALG_PASSES_TD

include "mlir/Pass/PassBase.td"

def DecomposePass : Pass<"loom-decompose", "mlir::ModuleOp"> {
  let summary = "Rewrites composite loom ops into primitive loom ops.";
  let description = [{
    `loom.linear`, `loom.layernorm`, `loom.softmax`, `loom.attention` and
    `loom.cross_entropy` become matmuls, elementwise ops and reductions
    (numerically stable: softmax and cross-entropy subtract the row maximum).
    Runs after autodiff, so gradients were built from the composite ops.

    `loom.document_attention` and its gradient become the masked dense
    attention too, unless `keep-runtime-kernels` (the CPU target in f32 or
    f64): then they stay for the bufferization, which makes them calls of
    the runtime's blocked kernel.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"keepRuntimeKernels", "keep-runtime-kernels", "bool",
           /*default=*/"false",
           "Keep the ops the CPU runtime implements (loom.document_attention "
           "and its gradient) for the bufferization to call.">,
  ];
}

def LowerEntryPointsPass : Pass<"loom-lower-entry-points", "mlir::ModuleOp"> {
  let summary = "Gives every entry function the runtime's buffer calling convention.";
  let description = [{
    Rewrites each function marked `loom.entry` into the ABI of
    `runtime/include/loom/runtime/abi.h`: it takes one memref per parameter,
    optimizer state tensor, step, input and output (in that order, recorded
    in the `loom.abi` attribute) and returns nothing. Parameter reads become
    `bufferization.to_tensor` of their buffer; every op implementing
    `OptimizerOpInterface` (`loom.adamw`, `loom.sgd`, CO2's outer updates)
    names its state tensors and becomes the one fused `linalg.generic` its
    `buildUpdate` builds (the pass names no optimizer); all new values are written back with
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
    `--loom-lower-gemm-to-runtime` can no longer hand to BLAS. Nor is a
    producer that a named op also uses fused into a generic consumer: it
    stays materialised for the named op, and the consumer would recompute
    it from the producer's operands, keeping those alive as well (the
    backward pass recomputing attention probabilities from the scores kept
    a second 16x8x256x256 tensor per layer of the bench GPT; reading them
    instead took the step's temporaries from 538.6 to 410.8 MiB). Nor is a
    fusion made that would have more than `max-operands` operands: on a GPU
    they are one kernel's parameters, which PTX bounds (4352 bytes), and a
    48-layer GPT's gradient norm, 581 squares summed in one chain, became
    a kernel that ptxas refused. Cut there, a chain keeps its order: the
    partial result goes through a buffer of its element type.
  }];
  let options = [
    Option<"maxOperands", "max-operands", "int64_t", /*default=*/"256",
           "Most operands (inputs and outputs) of a fused op">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def OutlineLayersPass : Pass<"loom-outline-layers", "mlir::ModuleOp"> {
  let summary = "Compiles the repeated runs of each entry (a model's layers) once.";
  let description = [{
    A model's layers repeat the same ops on their own parameters: forward,
    backward, the gradient norm's terms, the optimizer updates. Each stage
    after this one worked on every copy (a 48-layer GPT took 6.7x the
    12-layer compile time). This pass finds, in each entry's block, runs of
    ops that repeat with a period (from the distances between equal ops),
    checks that each repetition is the same computation on its own values,
    and moves every group of two or more equal repetitions into one private
    function (`loom.outlined`), called once per repetition with `no_inline`.

    A repetition holds side-effect-free ops (with regions, such as
    `linalg.generic`), calls of earlier such functions, and writes of new
    values into the entry's own buffers (`bufferization.
    materialize_in_destination` into an argument, which moves into the
    function with the buffer as an argument and so happens where it did).
    `loom.get_param` reads stay in the entry, before the call, and become
    arguments; constants are copied into the function. Collectives and any
    other op with effects end a run: a repetition never holds a collective,
    and their order is the entry's. Identical functions (the forward pass of
    `loss` and of `train_step`) are one. Arguments are static tensors,
    scalars and the entry's buffers, results static tensors;
    `--loom-lower-layer-calls` gives them buffers. The pipeline runs it
    twice: on the loom ops, then on the lowered entries (the optimizer
    updates and their writes). A repetition needs `min-ops` ops besides
    calls of earlier functions: runs of calls alone are left to
    `--loom-roll-layer-calls`, which makes them a loop.

    Example: each layer of a GPT's `train_step` becomes a call of its
    forward pass, of its backward pass, of its terms of the gradient norm
    and of its parameters' updates (`test/passes/ToLinalg/outline-layers.mlir`).
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"8",
           "Fewest ops of one repetition">,
  ];
  let statistics = [
    Statistic<"numFunctions", "num-functions", "Functions made">,
    Statistic<"numCalls", "num-calls", "Repetitions replaced by calls">,
    Statistic<"numOpsMoved", "num-ops-moved", "Ops moved into the functions">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LowerLayerCallsPass : Pass<"loom-lower-layer-calls", "mlir::ModuleOp"> {
  let summary = "Gives the functions of --loom-outline-layers buffer arguments.";
  let description = [{
    Bufferization runs without function boundaries (the entries take
    buffers already), so each `loom.outlined` function gets them here: a
    tensor argument becomes a memref read through
    `bufferization.to_tensor ... restrict`, a tensor result a memref
    argument after the others, written by
    `bufferization.materialize_in_destination`. A call passes its tensors
    with `bufferization.to_buffer ... read_only` and allocates each result's
    buffer (`memref.alloc`, which the caller's arena plan then places).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // LOOM_PASSES_TOLINALG_PASSES_TD
