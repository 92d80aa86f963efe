// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-tensor-parallel | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-tensor-parallel="ranks=2 dp=3" 2>/dev/null | FileCheck %s --check-prefix=MESH
// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-tensor-parallel --loom-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD
// RUN: not loom-opt %s -split-input-file --loom-tensor-parallel=ranks=4 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not loom-opt %s -split-input-file --loom-tensor-parallel=ranks=1 2>&1 | FileCheck %s --check-prefix=ONE

// ONE: error: --loom-tensor-parallel: ranks must be at least 2 and dp positive, got ranks=1 dp=1
// HEADS: error: --tp=4: this attention has 2 heads, which 4 ranks cannot share equally; use a --tp that divides 2

// Tests that an attention block is split by heads: each rank stores its
// part of the weights (its rows of each of the q, k and v blocks of the
// first weight and bias, its columns of the second weight); the first
// linear reads its input fanned out; the heads, the attention and the
// merge are retyped to H/T heads; the second linear has no bias, the
// partial products are summed over the tp ranks and the bias (whole on
// every rank) is added to the sum. Weights read elsewhere, the norm's, stay
// whole.
// CHECK-LABEL: module @attention
// CHECK: comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]
// CHECK: loom.param @ln.weight : tensor<8xf32> init ones
// CHECK-NOT: tensor_split
// CHECK: loom.param @attn.w : tensor<12x8xf32> init normal scale 1.000000e+00 {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 3, ranks = 2, mesh = @world, axis = "tp">}
// CHECK: loom.param @attn.b : tensor<12xf32> init zeros {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 3, ranks = 2, mesh = @world, axis = "tp">}
// CHECK: loom.param @proj.w : tensor<8x4xf32> init normal scale 1.000000e+00 {loom.tensor_split = #loom.tensor_split<dim = 1, blocks = 1, ranks = 2, mesh = @world, axis = "tp">}
// CHECK: loom.param @proj.b : tensor<8xf32> init zeros
// CHECK-NOT: tensor_split
// CHECK: %[[W:.+]] = loom.get_param @attn.w : tensor<12x8xf32>
// CHECK: %[[B:.+]] = loom.get_param @attn.b : tensor<12xf32>
// CHECK: %[[X:.+]] = comm.fan_out %{{.+}} over @world ["tp"] : tensor<2x4x8xf32>
// CHECK: %[[QKV:.+]] = loom.linear %[[X]], %[[W]], %[[B]] : (tensor<2x4x8xf32>, tensor<12x8xf32>, tensor<12xf32>) -> tensor<2x4x12xf32>
// CHECK: loom.split %[[QKV]] axis = 2 : tensor<2x4x12xf32> -> tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
// CHECK: loom.reshape %{{.+}} : tensor<2x4x4xf32> -> tensor<2x4x1x4xf32>
// CHECK: %[[A:.+]] = loom.attention %{{.+}}, %{{.+}}, %{{.+}} causal : (tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x1x4x4xf32>
// CHECK: %[[T:.+]] = loom.transpose %[[A]] perm = [0, 2, 1, 3] : tensor<2x1x4x4xf32> -> tensor<2x4x1x4xf32>
// CHECK: %[[M:.+]] = loom.reshape %[[T]] : tensor<2x4x1x4xf32> -> tensor<2x4x4xf32>
// CHECK: %[[PW:.+]] = loom.get_param @proj.w : tensor<8x4xf32>
// CHECK: %[[P:.+]] = loom.linear %[[M]], %[[PW]] : (tensor<2x4x4xf32>, tensor<8x4xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[S:.+]] = comm.all_reduce %[[P]] over @world ["tp"] sum : tensor<2x4x8xf32>
// CHECK: %[[O:.+]] = loom.add %[[S]], %{{.+}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK: loom.sum %[[O]]
// The mesh's dp axis is the option's.
// MESH-LABEL: module @attention
// MESH: comm.mesh @world shape = [3, 2] axes = ["dp", "tp"]
// Autodiff: the fan-out's gradient is summed over the tp ranks, the
// forward all-reduce's gradient passes through unchanged, and the split
// weights' gradients are their parts' (nothing gathered).
// GRAD-LABEL: module @attention
// GRAD-LABEL: func.func @loss_and_grad(
// GRAD-NOT: comm.all_gather
// GRAD: comm.fan_out
// GRAD: comm.all_reduce %{{.+}} over @world ["tp"] sum : tensor<2x4x8xf32>
// GRAD-NOT: comm.
// GRAD: comm.all_reduce %{{.+}} over @world ["tp"] sum : tensor<2x4x8xf32>
// GRAD-NOT: comm.
// GRAD: return %{{.+}} : tensor<f32>, tensor<8xf32>, tensor<8xf32>, tensor<12x8xf32>, tensor<12xf32>, tensor<8x4xf32>, tensor<8xf32>
module @attention {
  loom.param @ln.weight : tensor<8xf32> init ones
  loom.param @ln.bias : tensor<8xf32> init zeros
  loom.param @attn.w : tensor<24x8xf32> init normal scale 1.0
  loom.param @attn.b : tensor<24xf32> init zeros
  loom.param @proj.w : tensor<8x8xf32> init normal scale 1.0
  loom.param @proj.b : tensor<8xf32> init zeros
  func.func @loss(%x: tensor<2x4x8xf32>) -> tensor<f32> {
    %g = loom.get_param @ln.weight : tensor<8xf32>
    %h = loom.get_param @ln.bias : tensor<8xf32>
    %n = loom.layernorm %x, %g, %h : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %w = loom.get_param @attn.w : tensor<24x8xf32>
    %b = loom.get_param @attn.b : tensor<24xf32>
    %qkv = loom.linear %n, %w, %b : (tensor<2x4x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
    %s:3 = loom.split %qkv axis = 2 : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
    %v0 = loom.reshape %s#2 : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
    %v = loom.transpose %v0 perm = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %k0 = loom.reshape %s#1 : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
    %k = loom.transpose %k0 perm = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %q0 = loom.reshape %s#0 : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
    %q = loom.transpose %q0 perm = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
    %a = loom.attention %q, %k, %v causal : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
    %t = loom.transpose %a perm = [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
    %m = loom.reshape %t : tensor<2x4x2x4xf32> -> tensor<2x4x8xf32>
    %pw = loom.get_param @proj.w : tensor<8x8xf32>
    %pb = loom.get_param @proj.b : tensor<8xf32>
    %o = loom.linear %m, %pw, %pb : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %l = loom.sum %o axes = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that in linear → relu → linear → relu → linear the first two form
// an MLP block split by hidden units (the first linear's rows, the
// second's columns, a bias-free second linear before the sum) and the last
// linear stays whole; a linear without bias keeps none.
// CHECK-LABEL: module @mlp
// CHECK: loom.param @w0 : tensor<8x8xf32> {{.*}}#loom.tensor_split<dim = 0, blocks = 1, ranks = 2
// CHECK: loom.param @w1 : tensor<8x8xf32> {{.*}}#loom.tensor_split<dim = 1, blocks = 1, ranks = 2
// CHECK: loom.param @b1 : tensor<8xf32> init zeros
// CHECK-NOT: tensor_split
// CHECK: %[[X:.+]] = comm.fan_out %{{.+}} over @world ["tp"] : tensor<4x8xf32>
// CHECK: %[[H:.+]] = loom.linear %[[X]], %{{.+}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[R:.+]] = loom.relu %[[H]] : tensor<4x8xf32>
// CHECK: %[[P:.+]] = loom.linear %[[R]], %{{.+}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[S:.+]] = comm.all_reduce %[[P]] over @world ["tp"] sum : tensor<4x8xf32>
// CHECK: %[[O:.+]] = loom.add %[[S]], %{{.+}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[R2:.+]] = loom.relu %[[O]] : tensor<4x8xf32>
// CHECK-NOT: comm.
// CHECK: loom.linear %[[R2]], %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
module @mlp {
  loom.param @w0 : tensor<16x8xf32> init normal scale 1.0
  loom.param @w1 : tensor<8x16xf32> init normal scale 1.0
  loom.param @b1 : tensor<8xf32> init zeros
  loom.param @w2 : tensor<3x8xf32> init normal scale 1.0
  loom.param @b2 : tensor<3xf32> init zeros
  func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
    %w0 = loom.get_param @w0 : tensor<16x8xf32>
    %h0 = loom.linear %x, %w0 : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %a0 = loom.relu %h0 : tensor<4x16xf32>
    %w1 = loom.get_param @w1 : tensor<8x16xf32>
    %b1 = loom.get_param @b1 : tensor<8xf32>
    %h1 = loom.linear %a0, %w1, %b1 : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %a1 = loom.relu %h1 : tensor<4x8xf32>
    %w2 = loom.get_param @w2 : tensor<3x8xf32>
    %b2 = loom.get_param @b2 : tensor<3xf32>
    %h2 = loom.linear %a1, %w2, %b2 : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %l = loom.sum %h2 axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a weight read twice (tied) is not split, and that a model with
// nothing else to split is an error.
// expected-error@+1 {{--loom-tensor-parallel found no attention or MLP block to split}}
module @tied {
  loom.param @w : tensor<8x8xf32> init normal scale 1.0
  func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
    %w = loom.get_param @w : tensor<8x8xf32>
    %h = loom.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %a = loom.gelu %h : tensor<4x8xf32>
    %o = loom.linear %a, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %l = loom.sum %o axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that hidden units the ranks cannot share equally are an error at
// the block.
module @uneven {
  loom.param @w0 : tensor<5x8xf32> init normal scale 1.0
  loom.param @w1 : tensor<8x5xf32> init normal scale 1.0
  func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
    %w0 = loom.get_param @w0 : tensor<5x8xf32>
    // expected-error@+1 {{--tp=2: this MLP has 5 hidden units, which 2 ranks cannot share equally; use a --tp that divides 5}}
    %h0 = loom.linear %x, %w0 : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x5xf32>
    %a0 = loom.tanh %h0 : tensor<4x5xf32>
    %w1 = loom.get_param @w1 : tensor<8x5xf32>
    %h1 = loom.linear %a0, %w1 : (tensor<4x5xf32>, tensor<8x5xf32>) -> tensor<4x8xf32>
    %l = loom.sum %h1 axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the pass refuses a module that already declares its mesh.
// expected-error@+1 {{--loom-tensor-parallel declares the mesh @world, which the module already has: run it first}}
module @meshed {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @loss(%x: tensor<4x8xf32>) -> tensor<f32> {
    %l = loom.sum %x axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

