// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s

// Tests that every loom op prints in its custom form and parses back.

// Tests that parameters keep their init kind, scale and no_weight_decay.
// CHECK: loom.param @fc1.weight : tensor<64x32xf32> init normal scale 2.000000e-02{{$}}
// CHECK: loom.param @fc1.bias : tensor<64xf32> init zeros {no_weight_decay}
// CHECK: loom.param @table : tensor<16x8xf64> init uniform scale 5.000000e-01{{$}}
// CHECK: loom.param @gain : tensor<8xf32> init ones{{$}}
loom.param @"fc1.weight" : tensor<64x32xf32> init normal scale 2.000000e-02
loom.param @"fc1.bias" : tensor<64xf32> init zeros {no_weight_decay}
loom.param @table : tensor<16x8xf64> init uniform scale 0.5
loom.param @gain : tensor<8xf32> init ones

// Tests that get_param prints its symbol and result type.
// CHECK-LABEL: func.func @get_param
// CHECK: %[[W:.+]] = loom.get_param @fc1.weight : tensor<64x32xf32>
// CHECK: return %[[W]]
func.func @get_param() -> tensor<64x32xf32> {
  %w = loom.get_param @"fc1.weight" : tensor<64x32xf32>
  return %w : tensor<64x32xf32>
}

// Tests that the broadcasting binary ops round-trip.
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>, %[[C:.+]]: tensor<4x1xf32>)
// CHECK: %[[ADD:.+]] = loom.add %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[SUB:.+]] = loom.sub %[[ADD]], %[[C]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: %[[MUL:.+]] = loom.mul %[[B]], %[[C]] : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: %[[DIV:.+]] = loom.div %[[SUB]], %[[MUL]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[MAX:.+]] = loom.maximum %[[DIV]], %[[A]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[MIN:.+]] = loom.minimum %[[MAX]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: return %[[MIN]]
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %0 = loom.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = loom.sub %0, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = loom.mul %b, %c : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = loom.div %1, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = loom.maximum %3, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = loom.minimum %4, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}

