//===- Passes.td - Distribution passes ---------------------*- tablegen -*-===//
#ifndef LOOM_PASSES_DISTRIBUTE_PASSES_TD
#define LOOM_PASSES_DISTRIBUTE_PASSES_TD

include "mlir/Pass/PassBase.td"

def DataParallelPass : Pass<"loom-data-parallel", "mlir::ModuleOp"> {
  let summary = "Averages gradients (and the loss) over data-parallel ranks.";
  let description = [{
    Runs after `--loom-autodiff`. Declares `comm.mesh @<mesh> shape = [ranks]
    axes = [<axis>]` (or uses an existing mesh with that axis) and makes
    `@loss_and_grad` return the mean over the axis of the loss and of every
    gradient, with one `comm.all_reduce ... mean` each. They are issued in
    the order the backward pass produces the values (ties: result order), a
    function of the IR alone, so every rank issues them identically.

    With R ranks each taking B rows, the step then matches one rank taking
    the R·B rows of the global batch (global-batch semantics).
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Data-parallel ranks (the mesh size when the pass creates it).">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the mesh symbol.">,
    Option<"axis", "axis", "std::string", /*default=*/"\"dp\"",
           "Mesh axis the gradients are averaged over.">,
  ];
  let statistics = [
    Statistic<"numAllReduces", "num-all-reduces", "Collectives inserted">,
  ];
}

def TensorParallelPass : Pass<"loom-tensor-parallel", "mlir::ModuleOp"> {
  let summary = "Megatron-style tensor parallelism: each attention's heads "
                "and each MLP's hidden units split over the tp ranks.";
  let description = [{
    Runs on the model before `--loom-autodiff` and splits every block it
    recognises by the shape of the IR (not by names) as Megatron-LM does
    (docs/layouts.md):

    - attention: `loom.linear` (fused q, k, v) → `loom.split` in 3 →
      reshape to heads → transpose → `loom.attention` → transpose → reshape
      → `loom.linear`: rank r computes heads [r·H/T, (r+1)·H/T): its rows
      of each of the q, k and v blocks of the first weight and bias, its
      columns of the second weight;
    - MLP: `loom.linear` → `loom.gelu` (or relu, tanh) → `loom.linear`:
      rank r computes hidden units [r·F/T, (r+1)·F/T).

    The first linear reads its input through `comm.fan_out` (its gradient
    is summed over the tp ranks) and multiplies by the rank's rows of its
    weight; the second multiplies by the rank's columns without bias, a
    `comm.all_reduce ... sum` adds the ranks' partial products, and the
    bias is added to the sum. Per block, one all-reduce in the forward pass
    and one in the backward pass, as in Megatron-LM.

    Each rank stores only its part of a split weight: the `loom.param`
    takes the part's type and `#loom.tensor_split` (which part of which
    whole), so its gradient and optimizer state are the part's too.
    Weights read by anything else (tied embeddings) are not split.

    Declares `comm.mesh @<mesh> shape = [dp, ranks] axes = ["dp", "tp"]`;
    `--loom-data-parallel` then averages over its "dp" axis. A block whose
    heads (or hidden units) the ranks cannot share equally is an error, as
    is a model in which no block is found.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Tensor-parallel ranks (the mesh's tp axis).">,
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "Data-parallel ranks (the mesh's dp axis).">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the mesh symbol.">,
  ];
  let statistics = [
    Statistic<"numAttentions", "num-attentions", "Attentions split by heads">,
    Statistic<"numMlps", "num-mlps", "MLPs split by hidden units">,
  ];
}

def SequenceParallelPass : Pass<"loom-sequence-parallel", "mlir::ModuleOp"> {
  let summary = "Megatron-LM's sequence parallelism: the layer norms and "
                "residual adds between tensor-parallel blocks on each rank's "
                "share of the tokens.";
  let description = [{
    Runs after `--loom-tensor-parallel`, before `--loom-autodiff`. Viewing
    the activations [..., D] as [N, D] (N tokens), each tensor-parallel
    all-reduce that ends a row-parallel layer becomes a
    `comm.reduce_scatter ... sum dim = 0` (each rank gets the sum for its
    N/T tokens), the token-wise ops that follow (`loom.add`,
    `loom.layernorm`, whose other operands are vectors over D) run on those
    parts, an activation they also read is cut where it is made
    (`comm.shard`), the parameters they read are fanned out (each rank saw
    its tokens only: their gradients are summed over the ranks), and the
    `comm.fan_out` that starts a column-parallel layer becomes a
    `comm.all_gather ... dim = 0` of the parts; any other reader gets the
    gathered whole. The same bytes cross the links as without it; the
    activations between the blocks take 1/T of the memory. N must divide
    by T.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the tensor-parallel mesh.">,
  ];
  let statistics = [
    Statistic<"numRegionValues", "num-region-values",
              "Activations computed on token parts">,
  ];
}

def PipelineSplitPass : Pass<"loom-pipeline-split", "mlir::ModuleOp"> {
  let summary = "Pipeline parallelism, first step: the model cut into "
                "balanced stages, one nested module per stage.";
  let description = [{
    Runs on the model before `--loom-autodiff`. The ops of `@loss` are cut
    where a single value (the activation, e.g. a transformer's residual
    stream between two blocks) is all that flows from the ops before to
    the ops after; of those places, the `stages - 1` that make the costliest
    stage cheapest (the cost model's FLOPs, `passes/Analysis/CostModel.h`)
    are chosen. Each stage becomes a nested `builtin.module @pp<s>` holding
    the parameters it reads and a `@loss` of its ops: it receives the
    activation from the stage before (`comm.recv ... peer = -1`), sends its
    own to the stage after (`comm.send ... peer = 1`), and all but the last
    return a zero loss. A parameter read by two stages (a tied embedding) is
    declared in both. The model's batch is one micro-batch
    (`--loom-pipeline-schedule` runs `micro-batches` of them per step).

    Declares `comm.mesh @<mesh> shape = [dp, stages(, tp)] axes = ["dp",
    "pp"(, "tp")]` in each stage (a tp axis from `--loom-tensor-parallel`
    stays innermost). Fewer places to cut than `stages - 1` is an error.
    `--loom-pipeline-merge` puts the stages' training steps back into one
    module.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "Pipeline stages (the mesh's pp axis).">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches per step (recorded for --loom-pipeline-schedule).">,
    Option<"dp", "dp", "int64_t", /*default=*/"1",
           "Data-parallel ranks (the mesh's dp axis).">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the mesh symbol.">,
  ];
}

def PipelineSchedulePass : Pass<"loom-pipeline-schedule", "mlir::ModuleOp"> {
  let summary = "Pipeline parallelism, second step: one stage's micro-batches "
                "in the 1F1B order.";
  let description = [{
    Runs, after `--loom-autodiff`, on each stage module of
    `--loom-pipeline-split` (modules without `loom.pipeline_stage` are left
    alone). `@loss_and_grad` then holds one micro-batch's forward ops
    followed by its backward ops; this pass makes it (and `@loss`) take the
    step's whole batch, `micro_batches` times the model's, cut into
    micro-batches along dimension 0, and run them in the one-forward-
    one-backward order of PipeDream-Flush / Megatron-LM: stage s of P runs
    `min(P - 1 - s, M)` forwards, then alternates one forward and one
    backward, then runs the backwards left. The schedule is fixed here, the
    same table on every rank of a stage, and its transfers pair up between
    neighbouring stages (sends never wait, docs/layouts.md). The
    micro-batches' losses and gradients are summed in micro-batch order and
    divided by M; the loss is summed over the stages (the last one's; the
    others contribute 0) so that every rank reports it, and the gradient of
    a parameter two stages read is exchanged between them and summed in the
    order one rank's backward pass sums it.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PipelineMergePass : Pass<"loom-pipeline-merge", "mlir::ModuleOp"> {
  let summary = "Pipeline parallelism, last step: the stages' entry points "
                "in one module.";
  let description = [{
    Moves the contents of `--loom-pipeline-split`'s stage modules into the
    module that holds them: each function `@<name>` of stage s becomes
    `@<name>_pp<s>`, the entry point `<name>.pp<s>` (the runtime calls the
    ones of its stage, docs/artifact.md),
    a parameter declared by several stages is declared once with
    `pipeline_stages = [...]` (one stage's: `[s]`), and the module gets
    `loom.pipeline = {stages, micro_batches}`.
  }];
}

def PartitionSequencesPass : Pass<"loom-partition-sequences", "mlir::ModuleOp"> {
  let summary = "Attention over documents placed on the ranks by a per-step "
                "planner: each rank's queries against the keys of all ranks.";
  let description = [{
    Runs on a model with documents (`@loss` inputs `segments` and
    `positions`, e.g. `gpt:...,docs=1`) before `--loom-autodiff`, and makes
    its attention independent of where the tokens lie (docs/sequences.md):
    the runtime's per-step planner then places each step's documents on the
    ranks, short ones whole and long ones in contiguous pieces on several
    ranks, and a rank's `batch x seq` tokens are one flat list of pieces.
    `segments` then holds each token's document in the step (unique over
    the ranks) and `positions` its position in the document (not in the
    piece).

    Every `loom.attention ... segments %s causal` becomes a
    `loom.document_attention` of the rank's queries `[B, H, T, Dh]` as one
    sequence `[H, B·T, Dh]` against the keys and values of all ranks
    (`comm.all_gather` along the batch, rank order) as one sequence
    `[H, R·B·T, Dh]`: a query sees the keys of its document at its
    position or before, on any rank; the result goes back to
    `[B, H, T, Dh]`. The documents and positions of the keys are gathered
    once per step. `--loom-autodiff` takes the gradient of each gather to
    be a `comm.reduce_scatter ... sum`: every rank's keys receive the
    gradients of the queries of all ranks.

    With one rank nothing is gathered: the rank's rows are still one
    sequence of documents, so a document may continue from one row into
    the next (the reference a run on R ranks is compared against).

    The module's `loom.task` gets `partitioned = true`, which the manifest
    carries to the runtime (`task.partitioned`). Every rank issues the same
    gathers in the same order: they depend on the IR alone.

    On the CPU target the attention is the runtime's blocked kernel, whose
    work is each document's queries against that document's keys (what the
    planner balances); on others it is the dense masked attention over all
    gathered keys.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "Data-parallel ranks the documents are placed on.">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the mesh symbol.">,
    Option<"axis", "axis", "std::string", /*default=*/"\"dp\"",
           "Mesh axis of the ranks.">,
  ];
  let statistics = [
    Statistic<"numAttentions", "num-attentions",
              "Attentions made to read the keys of all ranks">,
  ];
}

def ShardStatePass : Pass<"loom-shard-state", "mlir::ModuleOp"> {
  let summary = "ZeRO: each rank keeps and updates 1/N of the optimizer "
                "state (stage 1), receives 1/N of the gradients (stage 2) "
                "and stores 1/N of the parameters (stage 3).";
  let description = [{
    Runs on a data-parallel train module (after `--loom-data-parallel` and
    `--loom-add-optimizer`) and shards the optimizer over the mesh axis's N
    ranks, as DeepSpeed's ZeRO does (docs/zero.md):

    - stage 1: every `loom.adamw` / `loom.sgd` of `@train_step` becomes the
      same update of this rank's slice of the parameter (`slice` form, its
      state tensors slice-sized), and a `comm.all_gather` of the updated
      slices gives the new parameter (`loom.set_param`);
    - stage 2: besides, `@train_step` calls a private copy of
      `@loss_and_grad`, `@loss_and_grad_shards`, in which each gradient's
      `comm.all_reduce ... mean` is a `comm.reduce_scatter ... mean`, so a
      rank receives only its slice; the gradient norm sums the squares of
      the slices and then over the ranks (`comm.all_reduce ... sum`);
    - stage 3: besides, each rank stores only its slice of every parameter:
      the `loom.param` takes the slice's type (its own kept as
      `loom.full_type`), every `loom.get_param` becomes a read of the slice
      and a `comm.all_gather` placed just before the value's first use, and
      in `@loss_and_grad_shards` the backward pass gathers a parameter it
      reads again rather than keeping the forward's copy alive; the updates
      are the ordinary in-place ones, on the slices. The gathers go in
      units: the parameters one op reads first, or with `bucket-mib=B`
      consecutive parameters (in the order of their first uses) whose
      gathered bytes fit B MiB, which share one `comm.all_gather` (their
      slices concatenated, gathered to N x S and split by columns). With
      `prefetch=k` each unit's reads and gather move up to the first use
      of the unit k before it (the overlap passes then start it there), so
      at most k units of gathered parameters wait ahead of their use.

    A parameter of n elements is flattened and padded with zeros to N·s
    elements, s = ceil(n / N): rank r (`comm.group_rank`) owns elements
    [r·s, r·s + s). Any n on any N works; zero-size parameters keep their
    whole (empty) update. The collectives depend on the IR alone, so every
    rank issues them in the same order; `--loom-bucket-collectives`,
    `--loom-async-collectives` and `--loom-schedule-overlap` place them
    like the all-reduces when they run after this pass.

    The module gets `loom.zero = #loom.zero<stage, mesh, ranks, params>`,
    from which the manifest marks the sharded state for the runtime.

    With stage 1 the parameters and the loss are bit-identical to plain
    data parallelism (the same all-reduced gradient, the same elementwise
    update); with stage 2 the gradient is summed by a reduce-scatter
    instead (the same sums on 2 ranks; on more, MPI may order them
    otherwise) and the norm in another order (its last bits differ).
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"1",
           "ZeRO stage: 1 (optimizer state), 2 (and gradients) or 3 (and "
           "parameters).">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"world\"",
           "Name of the mesh symbol.">,
    Option<"axis", "axis", "std::string", /*default=*/"\"dp\"",
           "Mesh axis the state is sharded over.">,
    Option<"prefetch", "prefetch", "int64_t", /*default=*/"0",
           "Stage 3: gather each unit of parameters this many units "
           "ahead of its use (0: just before it).">,
    Option<"bucketMiB", "bucket-mib", "double", /*default=*/"0",
           "Stage 3: gather consecutive parameters together up to this "
           "many MiB of gathered values (0: one gather per parameter).">,
  ];
  let statistics = [
    Statistic<"numShardedParams", "num-sharded-params",
              "Parameters whose optimizer state is sharded">,
    Statistic<"numReduceScatters", "num-reduce-scatters",
              "Gradient all-reduces turned into reduce-scatters">,
    Statistic<"numParamGathers", "num-param-gathers",
              "All-gathers of sharded parameters before their uses">,
    Statistic<"numGatherBuckets", "num-gather-buckets",
              "All-gathers that gather several parameters (bucket-mib)">,
  ];
}

def CO2Pass : Pass<"loom-co2", "mlir::ModuleOp"> {
  let summary = "CO2: local steps, and an outer step fed by a one-step-stale "
                "all-reduce that overlaps the next local steps.";
  let description = [{
    Runs on a data-parallel train module (after `--loom-data-parallel` and
    `--loom-add-optimizer`) and turns it into CO2 (Sun et al., ICLR 2024):

    - the inner step (`@train_step`) no longer communicates: every
      `comm.all_reduce` of `@loss_and_grad` is removed, so each rank updates
      its own copy of the model with the inner optimizer (its state stays
      local);
    - a new entry `@outer_step(round, co2.mean:<param>...)` applies
      `loom.co2_outer` to every parameter the inner step trains: outer
      momentum on the stale averaged pseudo-gradient, the staleness gap
      penalty and the clip (equations on `loom.co2_outer`);
    - the module gets `loom.co2 = #loom.co2<local_steps, mesh, ranks, ...>`,
      which the manifest carries to the runtime. Every `local_steps` inner steps the
      runtime waits for the previous round's mean all-reduce of the local
      models, which ran on the communication thread during this round's
      local steps, starts this round's, and calls `@outer_step` with the
      previous round's mean (docs/co2.md). Every rank runs the same
      schedule: the rounds are counted in steps.

    `sharded=1` shards the outer state over the ranks (ZeRO-style): instead
    of `@outer_step`, an entry `@outer_shard(co2.round, co2.shard_mean) ->
    co2.shard_out` applies `loom.co2_outer_shard` to one rank's slice of the
    flattened parameters (`shard_elements` = ceil((elements + 1) / ranks):
    the parameters in `loom.co2`'s `params` order, then the round's loss,
    then zero padding; rank r's slice, recorded in `loom.co2`'s
    `shard_offsets` and `shard_sizes`, is what the runtime follows), whose
    state `co2.shard.co2_anchor`,
    `co2.shard.co2_prev_anchor` and `co2.shard.co2_momentum` the rank alone
    keeps. The runtime feeds it from a reduce-scatter of the local models
    and all-gathers the new anchor slices, so each rank keeps 1/N of the
    anchors and the outer momentum.

    `local-steps=0` picks the smallest number of local steps whose compute
    hides the outer all-reduce under the cost model, on the machine the
    module's `loom.machine` describes (`--loom-describe-machine`; FLOPs of
    one inner step at `gflops`, the all-reduce of every parameter over
    `link-gbps` plus `link-latency-us`) and keeps the compute the all-reduce
    takes from the cores while it runs in the background (`comm-cpu` of its
    time: the communication thread's polls, the network stack) under
    `max-overhead` of the round, and reports the estimate as a remark. It
    chooses at most `max-local-steps` (default 48, the end of CO2's
    convergence evidence): where hiding the round would take more, it
    takes that many, says so and how much throughput the unhidden rounds
    leave. The sharded
    round adds one step: its update runs between the reduce-scatter and the
    all-gather, after the step during which the reduce-scatter finished.

    Options: one per line of `passes/Distribute/CO2Options.def`
    (local-steps, outer-lr, outer-momentum, gap-penalty, clip, sharded,
    max-local-steps, max-overhead), which defines each with its default and help once.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
}

def CompressPass : Pass<"loom-compress", "mlir::ModuleOp"> {
  let summary = "Averages gradients compressed: PowerSGD, quantisation, "
                "top-k or bf16 alike, or L-GreCo's per-layer choice.";
  let description = [{
    Runs after `--loom-data-parallel`. Every gradient of a parameter with
    two or more dimensions (seen as a rows x cols matrix, cols its last
    dimension) whose `comm.all_reduce ... mean` the data-parallel pass
    inserted gets a `compress_slot`: its index in the module's
    `loom.compression = #loom.compression<method, ..., params, rows, cols>`.
    Vectors and scalars (biases, norms' gains) stay plain all-reduces, as
    PowerSGD does. The runtime averages each slot with the method (a
    compressed all-reduce keeps its own collective: the bucketing pass
    leaves it alone) and keeps each rank's error feedback; for `lgreco` it
    measures every candidate's error after `warmup` fp32 steps and every
    `every` steps, and solves L-GreCo's knapsack for the methods that cost
    least (time on the link of `loom.machine`, or bytes) within uniform
    PowerSGD rank `rank`'s total error (docs/compression.md).

    Refused: a PowerSGD rank above a compressed gradient's smaller
    dimension (naming it), bits other than 2, 4, 8, a density outside
    (0, 1], lgreco without a warm-up step, gradients that are not f32.

    Options: one per line of `passes/Distribute/CompressOptions.def`
    (method, rank, bits, density, warmup, every, objective).
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let statistics = [
    Statistic<"numCompressed", "num-compressed",
              "Gradients averaged by compressed all-reduces">,
  ];
}

#endif // LOOM_PASSES_DISTRIBUTE_PASSES_TD
