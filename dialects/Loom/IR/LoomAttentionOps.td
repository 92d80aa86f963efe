//===- LoomAttentionOps.td - Attention and its masks --------*- tablegen -*-===//
//
// Included by LoomOps.td: scaled dot-product attention and the masks its
// decomposition applies to the scores (causal, and by segment for rows
// packed with documents, docs/sequences.md).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_ATTENTION_OPS_TD
#define LOOM_ATTENTION_OPS_TD

def Loom_CausalMaskOp : Loom_Op<"causal_mask", [Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Replaces entries above the diagonal of the last two dims.";
  let description = [{
    Sets `x[..., i, j]` to `fill` wherever `j > i` (a query may not attend to
    later keys). With `fill = -inf` it masks attention scores; its gradient
    is the same op with `fill = 0` applied to the incoming gradient.

    Example:
    ```mlir
    %m = loom.causal_mask %s fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>
    ```

    **Constraints:**
    - The operand has rank at least 2 and its last two dimensions are equal.
  }];
  let arguments = (ins Loom_FloatTensor:$input, F64Attr:$fill);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = "$input `fill` $fill attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Loom_SegmentMaskOp : Loom_Op<"segment_mask", [Pure,
    TypesMatchWith<"result type equals the input type", "input", "result", "$_self">,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Replaces entries whose row and column lie in different segments.";
  let description = [{
    Sets `x[b, ..., i, j]` to `fill` wherever `segments[b, i] !=
    segments[b, j]`: with `fill = -inf` on attention scores, a query sees
    only the keys of its own segment (document) in a row packed with
    several. The mask is shared by the dimensions between the first and
    the last two (attention heads). Its gradient is the same op with
    `fill = 0` applied to the incoming gradient.

    Example:
    ```mlir
    %m = loom.segment_mask %s, %docs fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>, tensor<2x16xi32>
    ```

    **Constraints:**
    - The input has rank at least 3 and its last two dimensions are equal.
    - `segments` has shape `[B, T]`: the input's first dimension and its
      last one.
  }];
  let arguments = (ins Loom_FloatTensor:$input, Loom_IndexTensor:$segments,
                       F64Attr:$fill);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $segments `fill` $fill attr-dict `:` type($input) `,` type($segments)
  }];
  let hasVerifier = 1;
}

def Loom_DocumentMaskOp : Loom_Op<"document_mask", [Pure,
    TypesMatchWith<"result type equals the input type", "input", "result", "$_self">,
    AllTypesMatch<["query_documents", "query_positions"]>,
    AllTypesMatch<["key_documents", "key_positions"]>,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Replaces entries whose key is not an earlier token of the query's document.";
  let description = [{
    Sets `x[b, ..., i, j]` to `fill` unless `key_documents[b, j] ==
    query_documents[b, i]` and `key_positions[b, j] <= query_positions[b,
    i]`: with `fill = -inf` on attention scores, query `i` sees exactly the
    keys of its own document up to its own position, wherever in the key
    axis they lie. It is the causal document mask of scores whose queries
    and keys are different token sets (the queries of one rank against the
    keys of all ranks, `--loom-partition-sequences`), where the causal and
    segment masks, which compare indices, do not apply. The mask is shared
    by the dimensions between the first and the last two (attention
    heads). Its gradient is the same op with `fill = 0` applied to the
    incoming gradient.

    Example:
    ```mlir
    %m = loom.document_mask %s, %qd, %qp, %kd, %kp fill 0xFFF0000000000000 : tensor<1x4x16x32xf32>, tensor<1x16xi32>, tensor<1x32xi32>
    ```

    **Constraints:**
    - The input has rank at least 3.
    - `query_documents` and `query_positions` have shape `[B, Tq]` and
      `key_documents` and `key_positions` shape `[B, Tk]`, where `B` is the
      input's first dimension and `Tq`, `Tk` its last two.
    - The positions have the type of the documents they go with, and the
      four index operands one element type.
  }];
  let arguments = (ins Loom_FloatTensor:$input,
                       Loom_IndexTensor:$query_documents,
                       Loom_IndexTensor:$query_positions,
                       Loom_IndexTensor:$key_documents,
                       Loom_IndexTensor:$key_positions, F64Attr:$fill);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $query_documents `,` $query_positions `,` $key_documents `,`
    $key_positions `fill` $fill attr-dict `:` type($input) `,`
    type($query_documents) `,` type($key_documents)
  }];
  let hasVerifier = 1;
}

