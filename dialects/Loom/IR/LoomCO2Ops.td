//===- LoomCO2Ops.td - CO2's outer step ---------------------*- tablegen -*-===//
//
// Included by LoomOps.td: the ops of CO2's outer step (docs/co2.md), for a
// parameter and for a rank's slice of the flattened parameters.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_CO2_OPS_TD
#define LOOM_CO2_OPS_TD

def Loom_CO2OuterOp : Loom_Op<"co2_outer", [
    DeclareOpInterfaceMethods<Loom_OptimizerOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Loom_ParamResource>, MemWrite<Loom_ParamResource>]>]> {
  let summary = "One CO2 outer step of a parameter (local updating, stale "
                "outer all-reduce).";
  let description = [{
    The outer step of CO2 (Sun et al., ICLR 2024) for parameter `x`, at the
    end of outer round `t` (the runtime calls it every `local_steps` inner
    steps; `mean` is the average over ranks of `x` at the end of round
    `t - 1`, whose all-reduce ran during round `t`). The parameter keeps
    three state tensors: the anchor `a` (x_{t,0}), the previous anchor `p`
    (x_{t-1,0}) and the outer momentum `m`:
    ```
    t = -1 (before the first inner step):  a = p = x, m = 0
    t =  0 (no average yet):               p = a, x = a
    t >= 1:
      d    = p - mean                          stale pseudo-gradient
      gap  = a - p                             how far the anchor moved since
      L    = 1 / (1 + gap_penalty * max(0, -gap * d) / (d^2 + 1e-30))
                                               (elementwise: the share of d
                                               the anchor already moved along)
      m    = clamp(outer_momentum * m + L * d, -clip, clip)
      p    = a
      a    = a - outer_lr * m
      x    = a
    ```
    `gap_penalty = 0` disables the penalty (L = 1), `clip = 0` the
    clipping. State tensors: `<param>.co2_anchor`, `<param>.co2_prev_anchor`,
    `<param>.co2_momentum`.

    Example:
    ```mlir
    loom.co2_outer @"fc1.weight", %mean, %round {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : tensor<64x32xf32>, tensor<i64>
    ```

    **Constraints:**
    - `param` names a `loom.param`; `mean` has its type.
    - `outer_lr` is positive; `outer_momentum` is in `[0, 1)`;
      `gap_penalty` and `clip` are non-negative.
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Loom_FloatTensor:$mean,
                       Loom_StepTensor:$round, F64Attr:$outer_lr,
                       F64Attr:$outer_momentum, F64Attr:$gap_penalty,
                       F64Attr:$clip);
  let assemblyFormat = [{
    $param `,` $mean `,` $round attr-dict `:` type($mean) `,` type($round)
  }];
  let hasVerifier = 1;
}

def Loom_CO2OuterShardOp : Loom_Op<"co2_outer_shard", [
    DeclareOpInterfaceMethods<Loom_OptimizerOpInterface>,
    AllTypesMatch<["mean", "new_x"]>,
    MemoryEffects<[MemRead<Loom_ParamResource>, MemWrite<Loom_ParamResource>]>]> {
  let summary = "CO2's outer step on one rank's slice of the flattened "
                "parameters (sharded outer state).";
  let description = [{
    The update of `loom.co2_outer` for a slice of the flattened parameters
    whose outer state this rank alone keeps (CO2's outer state sharded over
    the ranks, ZeRO-style): `mean` is the slice of the mean over ranks of
    the parameters, and the result is the slice of the new anchor. The
    slice's state lives in three state tensors named `<name>.co2_anchor`,
    `<name>.co2_prev_anchor` and `<name>.co2_momentum` (of `mean`'s type),
    read and written in place as an optimizer's state is. The equations are
    those of `loom.co2_outer` with `x` = `mean` at round -1 (the slice of
    the starting parameters sets the state up) and the result = the new
    anchor at every round. `--loom-co2="sharded=1"` builds one in
    `@outer_shard`.

    Example:
    ```mlir
    %anchor = loom.co2_outer_shard "co2.shard", %mean, %round {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 4.0, clip = 1.0} : tensor<1024xf32>, tensor<i64>
    ```

    **Constraints:**
    - `name` is not empty.
    - The result has `mean`'s type.
    - `outer_lr` is positive; `outer_momentum` is in `[0, 1)`;
      `gap_penalty` and `clip` are non-negative.
  }];
  let arguments = (ins StrAttr:$name, Loom_FloatTensor:$mean,
                       Loom_StepTensor:$round, F64Attr:$outer_lr,
                       F64Attr:$outer_momentum, F64Attr:$gap_penalty,
                       F64Attr:$clip);
  let results = (outs Loom_FloatTensor:$new_x);
  let assemblyFormat = [{
    $name `,` $mean `,` $round attr-dict `:` type($mean) `,` type($round)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_CO2_OPS_TD
