// RUN: loom-opt %s -split-input-file -loom-decompose | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-decompose="keep-runtime-kernels=1" | FileCheck %s --check-prefix=KEEP

// Tests that softmax becomes the stable exp(x - max) / sum form over the
// last axis.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[MAX:.+]] = loom.reduce_max %[[X]] axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: %[[Z:.+]] = loom.sub %[[X]], %[[MAX]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: %[[E:.+]] = loom.exp %[[Z]] : tensor<4x8xf32>
// CHECK: %[[S:.+]] = loom.sum %[[E]] axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: %[[P:.+]] = loom.div %[[E]], %[[S]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: return %[[P]]
// CHECK-NOT: loom.softmax
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.softmax %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a 3-D linear flattens its input, multiplies by W^T, adds the
// bias and restores the leading dimensions.
// CHECK-LABEL: func.func @linear_3d
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: %[[X2:.+]] = loom.reshape %[[X]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK: %[[MM:.+]] = loom.matmul %[[X2]], %[[W]] transpose_b : (tensor<6x8xf32>, tensor<16x8xf32>) -> tensor<6x16xf32>
// CHECK: %[[Y:.+]] = loom.add %[[MM]], %[[B]] : (tensor<6x16xf32>, tensor<16xf32>) -> tensor<6x16xf32>
// CHECK: %[[Y3:.+]] = loom.reshape %[[Y]] : tensor<6x16xf32> -> tensor<2x3x16xf32>
// CHECK: return %[[Y3]]
func.func @linear_3d(%x: tensor<2x3x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x3x16xf32> {
  %0 = loom.linear %x, %w, %b : (tensor<2x3x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}

// -----

// Tests that a 2-D linear without bias is a single matmul, with no reshape
// or add.
// CHECK-LABEL: func.func @linear_no_bias
// CHECK-NOT: loom.reshape
// CHECK: %[[MM:.+]] = loom.matmul %{{.+}}, %{{.+}} transpose_b : (tensor<3x8xf32>, tensor<16x8xf32>) -> tensor<3x16xf32>
// CHECK-NOT: loom.add
// CHECK: return %[[MM]]
func.func @linear_no_bias(%x: tensor<3x8xf32>, %w: tensor<16x8xf32>) -> tensor<3x16xf32> {
  %0 = loom.linear %x, %w : (tensor<3x8xf32>, tensor<16x8xf32>) -> tensor<3x16xf32>
  return %0 : tensor<3x16xf32>
}

// -----

// Tests that layernorm becomes centring, biased variance, rsqrt(var + eps),
// scale and shift, with its own epsilon.
// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[G:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[EPS:.+]] = arith.constant dense<1.000000e-03> : tensor<f32>
// CHECK: %[[MEAN:.+]] = loom.mean %[[X]] axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: %[[XC:.+]] = loom.sub %[[X]], %[[MEAN]]
// CHECK: %[[SQ:.+]] = loom.mul %[[XC]], %[[XC]]
// CHECK: %[[VAR:.+]] = loom.mean %[[SQ]] axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: %[[VE:.+]] = loom.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK: %[[RSTD:.+]] = loom.rsqrt %[[VE]] : tensor<4x1xf32>
// CHECK: %[[XH:.+]] = loom.mul %[[XC]], %[[RSTD]]
// CHECK: %[[SC:.+]] = loom.mul %[[XH]], %[[G]]
// CHECK: %[[Y:.+]] = loom.add %[[SC]], %[[B]]
// CHECK: return %[[Y]]
func.func @layernorm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = loom.layernorm %x, %g, %b {epsilon = 1.0e-3} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that causal attention becomes Q K^T scaled by 1/sqrt(Dh), a -inf
// causal mask, a (decomposed) softmax and a matmul with V.
// CHECK-LABEL: func.func @attention_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8xf32>, %[[K:.+]]: tensor<2x4x8xf32>, %[[V:.+]]: tensor<2x4x8xf32>)
// CHECK: %[[SCALE:.+]] = arith.constant dense<0.353553385> : tensor<f32>
// CHECK: %[[S:.+]] = loom.matmul %[[Q]], %[[K]] transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
// CHECK: %[[SS:.+]] = loom.mul %[[S]], %[[SCALE]]
// CHECK: %[[M:.+]] = loom.causal_mask %[[SS]] fill 0xFFF0000000000000 : tensor<2x4x4xf32>
// CHECK: loom.reduce_max %[[M]] axes = [2] keepdim
// CHECK: loom.exp
// CHECK: %[[P:.+]] = loom.div
// CHECK: %[[Y:.+]] = loom.matmul %[[P]], %[[V]] : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: loom.softmax
func.func @attention_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = loom.attention %q, %k, %v causal : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Tests that attention with segments masks the scores with -inf across
// documents after the causal mask, before the softmax.
// CHECK-LABEL: func.func @attention_segments
// CHECK-SAME: %[[D:[^:]+]]: tensor<2x4xi32>
// CHECK: %[[C:.+]] = loom.causal_mask %{{.+}} fill 0xFFF0000000000000 : tensor<2x3x4x4xf32>
// CHECK: %[[M:.+]] = loom.segment_mask %[[C]], %[[D]] fill 0xFFF0000000000000 : tensor<2x3x4x4xf32>, tensor<2x4xi32>
// CHECK: loom.reduce_max %[[M]]
func.func @attention_segments(%q: tensor<2x3x4x8xf32>, %docs: tensor<2x4xi32>) -> tensor<2x3x4x8xf32> {
  %0 = loom.attention %q, %q, %q segments %docs causal : (tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x4xi32>) -> tensor<2x3x4x8xf32>
  return %0 : tensor<2x3x4x8xf32>
}

// -----

// Tests that non-causal attention has no mask and uses an explicit scale.
// CHECK-LABEL: func.func @attention_scaled
// CHECK: %[[SCALE:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[S:.+]] = loom.matmul %{{.+}}, %{{.+}} transpose_b
// CHECK: loom.mul %[[S]], %[[SCALE]]
// CHECK-NOT: loom.causal_mask
// CHECK: loom.reduce_max
// CHECK: return
func.func @attention_scaled(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.attention %q, %q, %q {scale = 0.5} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that document_attention becomes the dense masked attention by
// default (the scores [H, Nq, Nk] as one batch for loom.document_mask), and
// its gradient the dense backward; with keep-runtime-kernels both stay for
// the CPU runtime.
// CHECK-LABEL: func.func @document_attention
// CHECK-SAME: %[[QD:[^:]+]]: tensor<4xi32>, %[[KD:[^:]+]]: tensor<6xi32>
// CHECK: %[[S:.+]] = loom.matmul %{{.+}}, %{{.+}} transpose_b : (tensor<2x4x8xf32>, tensor<2x6x8xf32>) -> tensor<2x4x6xf32>
// CHECK: %[[SS:.+]] = loom.mul %[[S]]
// CHECK: %[[B:.+]] = loom.reshape %[[SS]] : tensor<2x4x6xf32> -> tensor<1x2x4x6xf32>
// CHECK: %[[Q1:.+]] = tensor.expand_shape %[[QD]] {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xi32> into tensor<1x4xi32>
// CHECK: tensor.expand_shape %[[QD]]
// CHECK: tensor.expand_shape %[[KD]]
// CHECK: tensor.expand_shape %[[KD]]
// CHECK: loom.document_mask %[[B]], %[[Q1]], %{{.+}}, %{{.+}}, %{{.+}} fill 0xFFF0000000000000 : tensor<1x2x4x6xf32>, tensor<1x4xi32>, tensor<1x6xi32>
// CHECK-NOT: loom.document_attention
// CHECK: return
// KEEP-LABEL: func.func @document_attention
// KEEP: loom.document_attention %
// KEEP: loom.document_attention_grad
// KEEP-NOT: loom.document_mask
// KEEP: return
func.func @document_attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %qd: tensor<4xi32>, %kd: tensor<6xi32>) -> (tensor<2x4x8xf32>, tensor<2x6x8xf32>) {
  %o = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<4xi32>, tensor<6xi32>
  %dq, %dk, %dv = loom.document_attention_grad %q, %k, %k, %o, %qd, %qd, %kd, %kd scale 0.5 : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<4xi32>, tensor<6xi32>
  return %dq, %dk : tensor<2x4x8xf32>, tensor<2x6x8xf32>
}

// -----

// Tests that the runtime kernel takes i32 documents only: with i64 ones the
// attention is decomposed even with keep-runtime-kernels.
// KEEP-LABEL: func.func @document_attention_i64
// KEEP-NOT: loom.document_attention
// KEEP: loom.document_mask
func.func @document_attention_i64(%q: tensor<2x4x8xf32>, %qd: tensor<4xi64>) -> tensor<2x4x8xf32> {
  %o = loom.document_attention %q, %q, %q, %qd, %qd, %qd, %qd scale 0.5 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4xi64>, tensor<4xi64>
  return %o : tensor<2x4x8xf32>
}

// -----

// Tests that cross_entropy becomes the mean of logsumexp(z) - z[target] with
// z = logits - rowmax, the target picked through one_hot.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[L:.+]]: tensor<2x3x10xf32>, %[[Y:.+]]: tensor<2x3xi32>)
// CHECK: %[[MAX:.+]] = loom.reduce_max %[[L]] axes = [2] keepdim : tensor<2x3x10xf32> -> tensor<2x3x1xf32>
// CHECK: %[[Z:.+]] = loom.sub %[[L]], %[[MAX]]
// CHECK: %[[E:.+]] = loom.exp %[[Z]]
// CHECK: %[[SE:.+]] = loom.sum %[[E]] axes = [2] keepdim
// CHECK: %[[LSE:.+]] = loom.log %[[SE]] : tensor<2x3x1xf32>
// CHECK: %[[HOT:.+]] = loom.one_hot %[[Y]] : tensor<2x3xi32> -> tensor<2x3x10xf32>
// CHECK: %[[ZH:.+]] = loom.mul %[[Z]], %[[HOT]]
// CHECK: %[[PICK:.+]] = loom.sum %[[ZH]] axes = [2] keepdim : tensor<2x3x10xf32> -> tensor<2x3x1xf32>
// CHECK: %[[D:.+]] = loom.sub %[[LSE]], %[[PICK]]
// CHECK: %[[LOSS:.+]] = loom.mean %[[D]] axes = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<f32>
// CHECK: return %[[LOSS]]
func.func @cross_entropy(%l: tensor<2x3x10xf32>, %y: tensor<2x3xi32>) -> tensor<f32> {
  %0 = loom.cross_entropy %l, %y : (tensor<2x3x10xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that primitive ops are left alone.
// CHECK-LABEL: func.func @dont_touch_primitives
// CHECK-NEXT: %[[E:.+]] = loom.exp %{{.+}} : tensor<4x8xf32>
// CHECK-NEXT: %[[M:.+]] = loom.matmul %[[E]], %{{.+}} transpose_b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[M]]
func.func @dont_touch_primitives(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = loom.exp %x : tensor<4x8xf32>
  %1 = loom.matmul %0, %x transpose_b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