def Loom_DocumentAttentionOp : Loom_Op<"document_attention", [Pure,
    TypesMatchWith<"result type equals the query type", "query", "result", "$_self">,
    AllTypesMatch<["key", "value"]>,
    AllTypesMatch<["query_documents", "query_positions"]>,
    AllTypesMatch<["key_documents", "key_positions"]>,
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Attention of queries to the earlier keys of their documents.";
  let description = [{
    `softmax(document_mask(Q K^T * scale)) V` for every head (the first
    dimension), where query `i` sees key `j` when `key_documents[j] ==
    query_documents[i]` and `key_positions[j] <= query_positions[i]`
    (`loom.document_mask`): the attention `--loom-partition-sequences`
    builds, a rank's queries against the keys of all ranks. Every query
    must see at least one key (its own, in that pass).

    On the CPU target (f32 or f64, not with `--precision=bf16`) it is kept
    until bufferization and calls the runtime's blocked kernel, which
    computes each document's queries against that document's keys only:
    its cost is the sum over documents of queries x keys, not Nq x Nk.
    Elsewhere `--loom-decompose` writes it as the masked dense attention.

    Example:
    ```mlir
    %o = loom.document_attention %q, %k, %v, %qd, %qp, %kd, %kp scale 0.35355339059327373 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
    ```

    **Constraints:**
    - `query`, `key` and `value` have rank 3 (`[heads, tokens, Dh]`), one
      element type and the same heads; `key` and `query` the same `Dh`;
      `value` the type of `key`.
    - The documents and positions are 1-D: the queries' as long as the
      queries' tokens, the keys' as the keys'; positions have the type of
      their documents, and the four one element type.
    - `scale` is positive.
  }];
  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value,
                       Loom_IndexTensor:$query_documents,
                       Loom_IndexTensor:$query_positions,
                       Loom_IndexTensor:$key_documents,
                       Loom_IndexTensor:$key_positions, F64Attr:$scale);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $query_documents `,` $query_positions `,`
    $key_documents `,` $key_positions `scale` $scale attr-dict `:`
    type($query) `,` type($key) `,` type($query_documents) `,`
    type($key_documents)
  }];
  let hasVerifier = 1;
}

def Loom_DocumentAttentionGradOp : Loom_Op<"document_attention_grad", [Pure,
    TypesMatchWith<"dquery type equals the query type", "query", "dquery", "$_self">,
    TypesMatchWith<"dkey type equals the key type", "key", "dkey", "$_self">,
    TypesMatchWith<"dvalue type equals the key type", "key", "dvalue", "$_self">,
    TypesMatchWith<"the output gradient has the query type", "query", "dresult", "$_self">,
    AllTypesMatch<["key", "value"]>,
    AllTypesMatch<["query_documents", "query_positions"]>,
    AllTypesMatch<["key_documents", "key_positions"]>]> {
  let summary = "The gradients of loom.document_attention.";
  let description = [{
    Given the operands of a `loom.document_attention` and the gradient of
    its result, the gradients of its query, key and value (the
    probabilities are recomputed, not kept from the forward pass). Kept
    for the runtime's blocked kernel and decomposed like
    `loom.document_attention` (see there).

    Example:
    ```mlir
    %dq, %dk, %dv = loom.document_attention_grad %q, %k, %v, %dy, %qd, %qp, %kd, %kp scale 0.35355339059327373 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
    ```

    **Constraints:**
    - Those of `loom.document_attention`, and `dresult` has the query type.
  }];
  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value, Loom_FloatTensor:$dresult,
                       Loom_IndexTensor:$query_documents,
                       Loom_IndexTensor:$query_positions,
                       Loom_IndexTensor:$key_documents,
                       Loom_IndexTensor:$key_positions, F64Attr:$scale);
  let results = (outs Loom_FloatTensor:$dquery, Loom_FloatTensor:$dkey,
                      Loom_FloatTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $dresult `,` $query_documents `,`
    $query_positions `,` $key_documents `,` $key_positions `scale` $scale
    attr-dict `:` type($query) `,` type($key) `,` type($query_documents) `,`
    type($key_documents)
  }];
  let hasVerifier = 1;
}

def Loom_AttentionOp : Loom_InferTypeOp<"attention", [
    DeclareOpInterfaceMethods<Loom_VJPOpInterface>]> {
  let summary = "Scaled dot-product attention, optionally causal and document-masked.";
  let description = [{
    `softmax(mask(Q K^T * scale)) V` over the last two dimensions, for every
    batch and head in the leading dimensions (shape `[batch, heads, T, Dh]`
    for multi-head attention). `scale` defaults to `1/sqrt(Dh)`; `causal`
    hides later keys from each query. With `segments` (shape `[batch, T]`,
    one id per token, e.g. the document it belongs to in a packed row), a
    query sees only the keys of its own segment (`loom.segment_mask`).

    Example:
    ```mlir
    %y = loom.attention %q, %k, %v causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
    %d = loom.attention %q, %k, %v segments %docs causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x16xi32>) -> tensor<2x4x16x8xf32>
    ```

    **Constraints:**
    - `query`, `key`, `value` have the same rank (at least 2), element type
      and leading dimensions.
    - `key` and `query` have the same last dimension; `key` and `value` the
      same number of rows.
    - With `causal`, queries and keys have the same number of rows.
    - `scale`, when given, is positive.
    - With `segments`: the operands have rank at least 3, queries and keys
      the same number of rows `T`, and `segments` has shape `[B, T]` where
      `B` is the first dimension of `query`.
  }];
  let arguments = (ins Loom_FloatTensor:$query, Loom_FloatTensor:$key,
                       Loom_FloatTensor:$value,
                       Optional<Loom_IndexTensor>:$segments, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`segments` $segments^)? (`causal` $causal^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The scale actually applied to Q K^T.
    double getEffectiveScale();
  }];
}

#endif // LOOM_ATTENTION_OPS_TD
