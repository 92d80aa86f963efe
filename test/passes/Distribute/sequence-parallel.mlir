// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-tensor-parallel --loom-sequence-parallel | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-tensor-parallel --loom-sequence-parallel --loom-autodiff 2>/dev/null | FileCheck %s --check-prefix=GRAD
// RUN: not loom-opt %s -split-input-file --loom-sequence-parallel 2>&1 | FileCheck %s --check-prefix=NOTP

// NOTP: error: --loom-sequence-parallel needs the tensor-parallel mesh @world with a "tp" axis (run --loom-tensor-parallel first)

// Tests that the layer norms and the residual add between the split MLP and
// the output head run on this rank's half of the 8 tokens ([4, 8] views):
// the residual stream is cut where it is made (comm.shard), the norms'
// parameters and the row-parallel bias are fanned out, the row-parallel
// all-reduce is a reduce-scatter, the column-parallel fan-out an all-gather,
// and the head, which every rank computes whole, reads the unshard of the
// final norm's parts.
// CHECK-LABEL: module @block
// CHECK: %[[X0:.+]] = loom.tanh
// CHECK-NEXT: %[[V:.+]] = loom.reshape %[[X0]] : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[P0:.+]] = comm.shard %[[V]] over @world ["tp"] dim = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[LW:.+]] = comm.fan_out %{{.+}} over @world ["tp"] : tensor<8xf32>
// CHECK: %[[LB:.+]] = comm.fan_out %{{.+}} over @world ["tp"] : tensor<8xf32>
// CHECK-NEXT: %[[N1:.+]] = loom.layernorm %[[P0]], %[[LW]], %[[LB]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[G:.+]] = comm.all_gather %[[N1]] over @world ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[H:.+]] = loom.reshape %[[G]] : tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK-NOT: comm.fan_out
// CHECK: loom.linear %[[H]]
// CHECK: %[[PART:.+]] = loom.linear
// CHECK-NEXT: %[[F:.+]] = loom.reshape %[[PART]] : tensor<2x4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[RS:.+]] = comm.reduce_scatter %[[F]] over @world ["tp"] sum dim = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[PB:.+]] = comm.fan_out %{{.+}} over @world ["tp"] : tensor<8xf32>
// CHECK-NEXT: %[[Y:.+]] = loom.add %[[RS]], %[[PB]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.+]] = loom.add %[[P0]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[NF:.+]] = loom.layernorm %[[R]], %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[U:.+]] = comm.unshard %[[NF]] over @world ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[W:.+]] = loom.reshape %[[U]] : tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK-NOT: comm.all_reduce
// CHECK: loom.linear %[[W]]

// The backward pass: the head's gradient is cut to this rank's part, the
// column-parallel input's gradients reduce-scattered, the row-parallel
// output's gathered, the residual stream's gathered where it was cut, and
// the norms' and the bias's gradients summed over the ranks.
// GRAD-LABEL: func.func @loss_and_grad
// GRAD: comm.shard %{{.+}} over @world ["tp"] dim = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// GRAD: comm.all_gather %{{.+}} over @world ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// GRAD: comm.reduce_scatter %{{.+}} over @world ["tp"] sum dim = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
// GRAD: comm.all_reduce %{{.+}} over @world ["tp"] sum : tensor<8xf32>
// GRAD: comm.all_gather %{{.+}} over @world ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
module @block attributes {loom.task = {batch = 2 : i64, kind = "none"}} {
  loom.param @ln.w : tensor<8xf32> init ones
  loom.param @ln.b : tensor<8xf32> init zeros
  loom.param @fc.w : tensor<16x8xf32> init normal scale 1.0
  loom.param @fc.b : tensor<16xf32> init zeros
  loom.param @proj.w : tensor<8x16xf32> init normal scale 1.0
  loom.param @proj.b : tensor<8xf32> init zeros
  loom.param @lnf.w : tensor<8xf32> init ones
  loom.param @lnf.b : tensor<8xf32> init zeros
  loom.param @head.w : tensor<4x8xf32> init normal scale 1.0
  func.func @loss(%x: tensor<2x4x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %x0 = loom.tanh %x : tensor<2x4x8xf32>
    %lw = loom.get_param @ln.w : tensor<8xf32>
    %lb = loom.get_param @ln.b : tensor<8xf32>
    %h = loom.layernorm %x0, %lw, %lb : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %fw = loom.get_param @fc.w : tensor<16x8xf32>
    %fb = loom.get_param @fc.b : tensor<16xf32>
    %a = loom.linear %h, %fw, %fb : (tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    %g = loom.gelu %a : tensor<2x4x16xf32>
    %pw = loom.get_param @proj.w : tensor<8x16xf32>
    %pb = loom.get_param @proj.b : tensor<8xf32>
    %p = loom.linear %g, %pw, %pb : (tensor<2x4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %r = loom.add %x0, %p : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %nw = loom.get_param @lnf.w : tensor<8xf32>
    %nb = loom.get_param @lnf.b : tensor<8xf32>
    %n = loom.layernorm %r, %nw, %nb : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %hw = loom.get_param @head.w : tensor<4x8xf32>
    %o = loom.linear %n, %hw : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x4xf32>
    %l = loom.mean %o axes = [0, 1, 2] : tensor<2x4x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the step's tokens must divide among the ranks: 3 cannot.
module @odd attributes {loom.task = {batch = 1 : i64, kind = "none"}} {
  loom.param @fc.w : tensor<16x8xf32> init normal scale 1.0
  loom.param @proj.w : tensor<8x16xf32> init normal scale 1.0
  // expected-error@+1 {{sequence parallelism: the step's 3 tokens cannot be shared equally by 2 tensor-parallel ranks}}
  func.func @loss(%x: tensor<1x3x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %fw = loom.get_param @fc.w : tensor<16x8xf32>
    %a = loom.linear %x, %fw : (tensor<1x3x8xf32>, tensor<16x8xf32>) -> tensor<1x3x16xf32>
    %g = loom.gelu %a : tensor<1x3x16xf32>
    %pw = loom.get_param @proj.w : tensor<8x16xf32>
    %p = loom.linear %g, %pw : (tensor<1x3x16xf32>, tensor<8x16xf32>) -> tensor<1x3x8xf32>
    %l = loom.mean %p axes = [0, 1, 2] : tensor<1x3x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
