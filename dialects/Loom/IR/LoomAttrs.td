//===- LoomAttrs.td - loom dialect attributes --------------*- tablegen -*-===//
//
// Module-level facts that passes record for later passes, the driver and
// the manifest: typed, so that a misspelt or missing field is a verifier
// error at the IR's file:line:col rather than a crash of whoever reads it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_ATTRS_TD
#define LOOM_ATTRS_TD

include "dialects/Loom/IR/LoomBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Loom_Attr<string name, string attrMnemonic>
    : AttrDef<Loom_Dialect, name> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Loom_MachineAttr : Loom_Attr<"Machine", "machine"> {
  let summary = "The machine the cost model assumes";
  let description = [{
    What the passes that reason about time (the overlap scheduler, CO2's
    choice of local steps) assume about the machine, in the spirit of
    MLIR's data-layout attributes: one module attribute, `loom.machine`,
    set once by `--loom-describe-machine` (from `loomc --link` and
    `--calibration`) and read by the cost model (`MachineModel::of`), instead
    of link options passed to each pass. A module without it gets the cost
    model's defaults.

    Example:
    ```mlir
    module attributes {loom.machine = #loom.machine<link_gbps = 1.000000e+00 : f64,
        link_latency_us = 5.000000e+01 : f64, gflops = 5.000000e+01 : f64,
        comm_cpu = 2.000000e-01 : f64>} {
    }
    ```

    **Constraints:**
    - `link_gbps` and `gflops` are positive.
    - `link_latency_us` is not negative.
    - `comm_cpu` (compute lost per second of a background collective) is in
      [0, 1].
  }];
  let parameters = (ins "::mlir::FloatAttr":$link_gbps,
                        "::mlir::FloatAttr":$link_latency_us,
                        "::mlir::FloatAttr":$gflops,
                        "::mlir::FloatAttr":$comm_cpu);
}

def Loom_CO2Attr : Loom_Attr<"CO2", "co2"> {
  let summary = "CO2's schedule, as --loom-co2 decided it";
  let description = [{
    The module attribute `loom.co2` that `--loom-co2` sets: the outer
    step's hyperparameters, the local steps per round and why they were
    chosen, and the mesh the outer all-reduce spans. With `sharded`, also the
    trained parameters in flattening order and each rank's slice of them
    (`shard_offsets`, `shard_sizes`: rank r keeps the outer state of
    `shard_sizes[r]` elements from `shard_offsets[r]`); the manifest records
    this layout and the runtime follows it instead of recomputing it.

    Example:
    ```mlir
    module attributes {loom.co2 = #loom.co2<local_steps = 4,
        outer_lr = 8.000000e-01 : f64, outer_momentum = 0.000000e+00 : f64,
        gap_penalty = 2.000000e+00 : f64, clip = 1.000000e+00 : f64,
        mesh = @world, ranks = 2, local_steps_reason = "",
        sharded = true, params = ["w", "b"], shard_elements = 8,
        shard_offsets = [0, 8], shard_sizes = [8, 7]>} {
    }
    ```

    **Constraints:**
    - `local_steps` is at least 1 and `ranks` at least 2.
    - `outer_lr` is positive, `outer_momentum` in [0, 1), `gap_penalty` and
      `clip` not negative.
    - Sharded: `params` names at least one parameter, `shard_elements` is
      positive, and `shard_offsets` and `shard_sizes` have one entry per
      rank, rank r's slice starting at r x `shard_elements` and holding at
      most `shard_elements` elements.
    - Not sharded: no `params`, `shard_elements` or slices.
  }];
  let parameters = (ins
      "int64_t":$local_steps,
      "::mlir::FloatAttr":$outer_lr,
      "::mlir::FloatAttr":$outer_momentum,
      "::mlir::FloatAttr":$gap_penalty,
      "::mlir::FloatAttr":$clip,
      "::mlir::FlatSymbolRefAttr":$mesh,
      "int64_t":$ranks,
      StringRefParameter<"why local_steps">:$local_steps_reason,
      DefaultValuedParameter<"bool", "false">:$sharded,
      OptionalParameter<"::mlir::ArrayAttr">:$params,
      DefaultValuedParameter<"int64_t", "0">:$shard_elements,
      OptionalParameter<"::mlir::DenseI64ArrayAttr">:$shard_offsets,
      OptionalParameter<"::mlir::DenseI64ArrayAttr">:$shard_sizes);
}

