// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-pipeline-split="stages=2 micro-batches=3" | FileCheck %s
// RUN: not loom-opt %s -split-input-file --loom-pipeline-split="stages=3 dp=2" 2>/dev/null | FileCheck %s --check-prefix=THREE
// RUN: not loom-opt %s -split-input-file --loom-pipeline-split="stages=3 dp=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=THRICE
// RUN: not loom-opt %s -split-input-file --loom-pipeline-split=stages=7 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not loom-opt %s -split-input-file --loom-pipeline-split=stages=1 2>&1 | FileCheck %s --check-prefix=ONE

// ONE: error: --loom-pipeline-split needs stages >= 2, micro-batches >= 1 and dp >= 1
// MANY: error: cannot cut this model into 7 pipeline stages: it has 5 places where a single activation flows from one part to the next

// Tests that the model is cut where a single value crosses (after the
// first tanh, the residual add, the second linear and tanh, the fourth
// linear; never between a value and the residual add that reads it
// again), at the place that balances the linears' FLOPs (2 against 3: the
// earliest of the two best); that each stage is a module of its own with
// the parameters it reads, the embedding-like @w0 that the first and last
// linear share in both; that the stage before sends the activation and
// returns a zero loss, the stage after receives it; and that the step's
// batch is three micro-batches of the model's.
// CHECK-LABEL: module @chain attributes {loom.task = {batch = 6 : i64, kind = "none"}}
// CHECK: module @pp0 attributes {loom.pipeline_stage = {micro_batches = 3 : i64, stage = 0 : i64, stages = 2 : i64}, loom.task = {batch = 6 : i64, kind = "none"}}
// CHECK: comm.mesh @world shape = [1, 2] axes = ["dp", "pp"]
// CHECK: loom.param @w0 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0, 1>}
// CHECK: loom.param @w1 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0>}
// CHECK-NOT: loom.param
// CHECK: func.func @loss(%{{.+}}: tensor<2x8xf32> {loom.input = "x"}) -> tensor<f32>
// CHECK: loom.linear
// CHECK: loom.tanh
// CHECK: loom.linear
// CHECK: %[[R:.+]] = loom.add
// CHECK-NEXT: comm.send %[[R]] over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: return %[[ZERO]]
// CHECK: module @pp1 attributes {loom.pipeline_stage = {micro_batches = 3 : i64, stage = 1 : i64, stages = 2 : i64}
// CHECK: loom.param @w0 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0, 1>}
// CHECK: loom.param @w2 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 1>}
// CHECK: loom.param @w3 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 1>}
// CHECK: func.func @loss
// CHECK-NEXT: %[[X:.+]] = comm.recv over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: loom.add
// CHECK: loom.linear %[[X]]
// CHECK: %[[L:.+]] = loom.mean
// CHECK-NEXT: return %[[L]]

// Three stages on a mesh with two data-parallel ranks: cuts after the
// first tanh and after the third linear; the tied @w0 in the first and
// last stage.
// THREE: module @pp0
// THREE: comm.mesh @world shape = [2, 3] axes = ["dp", "pp"]
// THREE: loom.param @w0 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0, 2>}
// THREE: loom.tanh
// THREE-NEXT: comm.send
// THREE: module @pp1
// THREE: comm.recv over @world ["pp"] peer = -1
// THREE-NEXT: loom.get_param @w1
// THREE-NEXT: loom.linear
// THREE-NEXT: loom.add
// THREE-NEXT: loom.get_param @w2
// THREE-NEXT: loom.linear
// THREE-NEXT: comm.send %{{.+}} over @world ["pp"] peer = 1
// THREE: module @pp2
// THREE: comm.recv over @world ["pp"] peer = -1
// THREE: loom.tanh
module @chain attributes {loom.task = {batch = 2 : i64, kind = "none"}} {
  loom.param @w0 : tensor<8x8xf32> init normal scale 1.0
  loom.param @w1 : tensor<8x8xf32> init normal scale 1.0
  loom.param @w2 : tensor<8x8xf32> init normal scale 1.0
  loom.param @w3 : tensor<8x8xf32> init normal scale 1.0
  func.func @loss(%x: tensor<2x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %w0 = loom.get_param @w0 : tensor<8x8xf32>
    %a = loom.linear %x, %w0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %ta = loom.tanh %a : tensor<2x8xf32>
    %w1 = loom.get_param @w1 : tensor<8x8xf32>
    %b = loom.linear %ta, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %r = loom.add %ta, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %w2 = loom.get_param @w2 : tensor<8x8xf32>
    %c = loom.linear %r, %w2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %tc = loom.tanh %c : tensor<2x8xf32>
    %w3 = loom.get_param @w3 : tensor<8x8xf32>
    %d = loom.linear %tc, %w3 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %e = loom.linear %d, %w0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %l = loom.mean %e axes = [0, 1] : tensor<2x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a parameter three stages read is refused: only a pair of
// stages exchanges a shared parameter's gradients.
// THRICE: error: parameter @w is read by 3 pipeline stages; at most two (a tied embedding of the first and last) may share one
module @shared_thrice attributes {loom.task = {batch = 2 : i64, kind = "none"}} {
  loom.param @w : tensor<8x8xf32> init normal scale 1.0
  func.func @loss(%x: tensor<2x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<8x8xf32>
    %a = loom.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %ta = loom.tanh %a : tensor<2x8xf32>
    %b = loom.linear %ta, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %tb = loom.tanh %b : tensor<2x8xf32>
    %c = loom.linear %tb, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %l = loom.mean %c axes = [0, 1] : tensor<2x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
