// RUN: loom-opt %s -split-input-file -verify-diagnostics

// -verify-diagnostics fails on an error no case expects, so the cases of
// type-inferring ops also check that each problem is reported once (without
// InferTypeOpInterface's generic "failed to infer returned types").

//===----------------------------------------------------------------------===//
// loom.param
//===----------------------------------------------------------------------===//

// Tests that a parameter type must be a ranked tensor.
// expected-error@+1 {{'loom.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of any type values}}
loom.param @p : tensor<*xf32> init zeros

// -----

// Tests that a parameter type must have a static shape.
// expected-error@+1 {{'loom.param' op type must be a statically shaped f32 or f64 tensor, got 'tensor<?x4xf32>'}}
loom.param @p : tensor<?x4xf32> init zeros

// -----

// Tests that a parameter must not be empty: a zero dimension would make
// its gradient's mean divide by zero.
// expected-error@+1 {{'loom.param' op type must have dimensions of at least 1 and at most 2^40 elements, got 'tensor<0x16xf32>'}}
loom.param @p : tensor<0x16xf32> init zeros

// -----

// Tests that a parameter has at most 2^40 elements (2^41 here), so that its
// sizes fit in int64.
// expected-error@+1 {{'loom.param' op type must have dimensions of at least 1 and at most 2^40 elements, got 'tensor<2097152x1048576xf32>'}}
loom.param @p : tensor<2097152x1048576xf32> init zeros

// -----

// Tests that a parameter type must have a float element type.
// expected-error@+1 {{'loom.param' op type must be a statically shaped f32 or f64 tensor, got 'tensor<4xi32>'}}
loom.param @p : tensor<4xi32> init zeros

// -----

// Tests that a parameter type must be f32 or f64, not another float.
// expected-error@+1 {{'loom.param' op type must be a statically shaped f32 or f64 tensor, got 'tensor<4xf16>'}}
loom.param @p : tensor<4xf16> init zeros

// -----

// Tests that init normal needs a scale.
// expected-error@+1 {{'loom.param' op init 'normal' needs a scale}}
loom.param @p : tensor<4xf32> init normal

// -----

// Tests that init uniform needs a scale.
// expected-error@+1 {{'loom.param' op init 'uniform' needs a scale}}
loom.param @p : tensor<4xf32> init uniform

// -----

// Tests that init zeros takes no scale.
// expected-error@+1 {{'loom.param' op init 'zeros' takes no scale}}
loom.param @p : tensor<4xf32> init zeros scale 1.0

// -----

// Tests that init ones takes no scale.
// expected-error@+1 {{'loom.param' op init 'ones' takes no scale}}
loom.param @p : tensor<4xf32> init ones scale 1.0

// -----

// Tests that a zero scale is rejected.
// expected-error@+1 {{'loom.param' op scale must be positive}}
loom.param @p : tensor<4xf32> init uniform scale 0.0

// -----

// Tests that a negative scale is rejected.
// expected-error@+1 {{'loom.param' op scale must be positive}}
loom.param @p : tensor<4xf32> init normal scale -1.0

// -----

//===----------------------------------------------------------------------===//
// loom.get_param
//===----------------------------------------------------------------------===//

// Tests that get_param must name an existing symbol.
func.func @get_param_missing() {
  // expected-error@+1 {{'loom.get_param' op 'nope' does not name a loom.param}}
  %w = loom.get_param @nope : tensor<4xf32>
  return
}

// -----

// Tests that get_param must name a loom.param, not another symbol.
func.func @not_a_param() {
  return
}
func.func @get_param_of_func() {
  // expected-error@+1 {{'loom.get_param' op 'not_a_param' does not name a loom.param}}
  %w = loom.get_param @not_a_param : tensor<4xf32>
  return
}

// -----

// Tests that the get_param result type must equal the parameter's type.
loom.param @p : tensor<4xf32> init zeros
func.func @get_param_wrong_shape() {
  // expected-error@+1 {{'loom.get_param' op result type 'tensor<8xf32>' does not match parameter type 'tensor<4xf32>'}}
  %w = loom.get_param @p : tensor<8xf32>
  return
}

// -----

// Tests that the get_param element type must equal the parameter's.
loom.param @p : tensor<4xf32> init zeros
func.func @get_param_wrong_element_type() {
  // expected-error@+1 {{'loom.get_param' op result type 'tensor<4xf64>' does not match parameter type 'tensor<4xf32>'}}
  %w = loom.get_param @p : tensor<4xf64>
  return
}

// -----

// Tests that get_param must produce a float tensor.
loom.param @p : tensor<4xf32> init zeros
func.func @get_param_integer() {
  // expected-error@+1 {{'loom.get_param' op result #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %w = loom.get_param @p : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

// Tests that binary operands must have the same element type.
func.func @add_mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error@+1 {{'loom.add' op lhs element type 'f32' differs from rhs element type 'f64'}}
  %0 = loom.add %a, %b : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

// Tests that binary operand shapes must be broadcast-compatible.
func.func @sub_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'loom.sub' op lhs shape [4, 3] and rhs shape [4] are not broadcast-compatible}}
  %0 = loom.sub %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that two non-unit sizes that differ do not broadcast.
func.func @maximum_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error@+1 {{'loom.maximum' op lhs shape [2, 3] and rhs shape [3, 3] are not broadcast-compatible}}
  %0 = loom.maximum %a, %b : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

