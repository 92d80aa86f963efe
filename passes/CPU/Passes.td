//===- Passes.td - buffers -> LLVM passes for the CPU ------*- tablegen -*-===//
#ifndef LOOM_PASSES_CPU_PASSES_TD
#define LOOM_PASSES_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    ran 20 % slower on views (addresses computed as the arena's plus an
    offset, tried with every loop outlined, crashed the bench GPT's step
    in a loop nest; not pursued). Functions are planned before their
    callers; a function of a model's repeated layers
    (`loom.outlined`) takes its arena as a last argument, which each call
    allocates just around itself, so that the caller's plan places it with
    its own buffers. Two buffers share bytes only if
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
    Statistic<"bytesLive", "bytes-live",
              "Most bytes of planned buffers live at one point (summed over "
              "functions): what an arena without gaps would need">,
  ];
}

def OutlineLoopNestsPass : Pass<"loom-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Makes each loop nest of an entry a function, the same "
                "nests one function.";
  let description = [{
    A training step is one function of thousands of loop nests, and some
    of LLVM's loop passes cost more per nest the larger the function (a
    6-layer GPT's step spent 10 of its 16 s of LLVM optimisation in
    IndVarSimplify and LoopRotate). Every top-level `scf.for` or
    `scf.parallel` without results of an entry function (`loom.entry`)
    becomes a private function called where the nest was: the values it
    uses from outside are its arguments, but for constants, which are
    cloned in (loop bounds stay constants for LLVM), and so are views
    with a runtime offset (a ZeRO slice), which no bare pointer can carry,
    rebuilt from what they are made of; a nest using another such value
    stays where it is. A new function equal
    to one already made but for its name (the same nest over other
    buffers of the same types: every layer's) is not kept; the call goes
    to the first. LLVM then optimises each distinct nest once, whatever
    the model's depth. The functions are `noinline` (LLVM would otherwise
    inline a function called once back into the step) and internal (not
    exported from the artifact). Runs after the
    loops are built (`convert-linalg-to-loops`), before they are lowered.

    Example: the layer norms of layers 0 and 1, two `scf.for` nests over
    `memref<4096x256xf32>` buffers, become two calls of one
    `@train_step_nest_3`.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numOutlined", "num-outlined", "Loop nests replaced by calls">,
    Statistic<"numKept", "num-kept",
              "Nests left in place (a value no argument can carry)">,
    Statistic<"numDistinct", "num-distinct",
              "Functions made (the distinct nests)">,
  ];
}

