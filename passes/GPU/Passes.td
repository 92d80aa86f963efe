//===- Passes.td - GPU loop nest and kernel passes ---------*- tablegen -*-===//
#ifndef LOOM_PASSES_GPU_PASSES_TD
#define LOOM_PASSES_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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

    A merged loop becomes one kernel, and every value it uses from outside
    (a buffer, a view, an index; not a constant, which is sunk into the
    kernel) one of the kernel's parameters. Every thread loads all of
    them on entry (the NVPTX backend loads parameters in the entry block),
    and PTX before ISA 8.1 allows a kernel 4352 bytes of them; the AdamW
    updates of a 12-layer GPT's 148 parameters alone use 900 buffers. So a
    run is cut where the next member would take the merged loop past
    `max-kernel-arguments` such values: 64 by default, since at 384 the
    parameter loads cost each thread more than its one element (the
    12-layer GPT-2's three kernels of 384 took 15 ms of its step on an
    H200, and its steps went from 113.7 to 99.1 ms at 64).

    A thread finds its member by halving: `scf.if` on the middle member's
    start, down to one member, whose body runs under its own end (log2 of
    the members comparisons per thread; testing each range in turn made a
    12-layer GPT's merged optimizer kernel cost more per thread than its
    work: 20 ms of a 159 ms step on an H200).

    Example: the AdamW updates of a bias and of a weight, 256 and 65536
    elements, become one loop of 256 + 65536 iterations, the bias on those
    below 256 and the weight on the others (shifted down by 256).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block: members start at multiples of it">,
    Option<"maxKernelArguments", "max-kernel-arguments", "int64_t",
           /*default=*/"64",
           "The most values from outside a merged loop may use (its "
           "kernel's parameters, which every thread loads; at most 543: "
           "8 bytes each within PTX's 4352)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numFused", "num-fused", "Loops merged into others">,
    Statistic<"numMerged", "num-merged", "Merged loops made">,
    Statistic<"numCut", "num-cut",
              "Runs cut to keep a kernel's parameters in bounds">,
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

    A kernel that prints the same as one already merged but for its name
    (the same loop nest in another layer: every layer's kernels take their
    buffers as arguments) is not merged again; its launches go to the
    first. A constant the merged module already has with the same value is
    shared rather than renamed, so the kernels that read it stay equal.
    GPT-2-124M's 12 layers then cost ptxas about what one does.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numMerged", "num-merged", "Kernels moved into the merged module">,
    Statistic<"numShared", "num-shared",
              "Kernels dropped for an equal one already merged">,
  ];
}

def SinkDynamicViewsPass
    : Pass<"loom-sink-dynamic-views", "mlir::func::FuncOp"> {
  let summary = "Moves views with runtime offsets into the kernels that "
                "read them.";
  let description = [{
    Runs before `gpu-kernel-outlining`. A kernel takes its memrefs as bare
    pointers (`use-bare-ptr-memref-call-conv`), which needs a layout known
    at compile time; a `memref.subview` (or `memref.reinterpret_cast`)
    whose offset or strides are runtime values, such as ZeRO's slice of a
    parameter at rank × slice size (`--loom-shard-state`), has none. Each
    such view used inside a `gpu.launch` is cloned into its body, so the
    kernel takes the view's source and its offset instead.

    Example: `%v = memref.subview %p[%off] [4] [1] : memref<8xf32> to
    memref<4xf32, strided<[1], offset: ?>>` used in a launch becomes the
    same subview at the top of the launch body, of `%p` and `%off`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
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

#endif // LOOM_PASSES_GPU_PASSES_TD