// Tests that the binary result must have the broadcast shape.
func.func @mul_wrong_result(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'loom.mul' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  %0 = loom.mul %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Tests that the binary result must have the operands' element type.
func.func @minimum_wrong_result_element_type(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'loom.minimum' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf64>'}}
  %0 = loom.minimum %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

// Tests that binary ops reject integer tensors.
func.func @div_integer(%a: tensor<4xi32>, %b: tensor<4xi32>) {
  // expected-error@+1 {{'loom.div' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = loom.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

// Tests that a unary result type must equal the operand type.
func.func @exp_wrong_result(%a: tensor<4xf32>) {
  // expected-error@+1 {{'loom.exp' op requires the same type for all operands and results}}
  %0 = "loom.exp"(%a) : (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

// Tests that a unary result shape must equal the operand shape.
func.func @gelu_wrong_shape(%a: tensor<4xf32>) {
  // expected-error@+1 {{'loom.gelu' op requires the same type for all operands and results}}
  %0 = "loom.gelu"(%a) : (tensor<4xf32>) -> tensor<2x2xf32>
  return
}

// -----

// Tests that unary ops reject integer tensors.
func.func @relu_integer(%a: tensor<4xi32>) {
  // expected-error@+1 {{'loom.relu' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = loom.relu %a : tensor<4xi32>
  return
}

// -----

// Tests that ops reject float tensors with a zero dimension.
func.func @relu_empty(%a: tensor<8x0xf32>) {
  // expected-error@+1 {{'loom.relu' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<8x0xf32>'}}
  %0 = loom.relu %a : tensor<8x0xf32>
  return
}

// -----

// Tests that ops reject float tensors of more than 2^40 elements.
func.func @relu_huge(%a: tensor<4611686018427387904x4xf32>) {
  // expected-error@+1 {{'loom.relu' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<4611686018427387904x4xf32>'}}
  %0 = loom.relu %a : tensor<4611686018427387904x4xf32>
  return
}

// -----

// Tests that unary ops reject unranked tensors.
func.func @neg_unranked(%a: tensor<*xf32>) {
  // expected-error@+1 {{'loom.neg' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %0 = "loom.neg"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.causal_mask
//===----------------------------------------------------------------------===//

// Tests that causal_mask needs rank >= 2.
func.func @causal_mask_rank1(%a: tensor<4xf32>) {
  // expected-error@+1 {{'loom.causal_mask' op expects rank >= 2 with equal last two dimensions, got 'tensor<4xf32>'}}
  %0 = loom.causal_mask %a fill 0.0 : tensor<4xf32>
  return
}

// -----

// Tests that causal_mask needs equal last two dimensions.
func.func @causal_mask_not_square(%a: tensor<2x4x5xf32>) {
  // expected-error@+1 {{'loom.causal_mask' op expects rank >= 2 with equal last two dimensions, got 'tensor<2x4x5xf32>'}}
  %0 = loom.causal_mask %a fill 0.0 : tensor<2x4x5xf32>
  return
}

// -----

// Tests that the causal_mask result type equals its operand type.
func.func @causal_mask_wrong_result(%a: tensor<4x4xf32>) {
  // expected-error@+1 {{'loom.causal_mask' op requires the same type for all operands and results}}
  %0 = "loom.causal_mask"(%a) {fill = 0.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.segment_mask
//===----------------------------------------------------------------------===//

// Tests that segment_mask needs rank >= 3.
func.func @segment_mask_rank2(%a: tensor<4x4xf32>, %s: tensor<4x4xi32>) {
  // expected-error@+1 {{'loom.segment_mask' op expects rank >= 3 with equal last two dimensions, got 'tensor<4x4xf32>'}}
  %0 = loom.segment_mask %a, %s fill 0.0 : tensor<4x4xf32>, tensor<4x4xi32>
  return
}

// -----

// Tests that segment_mask needs equal last two dimensions.
func.func @segment_mask_not_square(%a: tensor<2x4x5xf32>, %s: tensor<2x5xi32>) {
  // expected-error@+1 {{'loom.segment_mask' op expects rank >= 3 with equal last two dimensions, got 'tensor<2x4x5xf32>'}}
  %0 = loom.segment_mask %a, %s fill 0.0 : tensor<2x4x5xf32>, tensor<2x5xi32>
  return
}

// -----

// Tests that segments have the input's first and last dimensions.
func.func @segment_mask_segments_shape(%a: tensor<2x3x4x4xf32>, %s: tensor<3x4xi32>) {
  // expected-error@+1 {{'loom.segment_mask' op expects segments of shape [2, 4] (the input's first and last dimensions), got 'tensor<3x4xi32>'}}
  %0 = loom.segment_mask %a, %s fill 0.0 : tensor<2x3x4x4xf32>, tensor<3x4xi32>
  return
}

// -----

// Tests that segments are integers.
func.func @segment_mask_float_segments(%a: tensor<2x4x4xf32>, %s: tensor<2x4xf32>) {
  // expected-error@+1 {{operand #1 must be non-empty statically shaped integer tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = "loom.segment_mask"(%a, %s) {fill = 0.0 : f64} : (tensor<2x4x4xf32>, tensor<2x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

// Tests that the segment_mask result type equals its input type.
func.func @segment_mask_wrong_result(%a: tensor<2x4x4xf32>, %s: tensor<2x4xi32>) {
  // expected-error@+1 {{'loom.segment_mask' op failed to verify that result type equals the input type}}
  %0 = "loom.segment_mask"(%a, %s) {fill = 0.0 : f64} : (tensor<2x4x4xf32>, tensor<2x4xi32>) -> tensor<2x4x4xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.document_attention, loom.document_attention_grad
//===----------------------------------------------------------------------===//

// Tests that document_attention takes rank-3 queries and keys.
func.func @document_attention_rank(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x32x8xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention' op expects query and key of rank 3 ([heads, tokens, Dh]), got 'tensor<1x4x16x8xf32>' and 'tensor<1x4x32x8xf32>'}}
  %0 = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<1x4x16x8xf32>, tensor<1x4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
  return
}

// -----

// Tests that queries and keys have the same heads and Dh.
func.func @document_attention_heads(%q: tensor<4x16x8xf32>, %k: tensor<2x32x8xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention' op expects query and key of one element type, heads and Dh, got 'tensor<4x16x8xf32>' and 'tensor<2x32x8xf32>'}}
  %0 = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<4x16x8xf32>, tensor<2x32x8xf32>, tensor<16xi32>, tensor<32xi32>
  return
}

// -----

// Tests that values have the type of the keys.
func.func @document_attention_value(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %v: tensor<4x32x4xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention' op failed to verify that all of {key, value} have same type}}
  %0 = "loom.document_attention"(%q, %k, %v, %qd, %qd, %kd, %kd) {scale = 0.5 : f64} : (tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x4xf32>, tensor<16xi32>, tensor<16xi32>, tensor<32xi32>, tensor<32xi32>) -> tensor<4x16x8xf32>
  return
}

// -----

// Tests that the documents are as long as the tokens.
func.func @document_attention_docs(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<32xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention' op expects 1-D documents of the queries' and the keys' tokens (16 and 32), got 'tensor<32xi32>' and 'tensor<32xi32>'}}
  %0 = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<32xi32>, tensor<32xi32>
  return
}

// -----

// Tests that positions have the type of their documents.
func.func @document_attention_positions(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<16xi32>, %qp: tensor<16xi64>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention' op failed to verify that all of {query_documents, query_positions} have same type}}
  %0 = "loom.document_attention"(%q, %k, %k, %qd, %qp, %kd, %kd) {scale = 0.5 : f64} : (tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<16xi64>, tensor<32xi32>, tensor<32xi32>) -> tensor<4x16x8xf32>
  return
}

// -----

// Tests that query and key documents have one element type.
func.func @document_attention_doc_types(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi64>) {
  // expected-error@+1 {{'loom.document_attention' op expects query and key documents of one element type}}
  %0 = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi64>
  return
}

// -----

// Tests that the scale is positive.
func.func @document_attention_scale(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention' op expects a positive scale}}
  %0 = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.0 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
  return
}

// -----

// Tests that the gradient checks the same constraints.
func.func @document_attention_grad_docs(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<32xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention_grad' op expects 1-D documents of the queries' and the keys' tokens (16 and 32), got 'tensor<32xi32>' and 'tensor<32xi32>'}}
  %0:3 = loom.document_attention_grad %q, %k, %k, %q, %qd, %qd, %kd, %kd scale 0.5 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<32xi32>, tensor<32xi32>
  return
}

// -----

// Tests that the output gradient has the query type.
func.func @document_attention_grad_dresult(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi32>) {
  // expected-error@+1 {{'loom.document_attention_grad' op failed to verify that the output gradient has the query type}}
  %0:3 = "loom.document_attention_grad"(%q, %k, %k, %k, %qd, %qd, %kd, %kd) {scale = 0.5 : f64} : (tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<16xi32>, tensor<32xi32>, tensor<32xi32>) -> (tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<4x32x8xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.document_mask
//===----------------------------------------------------------------------===//

// Tests that document_mask needs rank >= 3.
func.func @document_mask_rank2(%a: tensor<4x6xf32>, %q: tensor<4x4xi32>, %k: tensor<4x6xi32>) {
  // expected-error@+1 {{'loom.document_mask' op expects rank >= 3, got 'tensor<4x6xf32>'}}
  %0 = loom.document_mask %a, %q, %q, %k, %k fill 0.0 : tensor<4x6xf32>, tensor<4x4xi32>, tensor<4x6xi32>
  return
}

// -----

// Tests that the query documents have the input's first dimension and rows.
func.func @document_mask_query_shape(%a: tensor<1x2x4x6xf32>, %q: tensor<1x6xi32>, %k: tensor<1x6xi32>) {
  // expected-error@+1 {{'loom.document_mask' op expects query documents of shape [1, 4] (the input's first dimension and its rows), got 'tensor<1x6xi32>'}}
  %0 = loom.document_mask %a, %q, %q, %k, %k fill 0.0 : tensor<1x2x4x6xf32>, tensor<1x6xi32>, tensor<1x6xi32>
  return
}

// -----

// Tests that the key documents have the input's first dimension and columns.
func.func @document_mask_key_shape(%a: tensor<1x2x4x6xf32>, %q: tensor<1x4xi32>, %k: tensor<2x6xi32>) {
  // expected-error@+1 {{'loom.document_mask' op expects key documents of shape [1, 6] (the input's first dimension and its columns), got 'tensor<2x6xi32>'}}
  %0 = loom.document_mask %a, %q, %q, %k, %k fill 0.0 : tensor<1x2x4x6xf32>, tensor<1x4xi32>, tensor<2x6xi32>
  return
}

// -----

// Tests that positions have the type of their documents.
func.func @document_mask_positions_type(%a: tensor<1x2x4x6xf32>, %q: tensor<1x4xi32>, %p: tensor<1x4xi64>, %k: tensor<1x6xi32>) {
  // expected-error@+1 {{'loom.document_mask' op failed to verify that all of {query_documents, query_positions} have same type}}
  %0 = "loom.document_mask"(%a, %q, %p, %k, %k) {fill = 0.0 : f64} : (tensor<1x2x4x6xf32>, tensor<1x4xi32>, tensor<1x4xi64>, tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x2x4x6xf32>
  return
}

// -----

// Tests that query and key documents have one element type.
func.func @document_mask_mixed_types(%a: tensor<1x2x4x6xf32>, %q: tensor<1x4xi32>, %k: tensor<1x6xi64>) {
  // expected-error@+1 {{'loom.document_mask' op expects query and key documents of one element type}}
  %0 = loom.document_mask %a, %q, %q, %k, %k fill 0.0 : tensor<1x2x4x6xf32>, tensor<1x4xi32>, tensor<1x6xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.matmul
//===----------------------------------------------------------------------===//

// Tests that matmul operands must have the same element type.
func.func @matmul_mixed_element_types(%a: tensor<4x8xf32>, %b: tensor<8x16xf64>) {
  // expected-error@+1 {{'loom.matmul' op lhs element type 'f32' differs from rhs element type 'f64'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf64>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that the matmul lhs must have rank >= 2.
func.func @matmul_lhs_rank1(%a: tensor<8xf32>, %b: tensor<8x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op lhs must have rank >= 2, got 'tensor<8xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<8xf32>, tensor<8x16xf32>) -> tensor<16xf32>
  return
}

// -----

// Tests that the matmul rhs must have rank >= 2.
func.func @matmul_rhs_rank1(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'loom.matmul' op rhs must have rank >= 2, got 'tensor<8xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that the matmul rhs has the lhs rank or rank 2.
func.func @matmul_rhs_rank_mismatch(%a: tensor<4x8xf32>, %b: tensor<2x8x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op rhs must have the rank of lhs (2) or rank 2, got rank 3}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  return
}

// -----

// Tests that batched matmul operands have equal batch dimensions.
func.func @matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op lhs batch dimensions [2] differ from rhs batch dimensions [3]}}
  %0 = loom.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  return
}

// -----

// Tests that the contracted dimensions must agree.
func.func @matmul_contraction_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op contracted dimensions differ: lhs dimension 1 (size 8, without transpose_a) vs rhs dimension 0 (size 7, without transpose_b)}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that transpose_b changes which rhs dimension is contracted.
func.func @matmul_transpose_b_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op contracted dimensions differ: lhs dimension 1 (size 8, without transpose_a) vs rhs dimension 1 (size 16, with transpose_b)}}
  %0 = loom.matmul %a, %b transpose_b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that transpose_a changes which lhs dimension is contracted.
func.func @matmul_transpose_a_mismatch(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op contracted dimensions differ: lhs dimension 0 (size 4, with transpose_a) vs rhs dimension 0 (size 8, without transpose_b)}}
  %0 = loom.matmul %a, %b transpose_a : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that a batched lhs contracted against a shared rank-2 rhs names the
// absolute dimensions and transpose_b.
func.func @matmul_shared_rhs_transpose_b_mismatch(%a: tensor<2x4x32xf32>, %b: tensor<32x3xf32>) {
  // expected-error@+1 {{'loom.matmul' op contracted dimensions differ: lhs dimension 2 (size 32, without transpose_a) vs rhs dimension 1 (size 3, with transpose_b)}}
  %0 = loom.matmul %a, %b transpose_b : (tensor<2x4x32xf32>, tensor<32x3xf32>) -> tensor<2x4x32xf32>
  return
}

// -----

// Tests that both transpose flags are named when both select the contracted
// dimensions of batched operands.
func.func @matmul_both_transposes_mismatch(%a: tensor<2x8x4xf32>, %b: tensor<2x16x32xf32>) {
  // expected-error@+1 {{'loom.matmul' op contracted dimensions differ: lhs dimension 1 (size 8, with transpose_a) vs rhs dimension 2 (size 32, with transpose_b)}}
  %0 = loom.matmul %a, %b transpose_a transpose_b : (tensor<2x8x4xf32>, tensor<2x16x32xf32>) -> tensor<2x4x16xf32>
  return
}

// -----

// Tests that the matmul result type must be the inferred one.
func.func @matmul_wrong_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error@+1 {{'loom.matmul' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.linear
//===----------------------------------------------------------------------===//

// Tests that the linear weight must have rank 2.
func.func @linear_weight_rank3(%x: tensor<8x32xf32>, %w: tensor<64x32x1xf32>) {
  // expected-error@+1 {{'loom.linear' op weight must have rank 2 [out, in], got 'tensor<64x32x1xf32>'}}
  %0 = loom.linear %x, %w : (tensor<8x32xf32>, tensor<64x32x1xf32>) -> tensor<8x64xf32>
  return
}

// -----

// Tests that the linear input's last dimension must be the weight's `in`.
func.func @linear_in_mismatch(%x: tensor<8x16xf32>, %w: tensor<64x32xf32>) {
  // expected-error@+1 {{'loom.linear' op input's last dimension must be 32, weight dimension 1 (weight is [out, in]), got 'tensor<8x16xf32>'}}
  %0 = loom.linear %x, %w : (tensor<8x16xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  return
}

// -----

// Tests that the linear input must have rank >= 1.
func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<64x32xf32>) {
  // expected-error@+1 {{'loom.linear' op input's last dimension must be 32, weight dimension 1 (weight is [out, in]), got 'tensor<f32>'}}
  %0 = loom.linear %x, %w : (tensor<f32>, tensor<64x32xf32>) -> tensor<64xf32>
  return
}

// -----

// Tests that the linear bias must have shape [out].
func.func @linear_bias_shape(%x: tensor<8x32xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{'loom.linear' op bias must be [64] (weight dimension 0, out) with the weight's element type, got 'tensor<32xf32>'}}
  %0 = loom.linear %x, %w, %b : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<8x64xf32>
  return
}

// -----

// Tests that the linear bias must have the weight's element type.
func.func @linear_bias_element_type(%x: tensor<8x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf64>) {
  // expected-error@+1 {{'loom.linear' op bias must be [64] (weight dimension 0, out) with the weight's element type, got 'tensor<64xf64>'}}
  %0 = loom.linear %x, %w, %b : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf64>) -> tensor<8x64xf32>
  return
}

// -----

// Tests that the linear input and weight must have the same element type.
func.func @linear_mixed_element_types(%x: tensor<8x32xf64>, %w: tensor<64x32xf32>) {
  // expected-error@+1 {{'loom.linear' op input element type 'f64' differs from weight element type 'f32'}}
  %0 = loom.linear %x, %w : (tensor<8x32xf64>, tensor<64x32xf32>) -> tensor<8x64xf64>
  return
}

// -----

// Tests that the linear result must be the inferred [..., out] type.
func.func @linear_wrong_result(%x: tensor<2x8x32xf32>, %w: tensor<64x32xf32>) {
  // expected-error@+1 {{'loom.linear' op inferred type(s) 'tensor<2x8x64xf32>' are incompatible with return type(s) of operation 'tensor<16x64xf32>'}}
  %0 = loom.linear %x, %w : (tensor<2x8x32xf32>, tensor<64x32xf32>) -> tensor<16x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.layernorm
//===----------------------------------------------------------------------===//

// Tests that the layernorm weight must have shape [D].
func.func @layernorm_weight_shape(%x: tensor<4x64xf32>, %g: tensor<32xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{'loom.layernorm' op weight must be [64] (the input's last dimension) with the input's element type, got 'tensor<32xf32>'}}
  %0 = loom.layernorm %x, %g, %b : (tensor<4x64xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return
}

// -----

// Tests that the layernorm bias must have shape [D].
func.func @layernorm_bias_shape(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<1x64xf32>) {
  // expected-error@+1 {{'loom.layernorm' op bias must be [64] (the input's last dimension) with the input's element type, got 'tensor<1x64xf32>'}}
  %0 = loom.layernorm %x, %g, %b : (tensor<4x64xf32>, tensor<64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>
  return
}

// -----

// Tests that layernorm operands must share the input's element type.
func.func @layernorm_element_type(%x: tensor<4x64xf32>, %g: tensor<64xf64>, %b: tensor<64xf32>) {
  // expected-error@+1 {{'loom.layernorm' op weight must be [64] (the input's last dimension) with the input's element type, got 'tensor<64xf64>'}}
  %0 = loom.layernorm %x, %g, %b : (tensor<4x64xf32>, tensor<64xf64>, tensor<64xf32>) -> tensor<4x64xf32>
  return
}

// -----

// Tests that a zero epsilon is rejected.
func.func @layernorm_zero_epsilon(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{'loom.layernorm' op epsilon must be positive}}
  %0 = loom.layernorm %x, %g, %b {epsilon = 0.0} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return
}

// -----

// Tests that a negative epsilon is rejected.
func.func @layernorm_negative_epsilon(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{'loom.layernorm' op epsilon must be positive}}
  %0 = loom.layernorm %x, %g, %b {epsilon = -1.0e-5} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return
}

// -----

// Tests that the layernorm input must have rank >= 1.
func.func @layernorm_scalar_input(%x: tensor<f32>, %g: tensor<64xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{'loom.layernorm' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = loom.layernorm %x, %g, %b : (tensor<f32>, tensor<64xf32>, tensor<64xf32>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.softmax
//===----------------------------------------------------------------------===//

// Tests that softmax needs rank >= 1.
func.func @softmax_scalar(%x: tensor<f32>) {
  // expected-error@+1 {{'loom.softmax' op expects rank >= 1}}
  %0 = loom.softmax %x : tensor<f32>
  return
}

// -----

// Tests that the softmax result type equals the operand type.
func.func @softmax_wrong_result(%x: tensor<4xf32>) {
  // expected-error@+1 {{'loom.softmax' op requires the same type for all operands and results}}
  %0 = "loom.softmax"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.attention
//===----------------------------------------------------------------------===//

// Tests that query, key and value must have the same rank.
func.func @attention_rank_mismatch(%q: tensor<2x4x8xf32>, %k: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.attention' op query, key and value must have the same rank >= 2, got ranks 3, 2 and 2}}
  %0 = loom.attention %q, %k, %k : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

// Tests that attention operands must have rank >= 2.
func.func @attention_rank1(%q: tensor<8xf32>) {
  // expected-error@+1 {{'loom.attention' op query, key and value must have the same rank >= 2, got ranks 1, 1 and 1}}
  %0 = loom.attention %q, %q, %q : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// Tests that attention operands must have the same element type.
func.func @attention_mixed_element_types(%q: tensor<4x8xf32>, %k: tensor<4x8xf64>) {
  // expected-error@+1 {{'loom.attention' op key element type 'f64' differs from query element type 'f32'}}
  %0 = loom.attention %q, %k, %q : (tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that the error names the value when its element type differs.
func.func @attention_value_element_type(%q: tensor<4x8xf32>, %v: tensor<4x8xf64>) {
  // expected-error@+1 {{'loom.attention' op value element type 'f64' differs from query element type 'f32'}}
  %0 = loom.attention %q, %q, %v : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that attention operands must have the same leading dimensions.
func.func @attention_leading_mismatch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) {
  // expected-error@+1 {{'loom.attention' op key leading dimensions [3] differ from query leading dimensions [2]}}
  %0 = loom.attention %q, %k, %k : (tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

// Tests that the value's leading dimensions must match too.
func.func @attention_value_leading_mismatch(%q: tensor<2x4x8xf32>, %v: tensor<3x4x8xf32>) {
  // expected-error@+1 {{'loom.attention' op value leading dimensions [3] differ from query leading dimensions [2]}}
  %0 = loom.attention %q, %q, %v : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

// Tests that query and key must have the same last dimension.
func.func @attention_head_size_mismatch(%q: tensor<4x8xf32>, %k: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.attention' op query and key head sizes (last dimensions) differ: 8 vs 16}}
  %0 = loom.attention %q, %k, %k : (tensor<4x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that key and value must have the same number of rows.
func.func @attention_kv_rows_mismatch(%q: tensor<4x8xf32>, %v: tensor<5x8xf32>) {
  // expected-error@+1 {{'loom.attention' op key and value row counts (dimension 0) differ: 4 vs 5}}
  %0 = loom.attention %q, %q, %v : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that causal attention needs as many queries as keys.
func.func @attention_causal_rows_mismatch(%q: tensor<3x8xf32>, %k: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.attention' op with causal, query and key row counts (dimension 0) must be equal, got 3 vs 4}}
  %0 = loom.attention %q, %k, %k causal : (tensor<3x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<3x8xf32>
  return
}

// -----

// Tests that a zero scale is rejected.
func.func @attention_zero_scale(%q: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.attention' op scale must be positive}}
  %0 = loom.attention %q, %q, %q {scale = 0.0} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that a negative scale is rejected.
func.func @attention_negative_scale(%q: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.attention' op scale must be positive}}
  %0 = loom.attention %q, %q, %q {scale = -1.0} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that the attention result has the value's last dimension.
func.func @attention_wrong_result(%q: tensor<4x8xf32>, %v: tensor<4x2xf32>) {
  // expected-error@+1 {{'loom.attention' op inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = loom.attention %q, %q, %v : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that attention with segments needs rank >= 3.
func.func @attention_segments_rank2(%q: tensor<4x8xf32>, %s: tensor<1x4xi32>) {
  // expected-error@+1 {{'loom.attention' op segments need rank >= 3 and equal query and key row counts, got query [4, 8] and key [4, 8]}}
  %0 = loom.attention %q, %q, %q segments %s : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x4xi32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that attention with segments needs as many keys as queries.
func.func @attention_segments_cross(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %s: tensor<2x4xi32>) {
  // expected-error@+1 {{'loom.attention' op segments need rank >= 3 and equal query and key row counts, got query [2, 4, 8] and key [2, 6, 8]}}
  %0 = loom.attention %q, %k, %k segments %s : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x4xi32>) -> tensor<2x4x8xf32>
  return
}

// -----

// Tests that attention's segments have shape [first dimension, rows].
func.func @attention_segments_shape(%q: tensor<2x3x4x8xf32>, %s: tensor<3x4xi32>) {
  // expected-error@+1 {{'loom.attention' op segments must have shape [2, 4] (the query's first dimension and its rows), got [3, 4]}}
  %0 = loom.attention %q, %q, %q segments %s causal : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<3x4xi32>) -> tensor<2x3x4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.embedding
//===----------------------------------------------------------------------===//

// Tests that the embedding table must have rank 2.
func.func @embedding_table_rank1(%t: tensor<256xf32>, %i: tensor<4xi32>) {
  // expected-error@+1 {{'loom.embedding' op table must have rank 2, got 'tensor<256xf32>'}}
  %0 = loom.embedding %t, %i : (tensor<256xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

// Tests that the embedding result is the indices' shape plus the row width.
func.func @embedding_wrong_result(%t: tensor<256x64xf32>, %i: tensor<4xi32>) {
  // expected-error@+1 {{'loom.embedding' op inferred type(s) 'tensor<4x64xf32>' are incompatible with return type(s) of operation 'tensor<4x256xf32>'}}
  %0 = loom.embedding %t, %i : (tensor<256x64xf32>, tensor<4xi32>) -> tensor<4x256xf32>
  return
}

// -----

// Tests that embedding indices must be integers.
func.func @embedding_float_indices(%t: tensor<256x64xf32>, %i: tensor<4xf32>) {
  // expected-error@+1 {{'loom.embedding' op operand #1 must be non-empty statically shaped integer tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = loom.embedding %t, %i : (tensor<256x64xf32>, tensor<4xf32>) -> tensor<4x64xf32>
  return
}

// -----

// Tests that integer tensors must not be empty either.
func.func @embedding_empty_indices(%t: tensor<256x64xf32>, %i: tensor<0xi32>) {
  // expected-error@+1 {{'loom.embedding' op operand #1 must be non-empty statically shaped integer tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<0xi32>'}}
  %0 = loom.embedding %t, %i : (tensor<256x64xf32>, tensor<0xi32>) -> tensor<0x64xf32>
  return
}

// -----

// Tests that the embedding table must be a float tensor.
func.func @embedding_integer_table(%t: tensor<256x64xi32>, %i: tensor<4xi32>) {
  // expected-error@+1 {{'loom.embedding' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<256x64xi32>'}}
  %0 = loom.embedding %t, %i : (tensor<256x64xi32>, tensor<4xi32>) -> tensor<4x64xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.cross_entropy
//===----------------------------------------------------------------------===//

// Tests that targets must have the logits' shape without the class dimension.
func.func @cross_entropy_targets_shape(%l: tensor<4x16x256xf32>, %y: tensor<4x8xi32>) {
  // expected-error@+1 {{'loom.cross_entropy' op targets must have the logits' shape without the class dimension: logits [4, 16, 256], targets [4, 8]}}
  %0 = loom.cross_entropy %l, %y : (tensor<4x16x256xf32>, tensor<4x8xi32>) -> tensor<f32>
  return
}

// -----

// Tests that targets may not keep the class dimension.
func.func @cross_entropy_targets_with_classes(%l: tensor<4x10xf32>, %y: tensor<4x10xi32>) {
  // expected-error@+1 {{'loom.cross_entropy' op targets must have the logits' shape without the class dimension: logits [4, 10], targets [4, 10]}}
  %0 = loom.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4x10xi32>) -> tensor<f32>
  return
}

// -----

// Tests that the logits must have rank >= 1.
func.func @cross_entropy_scalar_logits(%l: tensor<f32>, %y: tensor<i32>) {
  // expected-error@+1 {{'loom.cross_entropy' op targets must have the logits' shape without the class dimension: logits [], targets []}}
  %0 = loom.cross_entropy %l, %y : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

// Tests that the loss has the logits' element type.
func.func @cross_entropy_wrong_element_type(%l: tensor<4x10xf32>, %y: tensor<4xi32>) {
  // expected-error@+1 {{'loom.cross_entropy' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<f64>'}}
  %0 = loom.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f64>
  return
}

// -----

// Tests that the loss is a scalar.
func.func @cross_entropy_not_scalar(%l: tensor<4x10xf32>, %y: tensor<4xi32>) {
  // expected-error@+1 {{'loom.cross_entropy' op result #0 must be 0D tensor of 32-bit float or 64-bit float values, but got 'tensor<4xf32>'}}
  %0 = loom.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

// Tests that cross_entropy targets must be integers.
func.func @cross_entropy_float_targets(%l: tensor<4x10xf32>, %y: tensor<4xf32>) {
  // expected-error@+1 {{'loom.cross_entropy' op operand #1 must be non-empty statically shaped integer tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = loom.cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.one_hot
//===----------------------------------------------------------------------===//

// Tests that one_hot adds exactly one class dimension.
func.func @one_hot_no_class_dim(%y: tensor<8xi32>) {
  // expected-error@+1 {{'loom.one_hot' op result shape must be the indices' shape [8] plus a class dimension, got [8]}}
  %0 = loom.one_hot %y : tensor<8xi32> -> tensor<8xf32>
  return
}

// -----

// Tests that the one_hot result starts with the indices' shape.
func.func @one_hot_wrong_prefix(%y: tensor<8xi32>) {
  // expected-error@+1 {{'loom.one_hot' op result shape must be the indices' shape [8] plus a class dimension, got [4, 10]}}
  %0 = loom.one_hot %y : tensor<8xi32> -> tensor<4x10xf32>
  return
}

// -----

// Tests that the one_hot result must be a float tensor.
func.func @one_hot_integer_result(%y: tensor<8xi32>) {
  // expected-error@+1 {{'loom.one_hot' op result #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<8x10xi32>'}}
  %0 = loom.one_hot %y : tensor<8xi32> -> tensor<8x10xi32>
  return
}

// -----

// Tests that one_hot indices must be i32 or i64.
func.func @one_hot_float_indices(%y: tensor<8xf32>) {
  // expected-error@+1 {{'loom.one_hot' op operand #0 must be non-empty statically shaped integer tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %0 = loom.one_hot %y : tensor<8xf32> -> tensor<8x10xf32>
  return
}

// -----

// Tests that one_hot rejects i16 indices.
func.func @one_hot_i16_indices(%y: tensor<8xi16>) {
  // expected-error@+1 {{'loom.one_hot' op operand #0 must be non-empty statically shaped integer tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi16>'}}
  %0 = loom.one_hot %y : tensor<8xi16> -> tensor<8x10xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.reshape
//===----------------------------------------------------------------------===//

// Tests that reshape keeps the element type.
func.func @reshape_element_type(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.reshape' op element types differ}}
  %0 = loom.reshape %x : tensor<4x16xf32> -> tensor<64xf64>
  return
}

// -----

// Tests that reshape keeps the number of elements.
func.func @reshape_element_count(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.reshape' op element counts differ: 64 vs 60}}
  %0 = loom.reshape %x : tensor<4x16xf32> -> tensor<60xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.transpose
//===----------------------------------------------------------------------===//

// Tests that the permutation must have one entry per dimension.
func.func @transpose_short_permutation(%x: tensor<4x16x8xf32>) {
  // expected-error@+1 {{'loom.transpose' op permutation [1, 0] must be a permutation of the input's dimensions [0, 3)}}
  %0 = loom.transpose %x perm = [1, 0] : tensor<4x16x8xf32> -> tensor<16x4xf32>
  return
}

// -----

// Tests that the permutation may not repeat a dimension.
func.func @transpose_repeated(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.transpose' op permutation [0, 0] must be a permutation of the input's dimensions [0, 2)}}
  %0 = loom.transpose %x perm = [0, 0] : tensor<4x16xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that permutation entries must be in [0, rank).
func.func @transpose_out_of_range(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.transpose' op permutation [2, 0] must be a permutation of the input's dimensions [0, 2)}}
  %0 = loom.transpose %x perm = [2, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  return
}

// -----

// Tests that negative permutation entries are rejected.
func.func @transpose_negative(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.transpose' op permutation [-1, 0] must be a permutation of the input's dimensions [0, 2)}}
  %0 = loom.transpose %x perm = [-1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  return
}

// -----

// Tests that the transpose result is the permuted shape.
func.func @transpose_wrong_result(%x: tensor<4x16xf32>) {
  // expected-error@+1 {{'loom.transpose' op inferred type(s) 'tensor<16x4xf32>' are incompatible with return type(s) of operation 'tensor<4x16xf32>'}}
  %0 = loom.transpose %x perm = [1, 0] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.broadcast_to
//===----------------------------------------------------------------------===//

// Tests that broadcast_to keeps the element type.
func.func @broadcast_to_element_type(%x: tensor<1x64xf32>) {
  // expected-error@+1 {{'loom.broadcast_to' op element types differ}}
  %0 = loom.broadcast_to %x : tensor<1x64xf32> -> tensor<8x64xf64>
  return
}

// -----

// Tests that a non-unit dimension cannot be broadcast.
func.func @broadcast_to_incompatible(%x: tensor<2x64xf32>) {
  // expected-error@+1 {{'loom.broadcast_to' op cannot broadcast [2, 64] to [8, 64]}}
  %0 = loom.broadcast_to %x : tensor<2x64xf32> -> tensor<8x64xf32>
  return
}

// -----

// Tests that broadcast_to cannot drop dimensions.
func.func @broadcast_to_lower_rank(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{'loom.broadcast_to' op cannot broadcast [8, 64] to [64]}}
  %0 = loom.broadcast_to %x : tensor<8x64xf32> -> tensor<64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.split
//===----------------------------------------------------------------------===//

// Tests that the split axis must be below the rank.
func.func @split_axis_too_large(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op axis 2 is out of range for rank 2}}
  %0, %1 = loom.split %x axis = 2 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return
}

// -----

// Tests that a negative split axis is rejected.
func.func @split_axis_negative(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op axis -1 is out of range for rank 2}}
  %0, %1 = loom.split %x axis = -1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return
}

// -----

// Tests that split needs at least one result.
func.func @split_no_results(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op expects at least one result}}
  "loom.split"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// Tests that split results keep the input's element type.
func.func @split_element_type(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op result 'tensor<4x4xf64>' must have the input's element type and rank}}
  %0, %1 = loom.split %x axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xf64>
  return
}

// -----

// Tests that split results keep the input's rank.
func.func @split_rank(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op result 'tensor<4xf32>' must have the input's element type and rank}}
  %0, %1 = loom.split %x axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that split results keep the input's sizes outside the axis.
func.func @split_other_dim(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op result 'tensor<3x4xf32>' differs from the input outside axis 1}}
  %0, %1 = loom.split %x axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<3x4xf32>
  return
}

// -----

// Tests that split sizes along the axis must add up to the input's.
func.func @split_sizes_too_large(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op result sizes along axis 1 add up to 9, expected 8}}
  %0, %1 = loom.split %x axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x5xf32>
  return
}

// -----

// Tests that split sizes may not leave part of the input out.
func.func @split_sizes_too_small(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.split' op result sizes along axis 0 add up to 3, expected 4}}
  %0, %1 = loom.split %x axis = 0 : tensor<4x8xf32> -> tensor<1x8xf32>, tensor<2x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.concat
//===----------------------------------------------------------------------===//

// Tests that concat needs at least one operand.
func.func @concat_no_operands() {
  // expected-error@+1 {{'loom.concat' op expects at least one operand}}
  %0 = loom.concat axis = 0 : () -> tensor<4xf32>
  return
}

// -----

// Tests that the concat axis must be below the rank.
func.func @concat_axis_too_large(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.concat' op axis 2 is out of range for operand #0's rank 2}}
  %0 = loom.concat %a, %a axis = 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that a negative concat axis is rejected.
func.func @concat_axis_negative(%a: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.concat' op axis -1 is out of range for operand #0's rank 2}}
  %0 = loom.concat %a, %a axis = -1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that concat operands must have the same element type.
func.func @concat_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xf64>) {
  // expected-error@+1 {{'loom.concat' op operand #1 'tensor<4x8xf64>' differs from operand #0 'tensor<4x8xf32>' in rank or element type}}
  %0 = loom.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x8xf64>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that concat operands must have the same rank.
func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<4x8x1xf32>) {
  // expected-error@+1 {{'loom.concat' op operand #1 'tensor<4x8x1xf32>' differs from operand #0 'tensor<4x8xf32>' in rank or element type}}
  %0 = loom.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x8x1xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that concat operands must agree outside the axis.
func.func @concat_other_dim(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error@+1 {{'loom.concat' op operand #1 'tensor<3x8xf32>' differs from operand #0 'tensor<4x8xf32>' outside axis 1}}
  %0 = loom.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<7x16xf32>
  return
}

// -----

// Tests that the error names the operand that differs by its position.
func.func @concat_third_operand_other_dim(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error@+1 {{'loom.concat' op operand #2 'tensor<3x8xf32>' differs from operand #0 'tensor<4x8xf32>' outside axis 1}}
  %0 = loom.concat %a, %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x24xf32>
  return
}

// -----

// Tests that the concat result is the inferred one.
func.func @concat_wrong_result(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.concat' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<8x8xf32>'}}
  %0 = loom.concat %a, %b axis = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// Tests that reduction axes must be below the rank.
func.func @sum_axis_too_large(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.sum' op axes [2] must be increasing and among the input's dimensions [0, 2)}}
  %0 = loom.sum %x axes = [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that negative reduction axes are rejected.
func.func @mean_axis_negative(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.mean' op axes [-1] must be increasing and among the input's dimensions [0, 2)}}
  %0 = loom.mean %x axes = [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that reduction axes must be listed in increasing order.
func.func @reduce_max_axes_unsorted(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.reduce_max' op axes [1, 0] must be increasing and among the input's dimensions [0, 2)}}
  %0 = loom.reduce_max %x axes = [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

// Tests that reduction axes must be distinct.
func.func @sum_axes_repeated(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.sum' op axes [1, 1] must be increasing and among the input's dimensions [0, 2)}}
  %0 = loom.sum %x axes = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that without keepdim the reduced dimensions are dropped.
func.func @sum_missing_keepdim(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.sum' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  %0 = loom.sum %x axes = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// Tests that with keepdim the reduced dimensions stay with size 1.
func.func @reduce_max_keepdim_dropped(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'loom.reduce_max' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  %0 = loom.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.lr_schedule
//===----------------------------------------------------------------------===//

// Tests that lr must be positive.
func.func @lr_schedule_zero_lr(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op lr must be positive}}
  %0 = loom.lr_schedule %s {lr = 0.0} : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that a negative lr is rejected.
func.func @lr_schedule_negative_lr(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op lr must be positive}}
  %0 = loom.lr_schedule %s {lr = -1.0e-3} : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that lr is required.
func.func @lr_schedule_no_lr(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op requires attribute 'lr'}}
  %0 = loom.lr_schedule %s : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that a negative min_lr is rejected.
func.func @lr_schedule_negative_min_lr(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op min_lr must be in [0, lr]}}
  %0 = loom.lr_schedule %s {lr = 1.0e-3, min_lr = -1.0e-4} : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that min_lr may not exceed lr.
func.func @lr_schedule_min_lr_above_lr(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op min_lr must be in [0, lr]}}
  %0 = loom.lr_schedule %s {lr = 1.0e-3, min_lr = 1.0e-2} : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that a negative warmup_steps is rejected.
func.func @lr_schedule_negative_warmup(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op step counts must be non-negative}}
  %0 = loom.lr_schedule %s {lr = 1.0e-3, warmup_steps = -1 : i64} : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that a negative decay_steps is rejected.
func.func @lr_schedule_negative_decay(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op step counts must be non-negative}}
  %0 = loom.lr_schedule %s {lr = 1.0e-3, decay_steps = -5 : i64} : tensor<i64> -> tensor<f32>
  return
}

// -----

// Tests that the step must be a 0-d i64 tensor.
func.func @lr_schedule_i32_step(%s: tensor<i32>) {
  // expected-error@+1 {{'loom.lr_schedule' op operand #0 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = loom.lr_schedule %s {lr = 1.0e-3} : tensor<i32> -> tensor<f32>
  return
}

// -----

// Tests that the learning rate is a 0-d float tensor.
func.func @lr_schedule_non_scalar_result(%s: tensor<i64>) {
  // expected-error@+1 {{'loom.lr_schedule' op result #0 must be 0D tensor of 32-bit float or 64-bit float values, but got 'tensor<1xf32>'}}
  %0 = loom.lr_schedule %s {lr = 1.0e-3} : tensor<i64> -> tensor<1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.adamw
//===----------------------------------------------------------------------===//

// Tests that adamw must name a loom.param.
func.func @adamw_missing_param(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op 'nope' does not name a loom.param}}
  loom.adamw @nope, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that the adamw gradient must have the parameter's type.
loom.param @p : tensor<8xf32> init zeros
func.func @adamw_grad_type(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op gradient type 'tensor<4xf32>' does not match parameter type 'tensor<8xf32>'}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that beta1 = 1 is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_beta1_one(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op beta1 and beta2 must be in [0, 1)}}
  loom.adamw @p, %g, %lr, %s {beta1 = 1.0, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that a negative beta1 is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_beta1_negative(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op beta1 and beta2 must be in [0, 1)}}
  loom.adamw @p, %g, %lr, %s {beta1 = -0.1, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that a negative beta2 is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_beta2_negative(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op beta1 and beta2 must be in [0, 1)}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = -0.1, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that beta2 = 1 is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_beta2_one(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op beta1 and beta2 must be in [0, 1)}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = 1.0, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that a zero eps is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_zero_eps(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op eps must be positive}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 0.0, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that a negative weight_decay is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_negative_weight_decay(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op weight_decay must be non-negative}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = -0.01} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that the adamw learning rate must be a 0-d tensor.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_lr_not_scalar(%g: tensor<4xf32>, %lr: tensor<1xf32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op operand #1 must be 0D tensor of 32-bit float or 64-bit float values, but got 'tensor<1xf32>'}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : tensor<4xf32>, tensor<1xf32>, tensor<i64>
  return
}

// -----

// Tests that the adamw step must be a 0-d i64 tensor.
loom.param @p : tensor<4xf32> init zeros
func.func @adamw_i32_step(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i32>) {
  // expected-error@+1 {{'loom.adamw' op operand #2 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  loom.adamw @p, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.sgd
//===----------------------------------------------------------------------===//

// Tests that sgd must name a loom.param.
func.func @sgd_missing_param(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op 'nope' does not name a loom.param}}
  loom.sgd @nope, %g, %lr, %s {momentum = 0.9, weight_decay = 0.0} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that the sgd gradient must have the parameter's type.
loom.param @p : tensor<4xf64> init zeros
func.func @sgd_grad_type(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op gradient type 'tensor<4xf32>' does not match parameter type 'tensor<4xf64>'}}
  loom.sgd @p, %g, %lr, %s {momentum = 0.9, weight_decay = 0.0} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that momentum = 1 is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @sgd_momentum_one(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op momentum must be in [0, 1)}}
  loom.sgd @p, %g, %lr, %s {momentum = 1.0, weight_decay = 0.0} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that a negative momentum is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @sgd_momentum_negative(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op momentum must be in [0, 1)}}
  loom.sgd @p, %g, %lr, %s {momentum = -0.5, weight_decay = 0.0} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that a negative weight_decay is rejected.
loom.param @p : tensor<4xf32> init zeros
func.func @sgd_negative_weight_decay(%g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op weight_decay must be non-negative}}
  loom.sgd @p, %g, %lr, %s {momentum = 0.9, weight_decay = -1.0} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that sgd gradients must be float tensors.
loom.param @p : tensor<4xf32> init zeros
func.func @sgd_integer_grad(%g: tensor<4xi32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op operand #0 must be non-empty statically shaped float tensor of 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  loom.sgd @p, %g, %lr, %s {momentum = 0.9, weight_decay = 0.0} : tensor<4xi32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Tests that loom ops need static shapes.
func.func @no_dynamic_shapes(%x: tensor<?x4xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{'loom.reshape' op operand #0 must be non-empty statically shaped float tensor}}
  %0 = loom.reshape %x : tensor<?x4xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// loom.co2_outer
//===----------------------------------------------------------------------===//

// Tests that co2_outer must name a loom.param.
func.func @co2_outer_missing_param(%m: tensor<4xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer' op 'nope' does not name a loom.param}}
  loom.co2_outer @nope, %m, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : tensor<4xf32>, tensor<i64>
  return
}

// -----

// Tests that the mean has the parameter's type.
loom.param @w : tensor<4xf32> init zeros
func.func @co2_outer_mean_type(%m: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer' op mean type 'tensor<8xf32>' does not match parameter type 'tensor<4xf32>'}}
  loom.co2_outer @w, %m, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : tensor<8xf32>, tensor<i64>
  return
}

// -----

// Tests that outer_lr must be positive.
loom.param @w : tensor<4xf32> init zeros
func.func @co2_outer_lr(%m: tensor<4xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer' op outer_lr must be positive}}
  loom.co2_outer @w, %m, %r {outer_lr = 0.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : tensor<4xf32>, tensor<i64>
  return
}

// -----

// Tests that outer_momentum must be in [0, 1).
loom.param @w : tensor<4xf32> init zeros
func.func @co2_outer_momentum(%m: tensor<4xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer' op outer_momentum must be in [0, 1)}}
  loom.co2_outer @w, %m, %r {outer_lr = 1.0, outer_momentum = 1.0, gap_penalty = 1.0, clip = 1.0} : tensor<4xf32>, tensor<i64>
  return
}

// -----

// Tests that gap_penalty must be non-negative.
loom.param @w : tensor<4xf32> init zeros
func.func @co2_outer_penalty(%m: tensor<4xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer' op gap_penalty must be non-negative}}
  loom.co2_outer @w, %m, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = -1.0, clip = 1.0} : tensor<4xf32>, tensor<i64>
  return
}

// -----

// Tests that clip must be non-negative.
loom.param @w : tensor<4xf32> init zeros
func.func @co2_outer_clip(%m: tensor<4xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer' op clip must be non-negative (0: no clipping)}}
  loom.co2_outer @w, %m, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = -1.0} : tensor<4xf32>, tensor<i64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.co2_outer_shard
//===----------------------------------------------------------------------===//

// Tests that the state name is not empty.
func.func @co2_outer_shard_name(%x: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer_shard' op name must not be empty (it prefixes the state tensors)}}
  %0 = loom.co2_outer_shard "", %x, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : tensor<8xf32>, tensor<i64>
  return
}

// -----

// Tests that the result has the mean's type.
func.func @co2_outer_shard_types(%x: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer_shard' op failed to verify that all of {mean, new_x} have same type}}
  %0 = "loom.co2_outer_shard"(%x, %r) {name = "s", outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : (tensor<8xf32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

// Tests that outer_lr must be positive.
func.func @co2_outer_shard_lr(%x: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer_shard' op outer_lr must be positive}}
  %0 = loom.co2_outer_shard "s", %x, %r {outer_lr = -1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = 1.0} : tensor<8xf32>, tensor<i64>
  return
}

// -----

// Tests that outer_momentum must be in [0, 1).
func.func @co2_outer_shard_momentum(%x: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer_shard' op outer_momentum must be in [0, 1)}}
  %0 = loom.co2_outer_shard "s", %x, %r {outer_lr = 1.0, outer_momentum = -0.5, gap_penalty = 1.0, clip = 1.0} : tensor<8xf32>, tensor<i64>
  return
}

// -----

// Tests that gap_penalty must be non-negative.
func.func @co2_outer_shard_penalty(%x: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer_shard' op gap_penalty must be non-negative}}
  %0 = loom.co2_outer_shard "s", %x, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = -2.0, clip = 1.0} : tensor<8xf32>, tensor<i64>
  return
}

// -----

// Tests that clip must be non-negative.
func.func @co2_outer_shard_clip(%x: tensor<8xf32>, %r: tensor<i64>) {
  // expected-error@+1 {{'loom.co2_outer_shard' op clip must be non-negative (0: no clipping)}}
  %0 = loom.co2_outer_shard "s", %x, %r {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 1.0, clip = -1.0} : tensor<8xf32>, tensor<i64>
  return
}

//===----------------------------------------------------------------------===//
// #loom.machine and #loom.co2
//===----------------------------------------------------------------------===//

// -----

// Tests that the machine model's link bandwidth must be positive.
// expected-error@+1 {{link_gbps and gflops must be positive}}
module attributes {loom.machine = #loom.machine<link_gbps = 0.0 : f64, link_latency_us = 50.0 : f64, gflops = 50.0 : f64, comm_cpu = 0.2 : f64>} {}

// -----

// Tests that its compute rate must be positive.
// expected-error@+1 {{link_gbps and gflops must be positive}}
module attributes {loom.machine = #loom.machine<link_gbps = 1.0 : f64, link_latency_us = 50.0 : f64, gflops = -1.0 : f64, comm_cpu = 0.2 : f64>} {}

// -----

// Tests that its latency must not be negative.
// expected-error@+1 {{link_latency_us must not be negative}}
module attributes {loom.machine = #loom.machine<link_gbps = 1.0 : f64, link_latency_us = -1.0 : f64, gflops = 50.0 : f64, comm_cpu = 0.2 : f64>} {}

// -----

// Tests that comm_cpu is a fraction of time.
// expected-error@+1 {{comm_cpu must be in [0, 1]}}
module attributes {loom.machine = #loom.machine<link_gbps = 1.0 : f64, link_latency_us = 50.0 : f64, gflops = 50.0 : f64, comm_cpu = 1.5 : f64>} {}

// -----

// Tests that CO2 runs at least one local step.
// expected-error@+1 {{local_steps must be at least 1 and ranks at least 2}}
module attributes {loom.co2 = #loom.co2<local_steps = 0, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "">} {}

// -----

// Tests that CO2 needs two ranks to average.
// expected-error@+1 {{local_steps must be at least 1 and ranks at least 2}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 1, local_steps_reason = "">} {}

// -----

// Tests that the outer learning rate must be positive.
// expected-error@+1 {{outer_lr must be positive}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.0 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "">} {}

// -----

// Tests that the outer momentum must be below 1.
// expected-error@+1 {{outer_momentum must be in [0, 1)}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 1.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "">} {}

// -----

// Tests that the gap penalty and clip must not be negative.
// expected-error@+1 {{gap_penalty and clip must not be negative}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = -1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "">} {}

// -----

// Tests that a sharded CO2 names its parameters.
// expected-error@+1 {{sharded needs params}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "", sharded = true, shard_elements = 8, shard_offsets = [0, 8], shard_sizes = [8, 7]>} {}

// -----

// Tests that a sharded CO2 has a positive slice size.
// expected-error@+1 {{sharded needs a positive shard_elements}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "", sharded = true, params = ["w"], shard_offsets = [0, 8], shard_sizes = [8, 7]>} {}

// -----

// Tests that a sharded CO2 has one slice per rank.
// expected-error@+1 {{shard_offsets and shard_sizes need one entry per rank (2)}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "", sharded = true, params = ["w"], shard_elements = 8, shard_offsets = [0], shard_sizes = [8]>} {}

// -----

// Tests that rank r's slice starts at r x shard_elements.
// expected-error@+1 {{rank 1's slice must start at 1 x shard_elements}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "", sharded = true, params = ["w"], shard_elements = 8, shard_offsets = [0, 7], shard_sizes = [8, 7]>} {}

// -----

// Tests that no slice is larger than shard_elements.
// expected-error@+1 {{rank 0's slice must start at 0 x shard_elements and hold at most shard_elements elements}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "", sharded = true, params = ["w"], shard_elements = 8, shard_offsets = [0, 8], shard_sizes = [9, 7]>} {}

// -----

// Tests that an unsharded CO2 has no layout.
// expected-error@+1 {{params, shard_elements and the slices are for sharded = true only}}
module attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 0.8 : f64, outer_momentum = 0.0 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64, mesh = @world, ranks = 2, local_steps_reason = "", params = ["w"]>} {}

// -----

// Tests that loom.co2 on a module is the typed attribute, not the dictionary
// of earlier versions.
// expected-error@+1 {{'loom.co2' must be a #loom.co2 attribute}}
module attributes {loom.co2 = {local_steps = 4 : i64}} {}

// -----

// Tests that loom.compression on a module is the typed attribute.
// expected-error@+1 {{'loom.compression' must be a #loom.compression attribute}}
module attributes {loom.compression = "powersgd"} {}

// -----

// Tests that loom.machine on a module is the typed attribute.
// expected-error@+1 {{'loom.machine' must be a #loom.machine attribute}}
module attributes {loom.machine = 1.0 : f64} {}

// -----

// Tests that ZeRO's stage is 1, 2 or 3.
// expected-error@+1 {{stage must be 1, 2 or 3, got 4}}
module attributes {loom.zero = #loom.zero<stage = 4, mesh = @world, ranks = 2, params = []>} {}

// -----

// Tests that ZeRO shards over at least two ranks.
// expected-error@+1 {{ranks must be at least 2, got 1}}
module attributes {loom.zero = #loom.zero<stage = 1, mesh = @world, ranks = 1, params = []>} {}

// -----

// Tests that ZeRO's params are names.
// expected-error@+1 {{params must be parameter names}}
module attributes {loom.zero = #loom.zero<stage = 1, mesh = @world, ranks = 2, params = [1]>} {}

// -----

// Tests that a tensor split's dimension is not negative.
// expected-error@+1 {{dim must not be negative, got -1}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = -1, blocks = 1, ranks = 2, mesh = @world, axis = "tp">}

// -----

// Tests that a tensor split has at least one block.
// expected-error@+1 {{blocks must be at least 1, got 0}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 0, ranks = 2, mesh = @world, axis = "tp">}

// -----

// Tests that a tensor split is over at least two ranks.
// expected-error@+1 {{ranks must be at least 2, got 1}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 1, ranks = 1, mesh = @world, axis = "tp">}

// -----

// Tests that a tensor split names its axis.
// expected-error@+1 {{axis must not be empty}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 1, ranks = 2, mesh = @world, axis = "">}

// -----

// Tests that loom.tensor_split is the typed attribute.
// expected-error@+1 {{'loom.tensor_split' must be a #loom.tensor_split attribute}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = 1 : i64}

// -----

// Tests that loom.tensor_split belongs on a loom.param.
// expected-error@+1 {{'loom.tensor_split' belongs on a loom.param}}
module attributes {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 1, ranks = 2, mesh = @world, axis = "tp">} {}

// -----

// Tests that the split dimension is one of the param's.
// expected-error@+1 {{'loom.tensor_split': dimension 2 of 'tensor<4x8xf32>' is not 1 equal blocks}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = 2, blocks = 1, ranks = 2, mesh = @world, axis = "tp">}

// -----

// Tests that the blocks divide the split dimension.
// expected-error@+1 {{'loom.tensor_split': dimension 0 of 'tensor<4x8xf32>' is not 3 equal blocks}}
loom.param @w : tensor<4x8xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 3, ranks = 2, mesh = @world, axis = "tp">}

// -----

// Tests that compression's method is one of the five.
// expected-error@+1 {{method must be bf16, powersgd, quant, topk or lgreco, got "zip"}}
module attributes {loom.compression = #loom.compression<method = "zip", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that PowerSGD's rank is at least 1.
// expected-error@+1 {{rank must be at least 1, got 0}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 0, bits = 8, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that quantisation's bits are 2, 4 or 8.
// expected-error@+1 {{bits must be 2, 4 or 8, got 3}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 4, bits = 3, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that top-k's density is in (0, 1].
// expected-error@+1 {{density must be in (0, 1], got 0}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 4, bits = 8, density = 0.0 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that the warm-up is not negative.
// expected-error@+1 {{warmup_steps and resolve_every must not be negative}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = -1, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that lgreco warms up for a step at least.
// expected-error@+1 {{lgreco needs at least one warm-up step (it measures at the last)}}
module attributes {loom.compression = #loom.compression<method = "lgreco", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = 0, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that the objective is time or bytes.
// expected-error@+1 {{objective must be time or bytes, got "speed"}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "speed", params = ["w"], rows = [4], cols = [8]>} {}

// -----

// Tests that there is one matrix view per param.
// expected-error@+1 {{params must be names, one per entry of rows and cols}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4, 2], cols = [8]>} {}

// -----

// Tests that the matrix views are not empty.
// expected-error@+1 {{rows and cols must be positive}}
module attributes {loom.compression = #loom.compression<method = "powersgd", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [0]>} {}

// -----

// Tests that lgreco's error measure is one it knows.
// expected-error@+1 {{error_measure must be relative or absolute, got "squared"}}
module attributes {loom.compression = #loom.compression<method = "lgreco", rank = 4, bits = 8, density = 1.0e-2 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w"], rows = [4], cols = [8], error_measure = "squared">} {}

// -----

//===----------------------------------------------------------------------===//
// Optimizer ops' slice form and loom.set_param
//===----------------------------------------------------------------------===//

loom.param @p : tensor<3x3xf32> init zeros

// Tests that a slice, its gradient and the result share one type.
func.func @adamw_slice_grad_type(%x: tensor<5xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op slice, gradient and result must have one type}}
  %0 = loom.adamw @p slice %x, %g, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<4xf32>, tensor<f32>, tensor<i64> -> tensor<5xf32>
  return
}

// -----

loom.param @p : tensor<3x3xf32> init zeros

// Tests that a slice is 1-D.
func.func @sgd_slice_rank(%x: tensor<2x2xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op the slice must be 1-D, got 'tensor<2x2xf32>'}}
  %0 = loom.sgd @p slice %x, %x, %lr, %s {momentum = 0.9, weight_decay = 0.0} : tensor<2x2xf32>, tensor<f32>, tensor<i64> -> tensor<2x2xf32>
  return
}

// -----

loom.param @p : tensor<3x3xf32> init zeros

// Tests that a slice holds no more elements than its parameter.
func.func @adamw_slice_too_long(%x: tensor<10xf32>, %lr: tensor<f32>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.adamw' op slice type 'tensor<10xf32>' is not a slice of parameter type 'tensor<3x3xf32>'}}
  %0 = loom.adamw @p slice %x, %x, %lr, %s {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<10xf32>, tensor<f32>, tensor<i64> -> tensor<10xf32>
  return
}

// -----

loom.param @p : tensor<3x3xf32> init zeros

// Tests that a slice has its parameter's element type.
func.func @sgd_slice_element_type(%x: tensor<4xf64>, %lr: tensor<f64>, %s: tensor<i64>) {
  // expected-error@+1 {{'loom.sgd' op slice type 'tensor<4xf64>' is not a slice of parameter type 'tensor<3x3xf32>'}}
  %0 = loom.sgd @p slice %x, %x, %lr, %s {momentum = 0.9, weight_decay = 0.0} : tensor<4xf64>, tensor<f64>, tensor<i64> -> tensor<4xf64>
  return
}

// -----

// Tests that set_param must name a loom.param.
func.func @set_param_missing(%v: tensor<4xf32>) {
  // expected-error@+1 {{'loom.set_param' op 'nope' does not name a loom.param}}
  loom.set_param @nope, %v : tensor<4xf32>
  return
}

// -----

loom.param @p : tensor<3x3xf32> init zeros

// Tests that set_param's value has the parameter's type.
func.func @set_param_type(%v: tensor<9xf32>) {
  // expected-error@+1 {{'loom.set_param' op value type 'tensor<9xf32>' does not match parameter type 'tensor<3x3xf32>'}}
  loom.set_param @p, %v : tensor<9xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// loom.perturb
//===----------------------------------------------------------------------===//

// Tests that a and b must have x's element type.
func.func @perturb_scalar_type(%x: tensor<4xf32>, %s: tensor<i64>, %a: tensor<f64>) {
  // expected-error@+1 {{'loom.perturb' op a and b must have x's element type}}
  %0 = loom.perturb %x, %s, %a, %a : tensor<4xf32>, tensor<i64>, tensor<f64>
  return
}

// -----

// Tests that x must have fewer than 2^32 elements (one counter word).
func.func @perturb_too_large(%x: tensor<65536x65536xf32>, %s: tensor<i64>, %a: tensor<f32>) {
  // expected-error@+1 {{'loom.perturb' op x must have fewer than 2^32 elements (its index is one 32-bit counter word), got 4294967296}}
  %0 = loom.perturb %x, %s, %a, %a : tensor<65536x65536xf32>, tensor<i64>, tensor<f32>
  return
}

// -----

// Tests that stream must be in [0, 2^32).
func.func @perturb_negative_stream(%x: tensor<4xf32>, %s: tensor<i64>, %a: tensor<f32>) {
  // expected-error@+1 {{'loom.perturb' op stream must be in [0, 2^32), got -1}}
  %0 = loom.perturb %x, %s, %a, %a {stream = -1 : i64} : tensor<4xf32>, tensor<i64>, tensor<f32>
  return
}

// -----

// Tests that direction must be in [0, 2^32).
func.func @perturb_large_direction(%x: tensor<4xf32>, %s: tensor<i64>, %a: tensor<f32>) {
  // expected-error@+1 {{'loom.perturb' op direction must be in [0, 2^32), got 4294967296}}
  %0 = loom.perturb %x, %s, %a, %a {direction = 4294967296 : i64} : tensor<4xf32>, tensor<i64>, tensor<f32>
  return
}

// -----

// Tests that a state is read only where the function sets it.
func.func @state_unset() -> tensor<2xf32> {
  // expected-error@+1 {{'loom.get_state' op state 'zo.pending' of type 'tensor<2xf32>' is not set by a loom.set_state of the function}}
  %old = loom.get_state "zo.pending" : tensor<2xf32>
  return %old : tensor<2xf32>
}

// -----

// Tests that a state is read with the type it is set with.
func.func @state_type(%new: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'loom.get_state' op state 'zo.pending' of type 'tensor<4xf32>' is not set by a loom.set_state of the function}}
  %old = loom.get_state "zo.pending" : tensor<4xf32>
  %n = loom.set_state "zo.pending", %new : tensor<2xf32>
  return %old : tensor<4xf32>
}

// -----

// Tests that a state's name has a prefix and a suffix.
func.func @state_name(%new: tensor<2xf32>) {
  // expected-error@+1 {{'loom.set_state' op name must be <prefix>.<suffix>, got 'pending'}}
  %n = loom.set_state "pending", %new : tensor<2xf32>
  return
}

// -----

// Tests that a state is read by a name of the same form.
func.func @state_read_name(%new: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'loom.get_state' op name must be <prefix>.<suffix>, got 'zo.'}}
  %old = loom.get_state "zo." : tensor<2xf32>
  return %old : tensor<2xf32>
}

// -----

// Tests that a function sets a state once.
func.func @state_twice(%a: tensor<2xf32>, %b: tensor<2xf32>) {
  // expected-error@+1 {{'loom.set_state' op state 'zo.pending' is set twice}}
  %n = loom.set_state "zo.pending", %a : tensor<2xf32>
  %m = loom.set_state "zo.pending", %b : tensor<2xf32>
  return
}
