// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-partition-sequences | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-partition-sequences="ranks=1" 2>/dev/null | FileCheck %s --check-prefix=ONE
// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-partition-sequences --loom-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD

// Tests that the attention of a model with documents becomes a
// loom.document_attention of the rank's queries as one sequence against the
// keys and values of all ranks (gathered along the batch): the documents
// and positions are flattened and gathered once, before any attention; the
// mesh is declared and loom.task marked partitioned.
// CHECK-LABEL: module @one_attention
// CHECK-SAME: loom.task = {{{.*}}partitioned = true
// CHECK: comm.mesh @world shape = [2] axes = ["dp"]
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %{{.+}}: tensor<2x4xi32> {loom.input = "tokens"}, %[[SEG:[^:]+]]: tensor<2x4xi32> {loom.input = "segments"}, %[[POS:[^:]+]]: tensor<2x4xi32> {loom.input = "positions"}
// CHECK: %[[QD:.+]] = tensor.collapse_shape %[[SEG]] {{\[\[}}0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK: %[[QP:.+]] = tensor.collapse_shape %[[POS]] {{\[\[}}0, 1]] : tensor<2x4xi32> into tensor<8xi32>
// CHECK: %[[KD:.+]] = comm.all_gather %[[QD]] over @world ["dp"] dim = 0 : tensor<8xi32> -> tensor<16xi32>
// CHECK: %[[KP:.+]] = comm.all_gather %[[QP]] over @world ["dp"] dim = 0 : tensor<8xi32> -> tensor<16xi32>
// CHECK-NOT: loom.attention
// CHECK: loom.transpose %{{.+}} perm = [1, 0, 2, 3] : tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
// CHECK: %[[Q:.+]] = loom.reshape %{{.+}} : tensor<2x2x4x3xf32> -> tensor<2x8x3xf32>
// CHECK: comm.all_gather %{{.+}} over @world ["dp"] dim = 0 : tensor<2x2x4x3xf32> -> tensor<4x2x4x3xf32>
// CHECK: %[[K:.+]] = loom.reshape %{{.+}} : tensor<2x4x4x3xf32> -> tensor<2x16x3xf32>
// CHECK: comm.all_gather %{{.+}} over @world ["dp"] dim = 0 : tensor<2x2x4x3xf32> -> tensor<4x2x4x3xf32>
// CHECK: %[[V:.+]] = loom.reshape %{{.+}} : tensor<2x4x4x3xf32> -> tensor<2x16x3xf32>
// CHECK: %[[O:.+]] = loom.document_attention %[[Q]], %[[K]], %[[V]], %[[QD]], %[[QP]], %[[KD]], %[[KP]] scale 0.57735026918962584 : tensor<2x8x3xf32>, tensor<2x16x3xf32>, tensor<8xi32>, tensor<16xi32>
// CHECK: %[[R:.+]] = loom.reshape %[[O]] : tensor<2x8x3xf32> -> tensor<2x2x4x3xf32>
// CHECK: loom.transpose %[[R]] perm = [1, 0, 2, 3] : tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
// With one rank nothing is gathered: the keys are the rank's own tokens.
// ONE-LABEL: module @one_attention
// ONE-NOT: comm.
// ONE: loom.document_attention %{{.+}} : tensor<2x8x3xf32>, tensor<2x8x3xf32>, tensor<8xi32>, tensor<8xi32>
// ONE-NOT: comm.
// Autodiff: the attention's gradient is loom.document_attention_grad, and
// each gather's input gets the sum over the ranks of its result's
// gradient.
// GRAD-LABEL: func.func @loss_and_grad(
// GRAD: comm.all_gather %{{.+}} over @world ["dp"] dim = 0 : tensor<2x2x4x3xf32> -> tensor<4x2x4x3xf32>
// GRAD: loom.document_attention_grad
// GRAD: comm.reduce_scatter %{{.+}} over @world ["dp"] sum dim = 0 : tensor<4x2x4x3xf32> -> tensor<2x2x4x3xf32>
// GRAD: comm.reduce_scatter %{{.+}} over @world ["dp"] sum dim = 0 : tensor<4x2x4x3xf32> -> tensor<2x2x4x3xf32>
// GRAD: return
module @one_attention attributes {loom.task = {kind = "lm", batch = 2 : i64, seq = 4 : i64, vocab = 8 : i64, documents = true}} {
  loom.param @qkv : tensor<2x2x4x3xf32> init normal scale 1.0
  func.func @loss(%tok: tensor<2x4xi32> {loom.input = "tokens"}, %seg: tensor<2x4xi32> {loom.input = "segments"}, %pos: tensor<2x4xi32> {loom.input = "positions"}) -> tensor<f32> {
    %x = loom.get_param @qkv : tensor<2x2x4x3xf32>
    %a = loom.attention %x, %x, %x segments %seg causal : (tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32>, tensor<2x4xi32>) -> tensor<2x2x4x3xf32>
    %l = loom.sum %a axes = [0, 1, 2, 3] : tensor<2x2x4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a model without document inputs is refused.
module @no_documents {
  // expected-error@+1 {{--loom-partition-sequences needs a model with documents: @loss inputs named 'segments' and 'positions' (e.g. gpt:...,docs=1)}}
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}) -> tensor<f32> {
    %l = loom.sum %x axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an attention not masked by the segments input is refused.
module @not_by_segments {
  func.func @loss(%seg: tensor<1x4xi32> {loom.input = "segments"}, %pos: tensor<1x4xi32> {loom.input = "positions"}, %x: tensor<1x2x4x3xf32>) -> tensor<f32> {
    // expected-error@+1 {{--loom-partition-sequences: every attention must be causal and masked by the 'segments' input, as a model with documents builds it}}
    %a = loom.attention %x, %x, %x causal : (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
    %l = loom.sum %a axes = [0, 1, 2, 3] : tensor<1x2x4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a model with documents but no attention is refused.
module @no_attention {
  // expected-error@+1 {{--loom-partition-sequences: @loss has no attention}}
  func.func @loss(%seg: tensor<1x4xi32> {loom.input = "segments"}, %pos: tensor<1x4xi32> {loom.input = "positions"}, %x: tensor<1x4xf32>) -> tensor<f32> {
    %l = loom.sum %x axes = [0, 1] : tensor<1x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
