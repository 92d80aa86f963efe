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
    `--loom-lower-gemm-to-runtime` can no longer hand to BLAS. Nor is a
    producer that a named op also uses fused into a generic consumer: it
    stays materialised for the named op, and the consumer would recompute
    it from the producer's operands, keeping those alive as well (the
    backward pass recomputing attention probabilities from the scores kept
    a second 16x8x256x256 tensor per layer of the bench GPT; reading them
    instead took the step's temporaries from 538.6 to 410.8 MiB).
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

def DuplicateInitsPass : Pass<"loom-duplicate-inits", "mlir::func::FuncOp"> {
  let summary = "Gives each destination its own empty tensor or zero fill.";
  let description = [{
    CSE merges identical `tensor.empty` ops and `linalg.fill`s of them, so
    ops of one result shape share one destination. Bufferized, that is one
    buffer, alive until its last use, which every op writing into it copies
    first (a GPT's attention GEMMs each copied a 32 MiB zero tensor that
    stayed allocated all step). Runs before bufferization: each use of such
    a `tensor.empty` or `linalg.fill` (of a `tensor.empty`) as a
    destination (`outs`) gets its own copy of it, placed just before the
    user (the original goes when nothing else reads it). Then every op
    bufferizes to a fresh buffer, allocated and filled where it is
    needed.

    Example: two `linalg.batch_matmul`s with `outs(%zero)`, where `%zero =
    linalg.fill ins(%cst) outs(%empty)`, each get their own `tensor.empty`
    and `linalg.fill`.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numDuplicated", "num-duplicated", "Destinations duplicated">,
  ];
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

def SplitReductionsPass : Pass<"loom-split-reductions", "mlir::func::FuncOp"> {
  let summary = "Splits reductions with few outputs into two parallel stages.";
  let description = [{
    On a GPU each output of a reduction gets one thread, which loops over
    the reduced elements. A bias gradient (4096 rows summed into 256
    outputs) or a gradient norm (a full reduction) then runs on a few
    hundred threads, or one. For each `linalg` op on tensors with one
    result, reduction iterators and fewer than `threads` / 8 outputs, this
    pass
    - collapses several contiguous reduction dimensions into one
      (`linalg::collapseOpIterationDims`), so `16x256x256 -> 256` reduces
      4096 rows;
    - splits the reduction of K elements with upstream
      `linalg::splitReduction` into a partial reduction with P times as
      many outputs (each reducing K / P elements, strided by P so that
      neighbouring threads read neighbouring elements) and a reduction of
      the P partials per output. P is the power of two nearest below
      sqrt(K), at most `threads` / outputs and dividing K, so neither stage
      loops much longer than the other.

    Ops whose body reads `linalg.index`, with dynamic shapes, or whose
    combiner upstream does not recognise are left alone, and so are
    `linalg.matmul` and `linalg.batch_matmul`, however few their outputs:
    those become cuBLAS calls (`loom-lower-gemm-to-runtime`). The sums are
    reassociated, so results differ from the one-loop order by rounding.

    Example: `linalg.reduce ins(tensor<4096x256xf32>) outs(tensor<256xf32>)
    dimensions = [0]` becomes a `linalg.generic` from `tensor<64x64x256xf32>`
    to `tensor<64x256xf32>` (16384 outputs) and one from there to
    `tensor<256xf32>`.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"65536",
           "Threads that keep the GPU busy: reductions with fewer than "
           "threads/8 outputs are split, into at most this many partials">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numSplit", "num-split", "Reductions split in two stages">,
    Statistic<"numCollapsed", "num-collapsed",
              "Reductions whose reduced dimensions were collapsed into one">,
  ];
}

def InterchangeReductionsPass
    : Pass<"loom-interchange-reductions", "mlir::func::FuncOp"> {
  let summary = "Moves reduction iterators of linalg ops after the parallel ones.";
  let description = [{
    `convert-linalg-to-parallel-loops` nests loops in iteration order, so a
    reduction over the first dimension (`linalg.reduce ... dimensions =
    [0]`, a bias gradient) becomes a sequential `scf.for` around an
    `scf.parallel`: on a GPU, one kernel launch per reduced row. This pass
    generalizes such ops and permutes their iterators (parallel ones first,
    each group in its old order, `linalg::interchangeGenericOp`), so the
    loop nest is one `scf.parallel` over the outputs around the reduction
    loop: one kernel, one thread per output. Ops whose reduction iterators
    already come last are left as they are.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numInterchanged", "num-interchanged", "Ops interchanged">,
  ];
}

def PromoteAccumulatorsPass
    : Pass<"loom-promote-accumulators", "mlir::func::FuncOp"> {
  let summary = "Keeps reduction accumulators in registers across their loop.";
  let description = [{
    A reduction lowered to loops loads and stores its output element in
    every iteration of the reduction loop. LLVM cannot keep it in a
    register because the input's loads might alias the store, so on a GPU
    every iteration waits for its load (and the loop is not unrolled). For
    each `scf.for` whose body loads and then stores one element at
    loop-invariant indices, when nothing else in the loop touches memory
    that could overlap that buffer, the element becomes a loop-carried
    value: loaded before the loop, stored after it. Innermost loops first,
    so a reduction over several dimensions is promoted out of each loop.

    Two buffers are known not to overlap when they view different
    allocations (`memref.alloc`/`alloca`) or different arguments of a
    `loom.entry` function: the runtime gives each argument of an entry its
    own buffer (`runtime/include/loom/runtime/abi.h`). Anything else (a
    call, an op with unknown effects, arguments of other functions) leaves
    the loop as it is.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numPromoted", "num-promoted", "Accumulators promoted">,
  ];
}

def ParallelizeHostLoopsPass
    : Pass<"loom-parallelize-host-loops", "mlir::func::FuncOp"> {
  let summary = "Runs host code that touches memory as one-iteration parallel nests.";
  let description = [{
    What the loop mapping leaves outside parallel nests (a reduction to a
    scalar, the copy or fill of a 0-d buffer) would run on a GPU as a
    one-thread launch of its own (`--loom-gpu-host-to-device`). Each run of
    consecutive `memref.load`, `memref.store` and `scf.for` ops of the
    function's body, with pure arithmetic between, whose accesses are all
    to distinct buffers (as `--loom-promote-accumulators` defines them; so
    no calls) moves into an `scf.parallel` of one iteration after it: a
    kernel like the loop nests around it, which `--loom-fuse-parallel-loops`
    can merge with them. Constants the code after the run also uses stay
    where they are; a run whose values the host uses later (a scalar it
    reads) is left alone. Runs after `canonicalize`, which would inline a
    one-iteration nest.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def FuseParallelLoopsPass
    : Pass<"loom-fuse-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Merges consecutive independent parallel loops into one kernel.";
  let description = [{
    A training step on a GPU launches a thousand small kernels, and every
    launch costs the host a few microseconds whatever its size. Runs of
    consecutive one-dimensional `scf.parallel` loops (from 0 by 1 to a
    constant, as `--loom-collapse-parallel-loops` leaves them) that touch
    disjoint buffers (no loop writes a buffer another reads or writes;
    buffers as in `--loom-promote-accumulators`) become one loop: member k
    runs on its own range of iterations, starting at a multiple of
    `block-size`, so each GPU block runs one member. Between the members
    only ops without memory effects or that allocate may stand; the merged
    loop takes the last member's place.

    Example: the AdamW updates of a bias and of a weight, 256 and 65536
    elements, become one loop of 256 + 65536 iterations with an `scf.if`
    per member.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block: members start at multiples of it">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Loops merged into others">,
    Statistic<"numMerged", "num-merged", "Merged loops made">,
  ];
}

def HoistDeallocsPass : Pass<"loom-hoist-deallocs", "mlir::func::FuncOp"> {
  let summary = "Frees each temporary right after its last use.";
  let description = [{
    Ownership-based deallocation frees a buffer at the end of the block
    that allocated it; a training step is one block, so all its
    temporaries would stay allocated until the step ends. This pass moves
    each `memref.dealloc` of a `memref.alloc` of the same block to just
    after the last op of the block that uses the buffer: through a view,
    inside a nested region (a loop), or through its address (an integer or
    pointer from `memref.extract_aligned_pointer_as_index` and what is
    computed from it, including the handle an asynchronous collective
    returns, so the free follows `loom_rt_wait`). A call that takes the
    address uses the buffer only until it returns unless it returns a
    handle (the runtime ABI, abi.h). A free stays where it is when the
    address is stored to memory or the buffer is used in another block.
    Runs after the loop nests are built (`--loom-fuse-parallel-loops` may
    move loops past each other, not past frees), before loops are lowered.

    Example: the attention scores of layer 0 are freed after the backward
    op that last reads them, and the next layer's scores reuse their
    memory (the runtime's allocator caches blocks by size).
  }];
  let statistics = [
    Statistic<"numHoisted", "num-hoisted", "Frees moved up">,
    Statistic<"numKept", "num-kept", "Frees left in place">,
  ];
}

def PlanBuffersPass : Pass<"loom-plan-buffers", "mlir::ModuleOp"> {
  let summary = "Places a function's temporaries at planned offsets of one "
                "arena.";
  let description = [{
    With each temporary freed after its last use (`--loom-hoist-deallocs`),
    what a step needs at once is the most bytes live at one point. A
    runtime allocator that serves each request on its own holds more:
    blocks cached by size serve only requests of their size (a GPT's step
    held 548 MiB for 411 MiB live). The lifetimes are known at compile
    time, so this pass lays the buffers out itself: every `memref.alloc` of
    the function's entry block with a static shape, an identity layout and
    a byte-sized element type whose one `memref.dealloc` is in the same
    block becomes a buffer at a constant offset of one `memref.alloc` of
    bytes (the arena), allocated at the start of the block and freed
    before its terminator. Each buffer's address comes from the runtime,
    `loom_rt_arena_slice(arena, offset)` (abi.h), not from a
    `memref.view`: LLVM's loop vectorizer does not vectorize loops over
    several views of one allocation (it cannot check them for overlap at
    run time as it does pointers of unrelated origin), and a GPT's step
    ran 20 % slower on views. Two buffers share bytes only if
    one is freed before the other is allocated (their ops' order in the
    block). Offsets come from the greedy-by-size heuristic: the largest
    buffer first, each at the lowest offset, aligned to `alignment` bytes,
    that no buffer it lives with overlaps. Allocations in nested regions,
    returned buffers and buffers freed elsewhere keep their own
    allocations.

    Example: `%a = memref.alloc() : memref<1024xf32>` freed before
    `%b = memref.alloc() : memref<256xf32>` is allocated: both are at
    offset 0 of `memref.alloc() : memref<4096xi8>`, each built from the
    pointer `loom_rt_arena_slice` returns (an LLVM memref descriptor,
    `builtin.unrealized_conversion_cast` to the buffer's type).
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Offsets and the arena's alignment, in bytes (a power of 2)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numPlanned", "num-planned", "Allocations placed in an arena">,
    Statistic<"numKept", "num-kept", "Allocations left as they are">,
    Statistic<"bytesPlanned", "bytes-planned",
              "Bytes of the placed allocations">,
    Statistic<"bytesArena", "bytes-arena", "Bytes of the arenas">,
  ];
}

def ReverseParallelLoopsPass
    : Pass<"loom-reverse-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Runs every scf.parallel backwards (testing on the CPU).";
  let description = [{
    For `loomc --emulate-gpu-loops`, which runs the GPU's loop nests on the
    CPU: the CPU lowering runs an `scf.parallel` in order, so a dependence
    between its iterations (which the GPU would race on, e.g. between two
    nests `--loom-fuse-parallel-loops` merged) would not show. Each
    induction variable is replaced by its mirror image (`last - (iv -
    lb)`), which changes nothing for a loop that is really parallel.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def EmulateGpuLaunchesPass
    : Pass<"loom-emulate-gpu-launches", "mlir::func::FuncOp"> {
  let summary = "Runs gpu.launch kernels on the CPU (testing).";
  let description = [{
    For `loomc --emulate-gpu-kernels`, which compiles a CPU artifact
    through the GPU's kernel stage (`--loom-gpu-kernels-pipeline`, with
    the CPU's GEMMs), so that what that stage produces runs, and is
    compared, without a GPU: the kernels' block and thread index
    arithmetic, guards and fused block ranges, and the host code
    `--loom-gpu-host-to-device` leaves (one-thread kernels, loads moved
    into kernels, snapshots, device copies of constants). Each
    `gpu.launch` becomes loops over its blocks and then its threads (z, y,
    x) around a copy of its body, with the launch's size arguments
    replaced by its operands; `gpu.alloc`, `gpu.dealloc` and `gpu.memcpy`
    become `memref.alloc`, `memref.dealloc` and `memref.copy`.

    Threads run one after another, so a kernel whose threads depend on
    each other gives wrong numbers in one order or the other: with
    `reverse` each loop runs from its last index down (a thread reading
    what a later-numbered one writes), without it in order (a thread
    reading what thread 0 writes, as a load moved into a kernel that
    writes its buffer would). Kernels that synchronise their threads
    (`gpu.barrier`, shuffles) or have workgroup memory are refused: Loom's
    do neither.
  }];
  let options = [
    Option<"reverse", "reverse", "bool", /*default=*/"false",
           "Run blocks and threads from the last down">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numEmulated", "num-emulated", "Launches turned into loops">,
  ];
}

def CollapseParallelLoopsPass
    : Pass<"loom-collapse-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Collapses each outermost scf.parallel into one dimension.";
  let description = [{
    `gpu-map-parallel-loops` maps a loop's first dimension to
    `threadIdx.x`. For a loop nest over a row-major buffer that is the
    slowest-varying index, so the 32 threads of a warp would access 32
    different rows (uncoalesced; up to 8x the memory traffic for f32), and
    dimensions beyond the third would run sequentially in each thread.
    This pass collapses every `scf.parallel` that is not nested in another
    into a single dimension (upstream `collapseParallelLoops`), with the
    last dimension varying fastest: after tiling, consecutive threads
    handle consecutive elements of the innermost dimension, and the whole
    iteration space is spread over a one-dimensional grid.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numCollapsed", "num-collapsed", "Loops collapsed">,
  ];
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
    - gives a constant global that the host uses other than in a kernel
      in its own block (a view of it, its address for cuBLAS, a kernel in a
      nested loop) a device copy, made where it is fetched (`gpu.memcpy`)
      and freed at the end of that block, which the kernels it dominates
      use too (a global used only by kernels becomes a device global of
      the kernel module instead); a mutable global, or a constant used
      outside its block, is an error;
    - copies into each `gpu.launch` the scalar loads and the pure
      computations on them whose results the kernel uses (so the step is
      read on the device, after the kernels before it wrote it), unless a
      host op between could write the loaded buffer; where one could, or
      the launch itself writes the loaded buffer with more than one
      thread, a one-thread launch where the load was copies the value into
      a 0-d buffer that the kernel reads instead;
    - wraps every remaining run of host ops that reads or writes memory in
      a one-thread `gpu.launch`: correct, not fast (a full reduction runs
      on one GPU thread). Loads and pure ops whose values are needed after
      the run (by kernels, into which they move later) stay on the host as
      well, with a copy inside; a load the run then overwrites leaves its
      value in a 0-d buffer for them;
    - fails, naming the op, if the host still accesses a buffer.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numWrapped", "num-wrapped",
              "One-thread launches made of host code">,
    Statistic<"numSunk", "num-sunk", "Ops copied into launches">,
    Statistic<"numSnapshots", "num-snapshots",
              "Loads read before a launch that writes their buffer">,
    Statistic<"numGlobalCopies", "num-global-copies",
              "Constant globals copied to the device for host uses">,
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

def PreciseGpuSqrtPass : Pass<"loom-precise-gpu-sqrt", "mlir::gpu::GPUModuleOp"> {
  let summary = "Correctly rounded sqrt and rsqrt in GPU kernels.";
  let description = [{
    Runs on each `gpu.module` before `convert-gpu-to-nvvm`, which would
    call libdevice's `__nv_sqrtf`/`__nv_rsqrtf` for `math.sqrt`/`math.rsqrt`.
    Without the `__CUDA_PREC_SQRT` reflection those are `sqrt.approx.f32`
    and `rsqrt.approx.f32`, 1-2 ulp off: Adam's denominators, gradient
    norms and layer norms would differ from the CPU path's, and from nvcc's
    default (`-prec-sqrt=true`, what PyTorch's kernels use). This pass
    rewrites f32 and f64 `math.sqrt` into a call of the intrinsic
    `llvm.nvvm.sqrt.rn.{f,d}` (`sqrt.rn`; `llvm.intr.sqrt` would be turned
    back into the libdevice call) and `math.rsqrt` into one over that
    (`div.rn` of `sqrt.rn`), as the CPU path computes both
    (`convert-math-to-llvm`). Other types are left alone.

    Example: `%r = math.rsqrt %x : f32` becomes `%s = llvm.call_intrinsic
    "llvm.nvvm.sqrt.rn.f"(%x) : (f32) -> f32`, `%r = arith.divf %one, %s :
    f32`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
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
