//===- Passes.td - Collective scheduling passes ------------*- tablegen -*-===//
#ifndef LOOM_PASSES_SCHEDULE_PASSES_TD
#define LOOM_PASSES_SCHEDULE_PASSES_TD

include "mlir/Pass/PassBase.td"

def AsyncCollectivesPass : Pass<"loom-async-collectives", "mlir::ModuleOp"> {
  let summary = "Splits every synchronous collective into a start/wait pair.";
  let description = [{
    `comm.all_reduce` becomes `comm.all_reduce_start` immediately followed
    by `comm.wait` (likewise for reduce_scatter, all_gather, broadcast). The
    program means the same; `--loom-schedule-overlap` then moves the halves
    apart.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let statistics = [
    Statistic<"numSplit", "num-split", "Collectives split into start/wait">,
  ];
}

def BucketCollectivesPass : Pass<"loom-bucket-collectives", "mlir::ModuleOp"> {
  let summary = "Fuses small all-reduces and reduce-scatters into flat "
                "buckets.";
  let description = [{
    Consecutive `comm.all_reduce` ops (in program order) with the same mesh,
    axes, reduction and float element type are flattened, concatenated into
    one buffer of at most `max-mib` MiB, reduced by a single
    `comm.all_reduce` and split back. Consecutive `comm.reduce_scatter` ops
    of 1-D tensors (ZeRO's gradients, `--loom-shard-state`) likewise: each
    operand, N slices of s elements, is viewed as an N x s matrix, the
    matrices are concatenated side by side into N x S, flattened row by row
    and reduce-scattered at once, and the received S elements are split into
    the members' slices: every rank receives exactly its slice of each
    member. The grouping depends only on program order and sizes,
    so every rank forms the same buckets. A collective larger than the
    threshold stays alone; a collective whose operand is produced after an
    earlier member's result is used starts a new bucket.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect",
                           "::mlir::loom::LoomDialect"];
  let options = [
    Option<"maxMiB", "max-mib", "double", /*default=*/"25.0",
           "Largest bucket in MiB.">,
  ];
  let statistics = [
    Statistic<"numBuckets", "num-buckets", "Buckets formed">,
    Statistic<"numFused", "num-fused",
              "All-reduces and reduce-scatters fused into buckets">,
  ];
}

def ScheduleOverlapPass : Pass<"loom-schedule-overlap", "mlir::ModuleOp"> {
  let summary = "Starts collectives early and waits for them late.";
  let description = [{
    In every function, moves each `*_start` up to just after the definition
    of its operand, together with the reshapes and concat that pack a
    bucket's operand (but never above an earlier start: the order of
    collectives is the program order, identical on every rank), and each
    `comm.wait` down to just before the first use of its result. When the
    bytes in flight would exceed `max-inflight-mib`, the oldest collective
    is waited before the next one starts. The cost model (FLOPs per op,
    bytes over the link with its latency per collective, on the machine the
    module's `loom.machine` describes: `--loom-describe-machine`) estimates
    the compute hidden behind each collective and is reported as a remark
    with `emit-remarks`.
  }];
  let dependentDialects = ["::mlir::loom::comm::CommDialect"];
  let options = [
    Option<"maxInflightMiB", "max-inflight-mib", "double", /*default=*/"256.0",
           "Cap on bytes in flight.">,
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Report each collective's estimated overlap as a remark.">,
  ];
}

#endif // LOOM_PASSES_SCHEDULE_PASSES_TD
