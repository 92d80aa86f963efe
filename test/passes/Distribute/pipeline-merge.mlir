// RUN: loom-opt %s --loom-pipeline-merge | FileCheck %s

// Tests that the stages' functions move into the enclosing module under
// their stage's suffix (symbols `_pp<s>`, entry names `.pp<s>`), the mesh
// and a parameter two stages hold are declared once, the stages' module
// attributes (here the optimizer) are kept, and the module records the
// pipeline.
// CHECK-LABEL: module @merged attributes {loom.optimizer = {kind = "sgd"}, loom.pipeline = {micro_batches = 4 : i64, stages = 2 : i64}}
// CHECK-NEXT: comm.mesh @world shape = [1, 2] axes = ["dp", "pp"]
// CHECK-NEXT: loom.param @tied : tensor<4xf32> init ones {pipeline_stages = array<i64: 0, 1>}
// CHECK-NEXT: loom.param @first : tensor<4xf32> init ones {pipeline_stages = array<i64: 0>}
// CHECK-NEXT: func.func @train_step_pp0() attributes {loom.entry = "train_step.pp0"}
// CHECK-NEXT: call @helper_pp0()
// CHECK: func.func private @helper_pp0()
// CHECK: loom.param @last : tensor<4xf32> init ones {pipeline_stages = array<i64: 1>}
// CHECK-NEXT: func.func @train_step_pp1() attributes {loom.entry = "train_step.pp1"}
// CHECK-NOT: module @pp
module @merged {
  module @pp0 attributes {loom.pipeline_stage = {micro_batches = 4 : i64, stage = 0 : i64, stages = 2 : i64}, loom.optimizer = {kind = "sgd"}} {
    comm.mesh @world shape = [1, 2] axes = ["dp", "pp"]
    loom.param @tied : tensor<4xf32> init ones {pipeline_stages = array<i64: 0, 1>}
    loom.param @first : tensor<4xf32> init ones {pipeline_stages = array<i64: 0>}
    func.func @train_step() attributes {loom.entry = "train_step"} {
      call @helper() : () -> ()
      return
    }
    func.func private @helper() {
      return
    }
  }
  module @pp1 attributes {loom.pipeline_stage = {micro_batches = 4 : i64, stage = 1 : i64, stages = 2 : i64}, loom.optimizer = {kind = "sgd"}} {
    comm.mesh @world shape = [1, 2] axes = ["dp", "pp"]
    loom.param @tied : tensor<4xf32> init ones {pipeline_stages = array<i64: 0, 1>}
    loom.param @last : tensor<4xf32> init ones {pipeline_stages = array<i64: 1>}
    func.func @train_step() attributes {loom.entry = "train_step"} {
      return
    }
  }
}