def OutlineSegmentsPass : Pass<"loom-outline-segments", "mlir::ModuleOp"> {
  let summary = "Cuts each entry's body into functions of a bounded size, "
                "called in order.";
  let description = [{
    After `--loom-outline-loop-nests` an entry is a long run of calls and
    of the buffer descriptors they take (60 000 ops for a 48-layer GPT's
    step), and upstream's conversion to the LLVM dialect and LLVM's code
    generation cost more per op the longer the function: from 12 to 48
    layers they took 8x and 15x as long. This pass cuts the entry's body
    into runs of about `ops` ops and moves each run's ops with effects into
    a private, `noinline`, internal function called where the run was, so
    the cost per op no longer grows with depth, and the parts can be
    compiled on different threads. The same ops with effects run in the
    same order: the results are unchanged.

    - Ops without effects or regions (constants, views, descriptors,
      address casts) and the arena's slices (`loom_rt_arena_slice`, an
      address the runtime computes) belong to no run: each run that uses
      one gets a copy, and the entry keeps those it still uses itself. So
      no memref crosses a call but as an argument.
    - A value a run uses from an earlier one is an argument, returned by
      the run that computes it (a loaded scalar, a collective's handle).
    - Allocations stay in the entry, between runs: static stack buffers
      move ahead of the first run (a stack buffer must outlive the run
      that uses it), heap buffers stay where they are and end a run (a
      returned memref would lose its allocated pointer).
    - An entry where a value would cross a call in a form no bare pointer
      carries (a memref of dynamic shape or layout) is left whole and
      counted in `num-kept`; so is, uncounted, one of fewer than 2 x `ops`
      ops.

    Example: with `ops=2`, an entry of six calls of loop nests over arena
    buffers becomes three calls of `@<entry>_part_0` .. `@<entry>_part_2`,
    each holding two of the calls and its own copy of their buffers'
    descriptors.
  }];
  let options = [
    Option<"ops", "ops", "int64_t", /*default=*/"2000",
           "Ops in one run, counting those without effects where they "
           "are (a top-level op that is larger stays whole)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
  let statistics = [
    Statistic<"numSegments", "num-segments", "Functions made">,
    Statistic<"numRebuilt", "num-rebuilt",
              "Ops cloned into a run that uses them">,
    Statistic<"numKept", "num-kept",
              "Entries left whole (a value no call could carry)">,
  ];
}

def LoadEntryArgumentsPass : Pass<"loom-load-entry-arguments", "mlir::ModuleOp"> {
  let summary = "Makes each entry the exported `void loom_<entry>(void **args)`.";
  let description = [{
    Runs on the CPU stage's buffers, before the LLVM lowering. Every
    function carrying `loom.entry` (its arguments buffers of static shape,
    in the order of the calling convention, abi.h) becomes the exported
    `loom_<entry>`: it takes the runtime's array of buffer addresses and
    loads each address just before the first op of its block that uses the
    buffer. No wrapper calls the entry with one argument per buffer, and no
    address lives from the step's start (--loom-emit-entry-wrappers, which
    the cuda target keeps, did both).

    Example:
    ```mlir
    func.func @train_step(%w: memref<4xf32>) attributes {loom.entry = "train_step"} {
      call @nest(%w) : (memref<4xf32>) -> ()
      return
    }
    // becomes
    func.func @loom_train_step(%args: !llvm.ptr) {
      %slot = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
      %p = llvm.load %slot : !llvm.ptr -> !llvm.ptr
      %w = ... descriptor of %p, cast to memref<4xf32>
      call @nest(%w) : (memref<4xf32>) -> ()
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def RollLayerCallsPass : Pass<"loom-roll-layer-calls", "mlir::ModuleOp"> {
  let summary = "Makes each entry's repeated calls (a model's layers) one "
                "loop.";
  let description = [{
    Runs on the exported entries (`--loom-load-entry-arguments`), before
    they are cut into segments. With a model's layers compiled once
    (`--loom-outline-layers`), an entry still holds one call per layer of
    each layer function and each call's buffers, so it grows with depth.
    This pass finds runs of repetitions of the entry's ops with effects
    (the calls; found as `--loom-outline-layers` finds them) and makes each
    run one `scf.for` over the repetitions:

    - What has no effect (constants, descriptors, address casts), the
      arena's slices and the loads of argument addresses from the
      runtime's array are expressions of the op that uses them, recomputed
      in the loop. Two repetitions are equal when their ops are, operand
      for operand, and every integer in their operands' expressions (an
      argument's index in the array, a slice's offset in the arena) is the
      first repetition's plus the repetition's index times a step.
    - A value one repetition passes to the next is carried by the loop;
      the last one's is the loop's result for later ops.
    - Each repetition's stack buffer becomes a slice of one stack buffer
      for all of them, so that later ops (a layer's backward pass) still
      find every repetition's.
    - A run whose values later ops need in any other form is left as it is.

    The same calls run in the same order on the same buffers: the results
    are unchanged, and so is the order of the collectives.

    Example:
    ```mlir
    %p0 = llvm.load (llvm.getelementptr %args[2])   // layer 0's weight
    call @layer(%p0, %x0, %x1)                      // descriptors elided
    %p1 = llvm.load (llvm.getelementptr %args[3])   // layer 1's weight
    call @layer(%p1, %x1, %x2)
    ...
    // becomes
    scf.for %i = %c0 to %cN step %c1 {
      %k = 2 + %i                                   // the weight's index
      %p = llvm.load (llvm.getelementptr %args[%k])
      call @layer(%p, ...)                          // slices at offsets
    }                                               // stepping with %i
    ```
  }];
  let options = [
    Option<"minCount", "min-count", "int64_t", /*default=*/"3",
           "Repetitions a run needs to become a loop (at least 2)">,
    Option<"minGain", "min-gain", "int64_t", /*default=*/"8",
           "Ops with effects a loop must save">,
  ];
  let statistics = [
    Statistic<"numLoops", "num-loops", "Runs made loops">,
    Statistic<"numIterations", "num-iterations",
              "Repetitions the loops stand for">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
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

#endif // LOOM_PASSES_CPU_PASSES_TD