// Tests that a binary op on f64 scalars round-trips.
// CHECK-LABEL: func.func @binary_f64_scalar
// CHECK: loom.add %{{.+}}, %{{.+}} : (tensor<f64>, tensor<3xf64>) -> tensor<3xf64>
func.func @binary_f64_scalar(%a: tensor<f64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %0 = loom.add %a, %b : (tensor<f64>, tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// Tests that the unary elementwise ops round-trip.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[NEG:.+]] = loom.neg %[[X]] : tensor<4x8xf32>
// CHECK: %[[EXP:.+]] = loom.exp %[[NEG]] : tensor<4x8xf32>
// CHECK: %[[LOG:.+]] = loom.log %[[EXP]] : tensor<4x8xf32>
// CHECK: %[[TANH:.+]] = loom.tanh %[[LOG]] : tensor<4x8xf32>
// CHECK: %[[SQRT:.+]] = loom.sqrt %[[TANH]] : tensor<4x8xf32>
// CHECK: %[[RSQRT:.+]] = loom.rsqrt %[[SQRT]] : tensor<4x8xf32>
// CHECK: %[[RELU:.+]] = loom.relu %[[RSQRT]] : tensor<4x8xf32>
// CHECK: %[[GELU:.+]] = loom.gelu %[[RELU]] : tensor<4x8xf32>
// CHECK: %[[STEP:.+]] = loom.heaviside %[[GELU]] : tensor<4x8xf32>
// CHECK: return %[[STEP]]
func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.neg %x : tensor<4x8xf32>
  %1 = loom.exp %0 : tensor<4x8xf32>
  %2 = loom.log %1 : tensor<4x8xf32>
  %3 = loom.tanh %2 : tensor<4x8xf32>
  %4 = loom.sqrt %3 : tensor<4x8xf32>
  %5 = loom.rsqrt %4 : tensor<4x8xf32>
  %6 = loom.relu %5 : tensor<4x8xf32>
  %7 = loom.gelu %6 : tensor<4x8xf32>
  %8 = loom.heaviside %7 : tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// Tests that causal_mask keeps its fill value, including -inf.
// CHECK-LABEL: func.func @causal_mask
// CHECK: %[[M:.+]] = loom.causal_mask %{{.+}} fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>
// CHECK: loom.causal_mask %[[M]] fill 0.000000e+00 : tensor<2x4x16x16xf32>
func.func @causal_mask(%s: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = loom.causal_mask %s fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>
  %1 = loom.causal_mask %0 fill 0.0 : tensor<2x4x16x16xf32>
  return %1 : tensor<2x4x16x16xf32>
}

// Tests that document_mask keeps its fill value and its query and key types.
// CHECK-LABEL: func.func @document_mask
// CHECK: loom.document_mask %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} fill 0xFFF0000000000000 : tensor<1x4x16x32xf32>, tensor<1x16xi32>, tensor<1x32xi32>
func.func @document_mask(%s: tensor<1x4x16x32xf32>, %qd: tensor<1x16xi32>, %qp: tensor<1x16xi32>, %kd: tensor<1x32xi32>, %kp: tensor<1x32xi32>) -> tensor<1x4x16x32xf32> {
  %0 = loom.document_mask %s, %qd, %qp, %kd, %kp fill 0xFFF0000000000000 : tensor<1x4x16x32xf32>, tensor<1x16xi32>, tensor<1x32xi32>
  return %0 : tensor<1x4x16x32xf32>
}

// Tests that document_attention and its gradient keep their scale and
// types.
// CHECK-LABEL: func.func @document_attention
// CHECK: %[[O:.+]] = loom.document_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale 5.000000e-01 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
// CHECK: loom.document_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %[[O]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale 5.000000e-01 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
func.func @document_attention(%q: tensor<4x16x8xf32>, %k: tensor<4x32x8xf32>, %qd: tensor<16xi32>, %kd: tensor<32xi32>) -> tensor<4x32x8xf32> {
  %o = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
  %dq, %dk, %dv = loom.document_attention_grad %q, %k, %k, %o, %qd, %qd, %kd, %kd scale 0.5 : tensor<4x16x8xf32>, tensor<4x32x8xf32>, tensor<16xi32>, tensor<32xi32>
  return %dk : tensor<4x32x8xf32>
}

// Tests that segment_mask keeps its fill value and segment type.
// CHECK-LABEL: func.func @segment_mask
// CHECK: %[[M:.+]] = loom.segment_mask %{{.+}}, %{{.+}} fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>, tensor<2x16xi32>
// CHECK: loom.segment_mask %[[M]], %{{.+}} fill 0.000000e+00 : tensor<2x4x16x16xf32>, tensor<2x16xi64>
func.func @segment_mask(%s: tensor<2x4x16x16xf32>, %d: tensor<2x16xi32>, %e: tensor<2x16xi64>) -> tensor<2x4x16x16xf32> {
  %0 = loom.segment_mask %s, %d fill 0xFFF0000000000000 : tensor<2x4x16x16xf32>, tensor<2x16xi32>
  %1 = loom.segment_mask %0, %e fill 0.0 : tensor<2x4x16x16xf32>, tensor<2x16xi64>
  return %1 : tensor<2x4x16x16xf32>
}

// Tests that matmul round-trips plain, with each transpose, batched and with
// a shared rank-2 rhs.
// CHECK-LABEL: func.func @matmul
// CHECK: loom.matmul %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: loom.matmul %{{.+}}, %{{.+}} transpose_a : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK: loom.matmul %{{.+}}, %{{.+}} transpose_b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK: loom.matmul %{{.+}}, %{{.+}} transpose_a transpose_b : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK: loom.matmul %{{.+}}, %{{.+}} transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
// CHECK: loom.matmul %{{.+}}, %{{.+}} : (tensor<2x3x4x8xf32>, tensor<8x16xf32>) -> tensor<2x3x4x16xf32>
func.func @matmul(%a: tensor<4x8xf32>, %at: tensor<8x4xf32>, %b: tensor<8x16xf32>,
                  %bt: tensor<16x8xf32>, %q: tensor<2x4x16x8xf32>,
                  %x: tensor<2x3x4x8xf32>) {
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = loom.matmul %at, %b transpose_a : (tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = loom.matmul %a, %bt transpose_b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %3 = loom.matmul %at, %bt transpose_a transpose_b : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %4 = loom.matmul %q, %q transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  %5 = loom.matmul %x, %b : (tensor<2x3x4x8xf32>, tensor<8x16xf32>) -> tensor<2x3x4x16xf32>
  return
}

// Tests that linear round-trips with and without bias and on a 3-D input.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<8x32xf32>, %[[X3:.+]]: tensor<2x8x32xf32>, %[[W:.+]]: tensor<64x32xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK: loom.linear %[[X]], %[[W]], %[[B]] : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
// CHECK: loom.linear %[[X]], %[[W]] : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
// CHECK: loom.linear %[[X3]], %[[W]], %[[B]] : (tensor<2x8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
func.func @linear(%x: tensor<8x32xf32>, %x3: tensor<2x8x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) {
  %0 = loom.linear %x, %w, %b : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %1 = loom.linear %x, %w : (tensor<8x32xf32>, tensor<64x32xf32>) -> tensor<8x64xf32>
  %2 = loom.linear %x3, %w, %b : (tensor<2x8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return
}

// Tests that layernorm round-trips; the default epsilon is elided and an
// explicit one is kept.
// CHECK-LABEL: func.func @layernorm
// CHECK: loom.layernorm %{{.+}}, %{{.+}}, %{{.+}} : (tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
// CHECK: loom.layernorm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 1.000000e-03 : f64} : (tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
func.func @layernorm(%x: tensor<4x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) {
  %0 = loom.layernorm %x, %g, %b : (tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
  %1 = loom.layernorm %x, %g, %b {epsilon = 1.0e-3} : (tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
  return
}

// Tests that softmax round-trips.
// CHECK-LABEL: func.func @softmax
// CHECK: loom.softmax %{{.+}} : tensor<2x4x16x16xf32>
func.func @softmax(%s: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = loom.softmax %s : tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// Tests that attention round-trips causal, non-causal, with an explicit
// scale and with fewer queries than keys.
// CHECK-LABEL: func.func @attention
// CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}} causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}} causal {scale = 1.250000e-01 : f64} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}} : (tensor<3x8xf32>, tensor<5x8xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
// CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}} segments %{{.+}} causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x16xi32>) -> tensor<2x4x16x8xf32>
func.func @attention(%q: tensor<2x4x16x8xf32>, %q2: tensor<3x8xf32>, %k2: tensor<5x8xf32>, %v2: tensor<5x2xf32>, %docs: tensor<2x16xi32>) {
  %0 = loom.attention %q, %q, %q causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %1 = loom.attention %q, %q, %q : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %2 = loom.attention %q, %q, %q causal {scale = 0.125} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %3 = loom.attention %q2, %k2, %v2 : (tensor<3x8xf32>, tensor<5x8xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  %4 = loom.attention %q, %q, %q segments %docs causal : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x16xi32>) -> tensor<2x4x16x8xf32>
  return
}

// Tests that embedding round-trips with i32 and i64 indices.
// CHECK-LABEL: func.func @embedding
// CHECK: loom.embedding %{{.+}}, %{{.+}} : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
// CHECK: loom.embedding %{{.+}}, %{{.+}} : (tensor<256x64xf32>, tensor<7xi64>) -> tensor<7x64xf32>
func.func @embedding(%wte: tensor<256x64xf32>, %tok: tensor<4x16xi32>, %tok64: tensor<7xi64>) {
  %0 = loom.embedding %wte, %tok : (tensor<256x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
  %1 = loom.embedding %wte, %tok64 : (tensor<256x64xf32>, tensor<7xi64>) -> tensor<7x64xf32>
  return
}

// Tests that cross_entropy round-trips.
// CHECK-LABEL: func.func @cross_entropy
// CHECK: loom.cross_entropy %{{.+}}, %{{.+}} : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
func.func @cross_entropy(%logits: tensor<4x16x256xf32>, %y: tensor<4x16xi32>) -> tensor<f32> {
  %0 = loom.cross_entropy %logits, %y : (tensor<4x16x256xf32>, tensor<4x16xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Tests that one_hot round-trips.
// CHECK-LABEL: func.func @one_hot
// CHECK: loom.one_hot %{{.+}} : tensor<8xi32> -> tensor<8x10xf32>
func.func @one_hot(%y: tensor<8xi32>) -> tensor<8x10xf32> {
  %0 = loom.one_hot %y : tensor<8xi32> -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// Tests that the shape ops round-trip.
// CHECK-LABEL: func.func @shapes
// CHECK: loom.reshape %{{.+}} : tensor<4x16x64xf32> -> tensor<64x64xf32>
// CHECK: loom.transpose %{{.+}} perm = [0, 2, 1, 3] : tensor<4x16x4x8xf32> -> tensor<4x4x16x8xf32>
// CHECK: loom.broadcast_to %{{.+}} : tensor<1x64xf32> -> tensor<8x64xf32>
func.func @shapes(%x: tensor<4x16x64xf32>, %y: tensor<4x16x4x8xf32>, %z: tensor<1x64xf32>) {
  %0 = loom.reshape %x : tensor<4x16x64xf32> -> tensor<64x64xf32>
  %1 = loom.transpose %y perm = [0, 2, 1, 3] : tensor<4x16x4x8xf32> -> tensor<4x4x16x8xf32>
  %2 = loom.broadcast_to %z : tensor<1x64xf32> -> tensor<8x64xf32>
  return
}

// Tests that split and concat round-trip with several pieces.
// CHECK-LABEL: func.func @split_concat
// CHECK: %[[P:.+]]:3 = loom.split %{{.+}} axis = 2 : tensor<4x16x192xf32> -> tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
// CHECK: loom.concat %[[P]]#0, %[[P]]#2 axis = 2 : (tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<4x16x128xf32>
// CHECK: loom.split %{{.+}} axis = 1 : tensor<4x32xf32> -> tensor<4x8xf32>, tensor<4x24xf32>
// CHECK: loom.concat %{{.+}} axis = 0 : (tensor<4x32xf32>) -> tensor<4x32xf32>
func.func @split_concat(%qkv: tensor<4x16x192xf32>, %x: tensor<4x32xf32>) {
  %q, %k, %v = loom.split %qkv axis = 2 : tensor<4x16x192xf32> -> tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
  %0 = loom.concat %q, %v axis = 2 : (tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<4x16x128xf32>
  %a, %b = loom.split %x axis = 1 : tensor<4x32xf32> -> tensor<4x8xf32>, tensor<4x24xf32>
  %1 = loom.concat %x axis = 0 : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return
}

// Tests that the reductions round-trip with and without keepdim.
// CHECK-LABEL: func.func @reductions
// CHECK: loom.sum %{{.+}} axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: loom.sum %{{.+}} axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
// CHECK: loom.mean %{{.+}} axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: loom.mean %{{.+}} axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: loom.reduce_max %{{.+}} axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: loom.reduce_max %{{.+}} axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
func.func @reductions(%x: tensor<4x8xf32>) {
  %0 = loom.sum %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %1 = loom.sum %x axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %2 = loom.mean %x axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %3 = loom.mean %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %4 = loom.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %5 = loom.reduce_max %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// Tests that lr_schedule keeps its attributes; defaults are elided.
// CHECK-LABEL: func.func @lr_schedule
// CHECK: loom.lr_schedule %{{.+}} {decay_steps = 1000 : i64, lr = 1.000000e-03 : f64, min_lr = 1.000000e-04 : f64, warmup_steps = 100 : i64} : tensor<i64> -> tensor<f32>
// CHECK: loom.lr_schedule %{{.+}} {lr = 1.000000e-03 : f64} : tensor<i64> -> tensor<f64>
func.func @lr_schedule(%step: tensor<i64>) {
  %0 = loom.lr_schedule %step {lr = 1.0e-03, warmup_steps = 100 : i64, decay_steps = 1000 : i64, min_lr = 1.0e-04} : tensor<i64> -> tensor<f32>
  %1 = loom.lr_schedule %step {lr = 1.0e-03} : tensor<i64> -> tensor<f64>
  return
}

// Tests that perturb keeps its counter attributes; defaults (0) are elided.
// CHECK-LABEL: func.func @perturb
// CHECK: loom.perturb %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {seed = 7 : i64, stream = 3 : i64} : tensor<64x32xf32>, tensor<i64>, tensor<f32>
// CHECK: loom.perturb %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xf64>, tensor<i64>, tensor<f64>
// CHECK: loom.perturb %{{.+}}, %[[STEP:[^,]+]], %{{.+}}, %{{.+}} offset %[[STEP]] : tensor<i64> {direction = 2 : i64} : tensor<3xf64>, tensor<i64>, tensor<f64>
func.func @perturb(%w: tensor<64x32xf32>, %v: tensor<3xf64>, %step: tensor<i64>, %a: tensor<f32>, %b: tensor<f64>) {
  %0 = loom.perturb %w, %step, %a, %a {seed = 7 : i64, stream = 3 : i64, direction = 0 : i64} : tensor<64x32xf32>, tensor<i64>, tensor<f32>
  %1 = loom.perturb %v, %step, %b, %b : tensor<3xf64>, tensor<i64>, tensor<f64>
  %2 = loom.perturb %v, %step, %b, %b offset %step : tensor<i64> {direction = 2 : i64} : tensor<3xf64>, tensor<i64>, tensor<f64>
  return
}

// Tests that the optimizer updates round-trip.
// CHECK-LABEL: func.func @optimizers
// CHECK-SAME: (%[[G:.+]]: tensor<64x32xf32>, %[[LR:.+]]: tensor<f32>, %[[STEP:.+]]: tensor<i64>)
// CHECK: loom.adamw @fc1.weight, %[[G]], %[[LR]], %[[STEP]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : tensor<64x32xf32>, tensor<f32>, tensor<i64>
// CHECK: loom.sgd @fc1.weight, %[[G]], %[[LR]], %[[STEP]] {momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64} : tensor<64x32xf32>, tensor<f32>, tensor<i64>{{$}}
// CHECK: %[[A:.+]] = loom.adamw @fc1.weight slice %[[X:.+]], %[[X]], %[[LR]], %[[STEP]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : tensor<1024xf32>, tensor<f32>, tensor<i64> -> tensor<1024xf32>
// CHECK: %[[S:.+]] = loom.sgd @fc1.weight slice %[[A]], %[[X]], %[[LR]], %[[STEP]] {momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64} : tensor<1024xf32>, tensor<f32>, tensor<i64> -> tensor<1024xf32>
// CHECK: loom.set_param @fc1.weight, %[[G]] : tensor<64x32xf32>
func.func @optimizers(%g: tensor<64x32xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  loom.adamw @"fc1.weight", %g, %lr, %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<64x32xf32>, tensor<f32>, tensor<i64>
  loom.sgd @"fc1.weight", %g, %lr, %step {momentum = 0.9, weight_decay = 0.0} : tensor<64x32xf32>, tensor<f32>, tensor<i64>
  %x = loom.reshape %g : tensor<64x32xf32> -> tensor<2048xf32>
  %x0, %x1 = loom.split %x axis = 0 : tensor<2048xf32> -> tensor<1024xf32>, tensor<1024xf32>
  %a = loom.adamw @"fc1.weight" slice %x0, %x0, %lr, %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<1024xf32>, tensor<f32>, tensor<i64> -> tensor<1024xf32>
  %s = loom.sgd @"fc1.weight" slice %a, %x0, %lr, %step {momentum = 0.9, weight_decay = 0.0} : tensor<1024xf32>, tensor<f32>, tensor<i64> -> tensor<1024xf32>
  loom.set_param @"fc1.weight", %g : tensor<64x32xf32>
  return
}

// Tests that the CO2 outer step round-trips.
// CHECK-LABEL: func.func @co2_outer
// CHECK: loom.co2_outer @fc1.weight, %{{.+}}, %{{.+}} {clip = 1.000000e+00 : f64, gap_penalty = 5.000000e-01 : f64, outer_lr = 1.000000e+00 : f64, outer_momentum = 2.000000e-01 : f64} : tensor<64x32xf32>, tensor<i64>
func.func @co2_outer(%mean: tensor<64x32xf32>, %round: tensor<i64>) {
  loom.co2_outer @"fc1.weight", %mean, %round {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 0.5, clip = 1.0} : tensor<64x32xf32>, tensor<i64>
  return
}

// Tests that the sharded CO2 outer step round-trips.
// CHECK-LABEL: func.func @co2_outer_shard
// CHECK: %{{.+}} = loom.co2_outer_shard "co2.shard", %{{.+}}, %{{.+}} {clip = 1.000000e+00 : f64, gap_penalty = 5.000000e-01 : f64, outer_lr = 1.000000e+00 : f64, outer_momentum = 2.000000e-01 : f64} : tensor<1024xf32>, tensor<i64>
func.func @co2_outer_shard(%mean: tensor<1024xf32>, %round: tensor<i64>) -> tensor<1024xf32> {
  %a = loom.co2_outer_shard "co2.shard", %mean, %round {outer_lr = 1.0, outer_momentum = 0.2, gap_penalty = 0.5, clip = 1.0} : tensor<1024xf32>, tensor<i64>
  return %a : tensor<1024xf32>
}

// Tests that a state's read and write round-trip.
// CHECK-LABEL: func.func @state
// CHECK: %[[OLD:.+]] = loom.get_state "zo.pending" : tensor<2xf32>
// CHECK: loom.set_state "zo.pending", %{{.+}} : tensor<2xf32>
// CHECK: return %[[OLD]]
func.func @state(%new: tensor<2xf32>) -> tensor<2xf32> {
  %old = loom.get_state "zo.pending" : tensor<2xf32>
  %n = loom.set_state "zo.pending", %new : tensor<2xf32>
  return %old : tensor<2xf32>
}
