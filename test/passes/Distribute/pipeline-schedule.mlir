// RUN: loom-opt %s --pass-pipeline="builtin.module(builtin.module(loom-autodiff,loom-pipeline-schedule))" | FileCheck %s
// RUN: not loom-opt %s --pass-pipeline="builtin.module(builtin.module(loom-autodiff,canonicalize,loom-pipeline-schedule))" 2>&1 | FileCheck %s --check-prefix=ORDER

// ORDER: error: @loss_and_grad does not start with @loss's ops (--loom-pipeline-schedule must follow --loom-autodiff directly)

// Tests the 1F1B schedule of --loom-pipeline-split's two stages (the
// chain model of pipeline-split.mlir, three micro-batches): both entries
// take the step's batch and cut it into three slices; the first stage
// runs one forward ahead (F0 F1 B0 F2 B1 B2), the last alternates (F0 B0
// F1 B1 F2 B2), so each send of an activation meets its receive and each
// gradient sent back meets its receive; the losses and gradients are
// summed in micro-batch order and divided by 3, the loss summed over the
// stages; the tied @w0's gradient goes from the last stage to the first,
// which adds it before its own (as one rank's backward pass adds them)
// and sends the sum back (transfers marked as made once per step).
// CHECK-LABEL: module @pp0
// CHECK: func.func @loss(%[[X:.+]]: tensor<6x8xf32> {loom.input = "x"})
// CHECK-COUNT-3: comm.send %{{.+}} over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK: comm.all_reduce %{{.+}} over @world ["pp"] sum : tensor<f32>
// CHECK: func.func @loss_and_grad(%[[X:.+]]: tensor<6x8xf32> {loom.input = "x"})
// CHECK-NEXT: tensor.extract_slice %[[X]][0, 0] [2, 8] [1, 1] : tensor<6x8xf32> to tensor<2x8xf32>
// CHECK-NEXT: tensor.extract_slice %[[X]][2, 0] [2, 8] [1, 1]
// CHECK-NEXT: tensor.extract_slice %[[X]][4, 0] [2, 8] [1, 1]
// CHECK-NOT: comm.
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.recv over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.recv over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.recv over @world ["pp"] peer = 1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: %[[THIRD:.+]] = arith.constant dense<0.333333343> : tensor<f32>
// CHECK-NEXT: %[[LOSS:.+]] = loom.mul %{{.+}}, %[[THIRD]]
// CHECK-NOT: comm.
// CHECK: %[[SUM:.+]] = comm.all_reduce %[[LOSS]] over @world ["pp"] sum : tensor<f32>
// CHECK-NEXT: %[[LAST:.+]] = comm.recv over @world ["pp"] peer = 1 {loom.pipeline_shared} : tensor<8x8xf32>
// CHECK-NEXT: %[[W0:.+]] = loom.add %[[LAST]], %{{.+}} : (tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: comm.send %[[W0]] over @world ["pp"] peer = 1 {loom.pipeline_shared} : tensor<8x8xf32>
// CHECK-NEXT: return %[[SUM]], %[[W0]], %{{.+}} : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
// CHECK-LABEL: module @pp1
// CHECK: func.func @loss_and_grad
// CHECK-NOT: comm.
// CHECK: comm.recv over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.recv over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.recv over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = -1 : tensor<2x8xf32>
// CHECK-NOT: comm.
// CHECK: %[[SUM:.+]] = comm.all_reduce %{{.+}} over @world ["pp"] sum : tensor<f32>
// CHECK-NEXT: comm.send %[[MINE:.+]] over @world ["pp"] peer = -1 {loom.pipeline_shared} : tensor<8x8xf32>
// CHECK-NEXT: %[[W0:.+]] = comm.recv over @world ["pp"] peer = -1 {loom.pipeline_shared} : tensor<8x8xf32>
// CHECK-NEXT: return %[[SUM]], %[[W0]]
module @chain attributes {loom.task = {batch = 6 : i64, kind = "none"}} {
  module @pp0 attributes {loom.pipeline_stage = {micro_batches = 3 : i64, stage = 0 : i64, stages = 2 : i64}, loom.task = {batch = 6 : i64, kind = "none"}} {
    comm.mesh @world shape = [1, 2] axes = ["dp", "pp"]
    loom.param @w0 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0, 1>}
    loom.param @w1 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0>}
    func.func @loss(%arg0: tensor<2x8xf32> {loom.input = "x"}) -> tensor<f32> {
      %0 = loom.get_param @w0 : tensor<8x8xf32>
      %1 = loom.linear %arg0, %0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %2 = loom.tanh %1 : tensor<2x8xf32>
      %3 = loom.get_param @w1 : tensor<8x8xf32>
      %4 = loom.linear %2, %3 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %5 = loom.add %2, %4 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      comm.send %5 over @world ["pp"] peer = 1 : tensor<2x8xf32>
      %cst = arith.constant dense<0.000000e+00> : tensor<f32>
      return %cst : tensor<f32>
    }
  }
  module @pp1 attributes {loom.pipeline_stage = {micro_batches = 3 : i64, stage = 1 : i64, stages = 2 : i64}, loom.task = {batch = 6 : i64, kind = "none"}} {
    comm.mesh @world shape = [1, 2] axes = ["dp", "pp"]
    loom.param @w0 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 0, 1>}
    loom.param @w2 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 1>}
    loom.param @w3 : tensor<8x8xf32> init normal scale 1.000000e+00 {pipeline_stages = array<i64: 1>}
    func.func @loss(%arg0: tensor<2x8xf32> {loom.input = "x"}) -> tensor<f32> {
      %0 = comm.recv over @world ["pp"] peer = -1 : tensor<2x8xf32>
      %1 = loom.get_param @w0 : tensor<8x8xf32>
      %2 = loom.get_param @w2 : tensor<8x8xf32>
      %3 = loom.linear %0, %2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %4 = loom.tanh %3 : tensor<2x8xf32>
      %5 = loom.get_param @w3 : tensor<8x8xf32>
      %6 = loom.linear %4, %5 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %7 = loom.linear %6, %1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %8 = loom.mean %7 axes = [0, 1] : tensor<2x8xf32> -> tensor<f32>
      return %8 : tensor<f32>
    }
  }
}
