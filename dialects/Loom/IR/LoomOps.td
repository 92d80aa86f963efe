//===- LoomOps.td - loom dialect ops -----------------------*- tablegen -*-===//
#ifndef LOOM_OPS_TD
#define LOOM_OPS_TD

include "dialects/Loom/IR/LoomBase.td"
include "dialects/Loom/IR/LoomAttrs.td"
include "dialects/Loom/IR/LoomInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Loom_ParamResource : Resource<"::mlir::loom::ParamResource">;

// An op whose result types are inferred from its operands and attributes.
// Its verifier (verifyInference in LoomOps.cpp) runs the inference with the
// op's location, so a shape error is reported once, naming the operands and
// attributes involved; InferTypeOpInterface's own verifier, which runs later
// and would add a generic "failed to infer returned types", then only sees
// valid ops.
class Loom_InferTypeOp<string mnemonic, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Loom_ParamOp : Loom_Op<"param", [Symbol]> {
  let summary = "Declares a trainable parameter.";
  let description = [{
    Declares a named trainable tensor and how to initialise it. The name is
    the tensor's name in checkpoints (safetensors) and in `manifest.json`.
    `no_weight_decay` excludes it from AdamW's decoupled weight decay (set
    for biases and LayerNorm parameters).

    Example:
    ```mlir
    loom.param @"fc1.weight" : tensor<64x32xf32> init normal scale 2.000000e-02
    loom.param @"fc1.bias" : tensor<64xf32> init zeros {no_weight_decay}
    ```

    **Constraints:**
    - `type` is a ranked tensor of f32 or f64 with a static shape.
    - Every dimension of `type` is at least 1, and it has at most 2^40
      elements.
    - `scale` is given exactly when `init` is `normal` or `uniform`, and is
      positive.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       Loom_InitKind:$init,
                       OptionalAttr<F64Attr>:$scale,
                       UnitAttr:$no_weight_decay);
  let assemblyFormat = [{
    $sym_name `:` $type `init` $init (`scale` $scale^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Loom_GetParamOp : Loom_Op<"get_param", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Loom_ParamResource>]>,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Reads the current value of a parameter.";
  let description = [{
    Example:
    ```mlir
    %w = loom.get_param @"fc1.weight" : tensor<64x32xf32>
    ```

    **Constraints:**
    - `param` names a `loom.param` in the enclosing module.
    - The result type equals the parameter's type.
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Loom_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Loom_InferTypeOp<mnemonic, traits> {
  let summary = "Elementwise " # what # " with broadcasting.";
  let description = [{
    Elementwise }] # what # [{ of two tensors with NumPy broadcasting:
    shapes are aligned at the trailing dimension and a dimension of size 1
    (or a missing leading one) is repeated.

    Example:
    ```mlir
    %r = loom.}] # mnemonic # [{ %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```

    **Constraints:**
    - Both operands have the same element type.
    - The shapes are broadcast-compatible, and the result has the broadcast
      shape.
  }];
  let arguments = (ins Loom_FloatTensor:$lhs, Loom_FloatTensor:$rhs);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_AddOp : Loom_BinaryOp<"add", "sum",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_SubOp : Loom_BinaryOp<"sub", "difference",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_MulOp : Loom_BinaryOp<"mul", "product",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_DivOp : Loom_BinaryOp<"div", "quotient",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_MaximumOp : Loom_BinaryOp<"maximum", "maximum">;
def Loom_MinimumOp : Loom_BinaryOp<"minimum", "minimum">;

class Loom_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Loom_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType],
                                    traits)> {
  let summary = what;
  let description = what # [{, elementwise.

    Example:
    ```mlir
    %r = loom.}] # mnemonic # [{ %x : tensor<4x8xf32>
    ```

    **Constraints:**
    - The result type equals the operand type (f32 or f64 tensor).
  }];
  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Loom_NegOp : Loom_UnaryOp<"neg", "Negation",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_ExpOp : Loom_UnaryOp<"exp", "Exponential",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_LogOp : Loom_UnaryOp<"log", "Natural logarithm",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_TanhOp : Loom_UnaryOp<"tanh", "Hyperbolic tangent",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_SqrtOp : Loom_UnaryOp<"sqrt", "Square root",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_RsqrtOp : Loom_UnaryOp<"rsqrt", "Reciprocal square root",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_ReluOp : Loom_UnaryOp<"relu", "Rectified linear unit max(x, 0)",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_GeluOp : Loom_UnaryOp<"gelu",
    "GELU, tanh approximation 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_HeavisideOp : Loom_UnaryOp<"heaviside",
    "Step function: 1 where x > 0, else 0 (no gradient)",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;

//===----------------------------------------------------------------------===//
// Linear algebra and NN layers
//===----------------------------------------------------------------------===//

def Loom_MatmulOp : Loom_InferTypeOp<"matmul", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "(Batched) matrix product.";
  let description = [{
    `op(lhs) @ op(rhs)` over the last two dimensions, where `op` transposes
    the last two dimensions when `transpose_a` / `transpose_b` is set.
    Leading (batch) dimensions of `lhs` and `rhs` are equal, or `rhs` is a
    plain matrix shared by every batch.

    Example:
    ```mlir
    %s = loom.matmul %q, %k transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
    ```

    **Constraints:**
    - Both operands have rank at least 2 and the same element type.
    - `rhs` has the rank of `lhs` with equal batch dimensions, or rank 2.
    - The contracted dimensions agree.
  }];
  let arguments = (ins Loom_FloatTensor:$lhs, Loom_FloatTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_LinearOp : Loom_InferTypeOp<"linear", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Affine layer y = x W^T + b (PyTorch nn.Linear layout).";
  let description = [{
    Example:
    ```mlir
    %y = loom.linear %x, %w, %b : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    ```

    **Constraints:**
    - `weight` has rank 2, `[out, in]`; `input` has rank at least 1 and its
      last dimension is `in`.
    - `bias`, when present, has shape `[out]`.
    - All operands have the same element type.
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$weight,
                       Optional<Loom_FloatTensor>:$bias);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_LayerNormOp : Loom_InferTypeOp<"layernorm", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Layer normalisation over the last dimension.";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * weight + bias`, with the biased
    variance over the last dimension (as `torch.nn.LayerNorm`).

    Example:
    ```mlir
    %y = loom.layernorm %x, %g, %b : (tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
    ```

    **Constraints:**
    - `weight` and `bias` have shape `[D]` where `D` is the last dimension of
      `input`; all have the same element type.
    - `epsilon` is positive.
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_FloatTensor:$weight,
                       Loom_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_SoftmaxOp : Loom_Op<"softmax", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Softmax over the last dimension.";
  let description = [{
    Example:
    ```mlir
    %p = loom.softmax %s : tensor<2x4x16x16xf32>
    ```

    **Constraints:**
    - The operand has rank at least 1; the result type equals it.
  }];
  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Loom_EmbeddingOp : Loom_InferTypeOp<"embedding", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Looks up rows of a table.";
  let description = [{
    `result[i..., d] = table[indices[i...], d]`. Indices outside the table
    are undefined behaviour in compiled code; the runtime checks data
    against the vocabulary before it is fed.

    Example:
    ```mlir
    %e = loom.embedding %wte, %tokens : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
    ```

    **Constraints:**
    - `table` has rank 2.
    - The result shape is the indices' shape followed by the table's row
      width.
  }];
  let arguments = (ins Loom_FloatTensor:$table, Loom_IndexTensor:$indices);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_CrossEntropyOp : Loom_InferTypeOp<"cross_entropy", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Mean softmax cross-entropy of logits against class ids.";
  let description = [{
    `mean_i(logsumexp(logits[i, :]) - logits[i, targets[i]])` over every
    position `i` of the leading dimensions (as `F.cross_entropy` with
    `reduction='mean'`).

    Example:
    ```mlir
    %l = loom.cross_entropy %logits, %y : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
    ```

    **Constraints:**
    - `logits` has rank at least 1; `targets` has its shape without the last
      (class) dimension.
    - The result is a scalar of the logits' element type.
  }];
  let arguments = (ins Loom_FloatTensor:$logits, Loom_IndexTensor:$targets);
  let results = (outs Loom_ScalarFloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` functional-type(operands, results)
  }];
}

def Loom_OneHotOp : Loom_Op<"one_hot", [Pure]> {
  let summary = "One-hot encoding of class ids (no gradient).";
  let description = [{
    `result[i..., c] = (indices[i...] == c) ? 1 : 0`; the number of classes is
    the result's last dimension.

    Example:
    ```mlir
    %h = loom.one_hot %y : tensor<8xi32> -> tensor<8x10xf32>
    ```

    **Constraints:**
    - The result shape is the indices' shape followed by one more dimension.
  }];
  let arguments = (ins Loom_IndexTensor:$indices);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$indices attr-dict `:` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

def Loom_ReshapeOp : Loom_Op<"reshape", [Pure,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Reinterprets a tensor with another shape (row-major).";
  let description = [{
    Example:
    ```mlir
    %r = loom.reshape %x : tensor<4x16x64xf32> -> tensor<64x64xf32>
    ```

    **Constraints:**
    - Same element type and same number of elements.
  }];
  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Loom_TransposeOp : Loom_InferTypeOp<"transpose", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Permutes dimensions.";
  let description = [{
    `result` dimension `i` is `input` dimension `permutation[i]`.

    Example:
    ```mlir
    %t = loom.transpose %x perm = [0, 2, 1, 3] : tensor<4x16x4x8xf32> -> tensor<4x4x16x8xf32>
    ```

    **Constraints:**
    - `permutation` is a permutation of `[0, rank)`.
  }];
  let arguments = (ins Loom_FloatTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `perm` `=` $permutation attr-dict `:` type($input) `->` type($result)
  }];
}

def Loom_BroadcastToOp : Loom_Op<"broadcast_to", [Pure,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Repeats a tensor to a larger shape (NumPy broadcasting).";
  let description = [{
    Example:
    ```mlir
    %b = loom.broadcast_to %x : tensor<1x64xf32> -> tensor<8x64xf32>
    ```

    **Constraints:**
    - Same element type; the input shape broadcasts to the result shape.
  }];
  let arguments = (ins Loom_FloatTensor:$input);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Loom_SplitOp : Loom_Op<"split", [Pure,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Splits a tensor into consecutive pieces along an axis.";
  let description = [{
    The pieces' sizes along `axis` are their result types' sizes.

    Example:
    ```mlir
    %q, %k, %v = loom.split %qkv axis = 2 : tensor<4x16x192xf32> -> tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
    ```

    **Constraints:**
    - `axis` is in `[0, rank)`; there is at least one result.
    - Results have the input's element type and rank, equal sizes outside
      `axis`, and sizes along `axis` that add up to the input's.
  }];
  let arguments = (ins Loom_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Loom_FloatTensor>:$results);
  let assemblyFormat = [{
    $input `axis` `=` $axis attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Loom_ConcatOp : Loom_InferTypeOp<"concat", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Concatenates tensors along an axis.";
  let description = [{
    Example:
    ```mlir
    %c = loom.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x24xf32>) -> tensor<4x32xf32>
    ```

    **Constraints:**
    - At least one operand; all have the same element type and rank, and
      equal sizes outside `axis`.
    - `axis` is in `[0, rank)`.
  }];
  let arguments = (ins Variadic<Loom_FloatTensor>:$inputs, I64Attr:$axis);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` functional-type($inputs, results)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Loom_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : Loom_InferTypeOp<mnemonic, traits> {
  let summary = what # " over the given axes.";
  let description = what # [{ over `axes`; with `keepdim` the reduced
    dimensions stay with size 1, otherwise they are dropped.

    Example:
    ```mlir
    %r = loom.}] # mnemonic # [{ %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    ```

    **Constraints:**
    - `axes` are distinct and in `[0, rank)`, listed in increasing order.
  }];
  let arguments = (ins Loom_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdim);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keepdim` $keepdim^)? attr-dict `:` type($input)
    `->` type($result)
  }];
}

def Loom_SumOp : Loom_ReduceOp<"sum", "Sum",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_MeanOp : Loom_ReduceOp<"mean", "Mean",
    [DeclareOpInterfaceMethods<Loom_VJPOpInterface>]>;
def Loom_ReduceMaxOp : Loom_ReduceOp<"reduce_max", "Maximum">;

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def Loom_LrScheduleOp : Loom_Op<"lr_schedule", [Pure]> {
  let summary = "Learning rate at a step: linear warmup, then cosine decay.";
  let description = [{
    For the 1-based `step` s: `lr * s / warmup_steps` while `s <
    warmup_steps`; then, when `decay_steps > 0`, cosine decay from `lr` to
    `min_lr` over `decay_steps` steps after warmup (constant `min_lr` after
    that); otherwise `lr`.

    Example:
    ```mlir
    %lr = loom.lr_schedule %step {lr = 1.0e-03, warmup_steps = 100 : i64, decay_steps = 1000 : i64, min_lr = 1.0e-04} : tensor<i64> -> tensor<f32>
    ```

    **Constraints:**
    - `lr` is positive; `min_lr` is in `[0, lr]`; step counts are
      non-negative.
  }];
  let arguments = (ins Loom_StepTensor:$step, F64Attr:$lr,
                       DefaultValuedAttr<I64Attr, "0">:$warmup_steps,
                       DefaultValuedAttr<I64Attr, "0">:$decay_steps,
                       DefaultValuedAttr<F64Attr, "0.0">:$min_lr);
  let results = (outs Loom_ScalarFloatTensor:$result);
  let assemblyFormat = "$step attr-dict `:` type($step) `->` type($result)";
  let hasVerifier = 1;
}

def Loom_AdamWOp : Loom_Op<"adamw", [
    DeclareOpInterfaceMethods<Loom_OptimizerOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Loom_ParamResource>, MemWrite<Loom_ParamResource>]>]> {
  let summary = "One AdamW update of a parameter and its moment estimates.";
  let description = [{
    Updates parameter `p` with gradient `g` at 1-based step `t`, as
    `torch.optim.AdamW`:
    ```
    p   = p * (1 - lr * weight_decay)
    m   = beta1 * m + (1 - beta1) * g
    v   = beta2 * v + (1 - beta2) * g^2
    p   = p - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
    ```
    The moments `m` and `v` live with the parameter (state tensors
    `<param>.exp_avg` and `<param>.exp_avg_sq`).

    With `slice %x`, the op updates not `p` but `x`, this rank's slice of
    `p`'s flattened values (ZeRO's sharded optimizer, `--loom-shard-state`):
    `grad` is the same slice of the gradient, the state tensors have the
    slice's type, and the result is the updated slice; `p` is left as it
    is (the caller gathers the slices and writes it with `loom.set_param`).

    Example:
    ```mlir
    loom.adamw @"fc1.weight", %g, %lr, %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<64x32xf32>, tensor<f32>, tensor<i64>
    %x1 = loom.adamw @"fc1.weight" slice %x, %gx, %lr, %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<1024xf32>, tensor<f32>, tensor<i64> -> tensor<1024xf32>
    ```

    **Constraints:**
    - `param` names a `loom.param`; `grad` has its type.
    - `beta1`, `beta2` are in `[0, 1)`; `eps` is positive; `weight_decay` is
      non-negative.
    - With `slice`: the slice, `grad` and the result have one type, 1-D with
      no more elements than `param` and its element type.
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                       Optional<Loom_FloatTensor>:$slice,
                       Loom_FloatTensor:$grad,
                       Loom_ScalarFloatTensor:$lr, Loom_StepTensor:$step,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay);
  let results = (outs Optional<Loom_FloatTensor>:$new_slice);
  let assemblyFormat = [{
    $param (`slice` $slice^)? `,` $grad `,` $lr `,` $step attr-dict `:`
    type($grad) `,` type($lr) `,` type($step) ``
    custom<SliceResult>(ref($slice), type($slice), type($new_slice))
  }];
  let hasVerifier = 1;
}

def Loom_SGDOp : Loom_Op<"sgd", [
    DeclareOpInterfaceMethods<Loom_OptimizerOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Loom_ParamResource>, MemWrite<Loom_ParamResource>]>]> {
  let summary = "One SGD-with-momentum update of a parameter.";
  let description = [{
    As `torch.optim.SGD` (dampening 0, not Nesterov):
    ```
    g = g + weight_decay * p
    b = momentum * b + g      (b = g at the first step)
    p = p - lr * b
    ```
    The buffer `b` is the state tensor `<param>.momentum_buffer` (absent
    when `momentum` is 0). With `slice %x`, the update of this rank's slice
    of `p`'s flattened values, as `loom.adamw`'s.

    Example:
    ```mlir
    loom.sgd @"fc1.weight", %g, %lr, %step {momentum = 0.9, weight_decay = 0.0} : tensor<64x32xf32>, tensor<f32>, tensor<i64>
    %x1 = loom.sgd @"fc1.weight" slice %x, %gx, %lr, %step {momentum = 0.9, weight_decay = 0.0} : tensor<1024xf32>, tensor<f32>, tensor<i64> -> tensor<1024xf32>
    ```

    **Constraints:**
    - `param` names a `loom.param`; `grad` has its type.
    - `momentum` is in `[0, 1)`; `weight_decay` is non-negative.
    - With `slice`: the slice, `grad` and the result have one type, 1-D with
      no more elements than `param` and its element type.
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                       Optional<Loom_FloatTensor>:$slice,
                       Loom_FloatTensor:$grad,
                       Loom_ScalarFloatTensor:$lr, Loom_StepTensor:$step,
                       F64Attr:$momentum, F64Attr:$weight_decay);
  let results = (outs Optional<Loom_FloatTensor>:$new_slice);
  let assemblyFormat = [{
    $param (`slice` $slice^)? `,` $grad `,` $lr `,` $step attr-dict `:`
    type($grad) `,` type($lr) `,` type($step) ``
    custom<SliceResult>(ref($slice), type($slice), type($new_slice))
  }];
  let hasVerifier = 1;
}

def Loom_SetParamOp : Loom_Op<"set_param", [
    DeclareOpInterfaceMethods<Loom_OptimizerOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Loom_ParamResource>]>]> {
  let summary = "Writes a new value of a parameter, computed elsewhere.";
  let description = [{
    The parameter takes `value` at the end of the step, as an optimizer op's
    update does (it is one, with no state of its own). ZeRO's sharded
    optimizer (`--loom-shard-state`) writes with it the parameter it
    all-gathered from the ranks' updated slices.

    Example:
    ```mlir
    loom.set_param @"fc1.weight", %w : tensor<64x32xf32>
    ```

    **Constraints:**
    - `param` names a `loom.param`; `value` has its type.
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, Loom_FloatTensor:$value);
  let assemblyFormat = "$param `,` $value attr-dict `:` type($value)";
}

def Loom_GetStateOp : Loom_Op<"get_state", [
    MemoryEffects<[MemRead<Loom_ParamResource>]>]> {
  let summary = "Reads a state tensor of the step as it was on entry.";
  let description = [{
    The value that the state tensor `name` held when the step began: what
    the previous step (or a checkpoint) left in it. The state is declared by
    the `loom.set_state` of the same name in the same function, which gives
    it its next value; before the first step it holds zeros. Zeroth-order
    training with offloaded parameters (`--zo=mezo:offload=1`) carries a
    step's projected gradient to the next step in one.

    Example:
    ```mlir
    %p = loom.get_state "zo.pending" : tensor<2xf32>
    ```

    **Constraints:**
    - `name` is `<prefix>.<suffix>`, both parts non-empty.
    - The function has a `loom.set_state` of `name` with the result's type.
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Loom_SetStateOp : Loom_Op<"set_state", [
    DeclareOpInterfaceMethods<Loom_OptimizerOpInterface>,
    AllTypesMatch<["value", "result"]>,
    MemoryEffects<[MemWrite<Loom_ParamResource>]>]> {
  let summary = "Gives a state tensor of the step its next value.";
  let description = [{
    Declares the state tensor `name` of the enclosing entry (role `state`
    of the calling convention, kept across steps and in checkpoints) and
    writes `value` into it; `loom.get_state` reads what it held on entry.
    Returns `value`.

    Example:
    ```mlir
    %n = loom.set_state "zo.pending", %g : tensor<2xf32>
    ```

    **Constraints:**
    - `name` is `<prefix>.<suffix>`, both parts non-empty.
    - A function sets a state once.
  }];
  let arguments = (ins StrAttr:$name, Loom_FloatTensor:$value);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

include "dialects/Loom/IR/LoomCO2Ops.td"
include "dialects/Loom/IR/LoomZOOps.td"
include "dialects/Loom/IR/LoomAttentionOps.td"

#endif // LOOM_OPS_TD