def Loom_TensorSplitAttr : Loom_Attr<"TensorSplit", "tensor_split"> {
  let summary = "A parameter split over tensor-parallel ranks";
  let description = [{
    On a `loom.param` that `--loom-tensor-parallel` split (attribute
    `loom.tensor_split`): the param's type is one rank's part of a whole
    tensor whose dimension `dim` is `ranks` times larger. That dimension of
    the whole is `blocks` equal blocks (q, k and v of a fused attention
    weight: 3), each cut into `ranks` equal parts; rank r holds part r of
    every block, in block order, along the axis `axis` of mesh `mesh`. The
    manifest carries the split (`tensor_split`) to the runtime, which
    initialises, loads and saves each rank's part of the whole tensor.

    Example:
    ```mlir
    loom.param @attn.w : tensor<12x8xf32> init normal scale 0.02
        {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 3,
         ranks = 2, mesh = @world, axis = "tp">}
    ```

    **Constraints:**
    - `dim` is not negative; `blocks` is at least 1; `ranks` at least 2.
    - `axis` is not empty.
    - It is on a `loom.param`, `dim` is a dimension of its type, and
      `blocks` divides that dimension's size.
  }];
  let parameters = (ins "int64_t":$dim, "int64_t":$blocks, "int64_t":$ranks,
                        "::mlir::FlatSymbolRefAttr":$mesh,
                        "::mlir::StringAttr":$axis);
}

def Loom_ZeroAttr : Loom_Attr<"Zero", "zero"> {
  let summary = "ZeRO's sharding of the optimizer state, as --loom-shard-state did it";
  let description = [{
    The module attribute `loom.zero` that `--loom-shard-state` sets: the
    stage (1: each rank keeps and updates the optimizer state of its slice
    of every parameter, the updated parameters all-gathered; 2: besides,
    each rank receives only its slice of the averaged gradients; 3:
    besides, each rank stores only its slice of every parameter, whose
    `loom.param` then has the slice's type and keeps its own in
    `loom.full_type`), the mesh
    and its rank count, and the parameters whose state is sharded. Rank r
    keeps elements [r·s, r·s + s) of each one's flattened state, s =
    ceil(n / ranks) for a parameter of n elements (zeros past n); the
    manifest marks that state (and at stage 3 the parameter) `sharded` for
    the runtime's initialisation and checkpoints.

    Example:
    ```mlir
    module attributes {loom.zero = #loom.zero<stage = 2, mesh = @world,
        ranks = 4, params = ["fc1.weight", "fc1.bias"]>} {
    }
    ```

    **Constraints:**
    - `stage` is 1, 2 or 3; `ranks` is at least 2.
    - `params` are names (strings).
  }];
  let parameters = (ins "int64_t":$stage, "::mlir::FlatSymbolRefAttr":$mesh,
                        "int64_t":$ranks, "::mlir::ArrayAttr":$params);
}

def Loom_CompressionAttr : Loom_Attr<"Compression", "compression"> {
  let summary = "Gradient compression, as --loom-compress set it up";
  let description = [{
    The module attribute `loom.compression` that `--loom-compress` sets: the
    method the compressed all-reduces (`comm.all_reduce ... mean` with a
    `compress_slot`) average their gradients with, its parameters, and the
    gradients in slot order with their matrix views (`rows` x `cols`, cols
    being the parameter's last dimension). The manifest carries it to the
    runtime, which runs the method, keeps the error feedback and, for
    `lgreco`, re-chooses each slot's method without recompiling
    (docs/compression.md).

    Example:
    ```mlir
    module attributes {loom.compression = #loom.compression<method = "powersgd",
        rank = 4, bits = 8, density = 1.000000e-02 : f64, warmup_steps = 10,
        resolve_every = 100, objective = "time", params = ["fc1.weight"],
        rows = [64], cols = [32]>} {
    }
    ```

    **Constraints:**
    - `method` is `bf16`, `powersgd`, `quant`, `topk` or `lgreco`.
    - `rank` is at least 1 (PowerSGD's, or lgreco's baseline's); `bits` is
      2, 4 or 8; `density` is in (0, 1].
    - `warmup_steps` and `resolve_every` are not negative; `lgreco` warms up
      for at least one step (it measures at the last one).
    - `objective` is `time` or `bytes`.
    - `error_measure` (default `relative`, then not printed) is `relative` or
      `absolute`.
    - `params` are names, one per entry of `rows` and `cols`, which are
      positive.
  }];
  let parameters = (ins StringRefParameter<"method">:$method,
                        "int64_t":$rank, "int64_t":$bits,
                        "::mlir::FloatAttr":$density,
                        "int64_t":$warmup_steps, "int64_t":$resolve_every,
                        StringRefParameter<"objective">:$objective,
                        "::mlir::ArrayAttr":$params,
                        "::mlir::DenseI64ArrayAttr":$rows,
                        "::mlir::DenseI64ArrayAttr":$cols,
                        StringRefParameter<"lgreco's error measure",
                                           "\"relative\"">:$error_measure);
}

#endif // LOOM_ATTRS_TD
