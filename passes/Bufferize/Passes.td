//===- Passes.td - linalg -> buffers passes ----------------*- tablegen -*-===//
#ifndef LOOM_PASSES_BUFFERIZE_PASSES_TD
#define LOOM_PASSES_BUFFERIZE_PASSES_TD

include "mlir/Pass/PassBase.td"

def FinalizeCommPass : Pass<"loom-finalize-comm", "mlir::ModuleOp"> {
  let summary = "Drops comm.mesh declarations after bufferization.";
  let description = [{
    Bufferization turns every collective into a runtime call; the meshes
    they named have no meaning in the LLVM dialect. `comm.group_rank`, which
    has no buffer, becomes a call of `loom_rt_group_rank` here. Fails,
    naming the op, if a collective was left behind.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
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

def SplitDeallocsPass : Pass<"loom-split-deallocs", "mlir::func::FuncOp"> {
  let summary = "Frees a block's own allocations one by one, without alias "
                "analysis.";
  let description = [{
    Ownership-based deallocation ends a training step's block with one
    `bufferization.dealloc` of every buffer the block allocated, thousands
    at 48 layers. Upstream `buffer-deallocation-simplification` splits it
    into one free per buffer only after asking, for every pair of them,
    whether they may alias: quadratic in the step's buffers (4.8 s of a
    48-layer GPT's compile, 0.3 s at 12 layers). This pass, run between the
    two, handles the case that needs no question: a `bufferization.dealloc`
    that retains nothing, whose conditions are all the constant `true` and
    whose buffers are distinct `memref.alloc` results (distinct allocations
    never alias) becomes one `memref.dealloc` per buffer, in its list order,
    exactly what simplification and `bufferization-lower-deallocations`
    make of it. Any other `bufferization.dealloc` is left to them.

    Example: `bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>)
    if (%true, %true)`, with `%a` and `%b` two `memref.alloc`s, becomes
    `memref.dealloc %a` and `memref.dealloc %b`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numSplit", "num-split", "bufferization.dealloc ops split">,
    Statistic<"numFreed", "num-freed", "memref.dealloc ops created">,
  ];
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
    Option<"threads", "threads", "int64_t", /*default=*/"1048576",
           "Threads worth launching (four times what an H100 holds at "
           "once: split, a row's partials read neighbouring elements, "
           "which pays up to 131072 rows): reductions with fewer than "
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

#endif // LOOM_PASSES_BUFFERIZE_PASSES_TD
