//===- LoomZOOps.td - Zeroth-order training ------------------*- tablegen -*-===//
//
// Included by LoomOps.td: the op of zeroth-order training (docs/zo.md), a
// tensor moved along a random direction that is regenerated from a counter,
// never stored.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_ZO_OPS_TD
#define LOOM_ZO_OPS_TD

def Loom_PerturbOp : Loom_Op<"perturb", [Pure,
    AllTypesMatch<["x", "result"]>, AllTypesMatch<["a", "b"]>]> {
  let summary = "a * x + b * z, with z a counter-based random direction.";
  let description = [{
    Returns `a * x + b * z` elementwise, where `z` has one value per element
    of `x`: approximately standard normal, regenerated from
    `(seed, stream, step, direction)` and the element's row-major index by
    Philox4x32-10, so the same direction is produced again for the same
    counter on any rank, any target and any number of threads, and never
    needs to be stored (MeZO's seed trick). For element `i`:
    ```
    key     = (seed mod 2^32, seed div 2^32)
    counter = (i, stream, step mod 2^32, (direction + offset) mod 2^32)
    (w0, w1, w2, w3) = philox4x32_10(counter, key)
    s = sum of the eight 16-bit halves of w0..w3        (0 <= s <= 8 * 65535)
    z = float(s - 4 * 65535) * c,  c = 1 / sqrt(8 * (65536^2 - 1) / 12)
    ```
    (`c` rounded to the element type; `z` has mean 0 and variance 1, the
    Irwin-Hall approximation of a normal with eight terms). The zeroth-order
    step (`--loom-zo`) perturbs every parameter with it at +eps and -eps and
    updates it along the same `z`. `offset` (0 when absent) is a run-time
    addition to the direction: with `directions=rank` each data-parallel
    rank perturbs along the direction of its own index.

    Example:
    ```mlir
    %y = loom.perturb %w, %step, %a, %b {seed = 0 : i64, stream = 3 : i64} : tensor<64x32xf32>, tensor<i64>, tensor<f32>
    %r = loom.perturb %w, %step, %a, %b offset %rank : tensor<i64> {stream = 3 : i64} : tensor<64x32xf32>, tensor<i64>, tensor<f32>
    ```

    **Constraints:**
    - `a` and `b` are scalars of `x`'s element type.
    - `x` has fewer than 2^32 elements (the index is one counter word).
    - `stream` and `direction` are in `[0, 2^32)`.
  }];
  let arguments = (ins Loom_FloatTensor:$x, Loom_StepTensor:$step,
                       Loom_ScalarFloatTensor:$a, Loom_ScalarFloatTensor:$b,
                       DefaultValuedAttr<I64Attr, "0">:$seed,
                       DefaultValuedAttr<I64Attr, "0">:$stream,
                       DefaultValuedAttr<I64Attr, "0">:$direction,
                       Optional<Loom_StepTensor>:$offset);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $step `,` $a `,` $b (`offset` $offset^ `:` type($offset))?
    attr-dict `:` type($x) `,` type($step) `,` type($a)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_ZO_OPS_TD
