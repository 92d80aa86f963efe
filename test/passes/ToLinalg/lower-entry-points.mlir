// RUN: loom-opt %s -split-input-file -loom-lower-entry-points -verify-diagnostics | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-lower-entry-points -loom-lower-to-linalg -loom-bufferize-pipeline \
// RUN:   | FileCheck %s --check-prefix=BUF

// Tests that a train step takes memrefs for params, optimizer state, step,
// inputs and outputs in that order (recorded in loom.abi), that AdamW becomes
// one linalg.generic with three results and SGD with momentum one with two,
// that every write is a materialize_in_destination right after the update
// that computes it (nothing reads the old values later), outputs before the
// return, and that the loom.param declarations are removed.
// CHECK-LABEL: module @train_step
// CHECK-NOT: loom.param
// CHECK: func.func @train_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<4x2xf32>, %[[B:[a-z0-9]+]]: memref<2xf32>, %[[FROZEN:[a-z0-9]+]]: memref<3xf32>,
// CHECK-SAME: %[[M:[a-z0-9]+]]: memref<4x2xf32>, %[[V:[a-z0-9]+]]: memref<4x2xf32>, %[[MOM:[a-z0-9]+]]: memref<2xf32>,
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: memref<i64>, %[[X:[a-z0-9]+]]: memref<3x4xf32>, %[[LOSS:[a-z0-9]+]]: memref<f32>, %[[LR:[a-z0-9]+]]: memref<f32>)
// CHECK-SAME: attributes {loom.abi = [{name = "w", role = "param"}, {name = "b", role = "param"}, {name = "frozen", role = "param"},
// CHECK-SAME: {name = "w.exp_avg", role = "state"}, {name = "w.exp_avg_sq", role = "state"}, {name = "b.momentum_buffer", role = "state"},
// CHECK-SAME: {name = "step", role = "step"}, {name = "x", role = "input"}, {name = "loss", role = "output"}, {name = "lr", role = "output"}],
// CHECK-SAME: loom.entry = "train_step"}
// CHECK: %[[WT:.+]] = bufferization.to_tensor %[[W]] restrict : memref<4x2xf32> to tensor<4x2xf32>
// CHECK: %[[BT:.+]] = bufferization.to_tensor %[[B]] restrict
// CHECK: bufferization.to_tensor %[[FROZEN]] restrict
// CHECK: %[[MT:.+]] = bufferization.to_tensor %[[M]] restrict
// CHECK: %[[VT:.+]] = bufferization.to_tensor %[[V]] restrict
// CHECK: %[[MOMT:.+]] = bufferization.to_tensor %[[MOM]] restrict
// CHECK: %[[STEPT:.+]] = bufferization.to_tensor %[[STEP]] restrict : memref<i64> to tensor<i64>
// CHECK: %[[XT:.+]] = bufferization.to_tensor %[[X]] restrict : memref<3x4xf32> to tensor<3x4xf32>
// CHECK: tensor.extract %[[STEPT]][] : tensor<i64>
// CHECK: math.powf
// CHECK: %[[ADAM:.+]]:3 = linalg.generic
// CHECK-SAME: ins(%[[WT]], %[[WT]], %[[MT]], %[[VT]] : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK: math.sqrt
// CHECK: linalg.yield %{{.+}}, %{{.+}}, %{{.+}} : f32, f32, f32
// CHECK-NEXT: } -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
// CHECK-NEXT: bufferization.materialize_in_destination %[[ADAM]]#0 in restrict writable %[[W]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[ADAM]]#1 in restrict writable %[[M]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[ADAM]]#2 in restrict writable %[[V]]
// CHECK: arith.cmpi eq
// CHECK: %[[SGD:.+]]:2 = linalg.generic
// CHECK-SAME: ins(%[[BT]], %[[BT]], %[[MOMT]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: arith.select
// CHECK: } -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: bufferization.materialize_in_destination %[[SGD]]#0 in restrict writable %[[B]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[SGD]]#1 in restrict writable %[[MOM]]
// CHECK-NEXT: %[[L:.+]] = loom.sum %[[XT]] axes = [0, 1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[L]] in restrict writable %[[LOSS]]
// CHECK-NEXT: bufferization.materialize_in_destination %{{.+}} in restrict writable %[[LR]]
// CHECK-NEXT: return
// CHECK-NOT: loom.get_param
// CHECK-NOT: loom.adamw
// CHECK-NOT: loom.sgd
module @train_step {
  loom.param @w : tensor<4x2xf32> init normal scale 1.0
  loom.param @b : tensor<2xf32> init zeros {no_weight_decay}
  loom.param @frozen : tensor<3xf32> init ones
  func.func @train_step(%step: tensor<i64> {loom.input = "step"}, %x: tensor<3x4xf32> {loom.input = "x"}) -> (tensor<f32> {loom.output = "loss"}, tensor<f32> {loom.output = "lr"}) attributes {loom.entry = "train_step"} {
    %w = loom.get_param @w : tensor<4x2xf32>
    %b = loom.get_param @b : tensor<2xf32>
    %lr = arith.constant dense<1.0e-3> : tensor<f32>
    loom.adamw @w, %w, %lr, %step {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01} : tensor<4x2xf32>, tensor<f32>, tensor<i64>
    loom.sgd @b, %b, %lr, %step {momentum = 0.9, weight_decay = 0.0} : tensor<2xf32>, tensor<f32>, tensor<i64>
    %loss = loom.sum %x axes = [0, 1] : tensor<3x4xf32> -> tensor<f32>
    return %loss, %lr : tensor<f32>, tensor<f32>
  }
}

// -----

// Tests that each entry gets its own ABI: no optimizer state where nothing
// is updated, none for SGD without momentum, default input/output names,
// and that functions without loom.entry are left alone.
// CHECK-LABEL: module @two_entries
// CHECK: func.func @loss(%{{.+}}: memref<2xf32>, %{{.+}}: memref<2xf32>, %[[OUT:.+]]: memref<f32>)
// CHECK-SAME: attributes {loom.abi = [{name = "w", role = "param"}, {name = "input0", role = "input"}, {name = "output0", role = "output"}], loom.entry = "loss"}
// CHECK: %[[L:.+]] = loom.sum
// CHECK-NEXT: bufferization.materialize_in_destination %[[L]] in restrict writable %[[OUT]]
// CHECK-NEXT: return
// CHECK: func.func @step(%[[W:.+]]: memref<2xf32>, %{{.+}}: memref<i64>, %{{.+}}: memref<2xf32>)
// CHECK-SAME: attributes {loom.abi = [{name = "w", role = "param"}, {name = "step", role = "step"}, {name = "input1", role = "input"}], loom.entry = "sgd_step"}
// CHECK: %[[NEW:.+]] = linalg.generic
// CHECK-NOT: arith.select
// CHECK: } -> tensor<2xf32>
// CHECK-NEXT: bufferization.materialize_in_destination %[[NEW]] in restrict writable %[[W]]
// CHECK-NEXT: return
// Unused non-entry functions are removed with the parameters they read.
// CHECK-NOT: func.func @helper
module @two_entries {
  loom.param @w : tensor<2xf32> init zeros
  func.func @loss(%x: tensor<2xf32>) -> tensor<f32> attributes {loom.entry = "loss"} {
    %w = loom.get_param @w : tensor<2xf32>
    %0 = loom.mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %1 = loom.sum %0 axes = [0] : tensor<2xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func @step(%s: tensor<i64> {loom.input = "step"}, %g: tensor<2xf32>) attributes {loom.entry = "sgd_step"} {
    %lr = arith.constant dense<1.0e-1> : tensor<f32>
    loom.sgd @w, %g, %lr, %s {momentum = 0.0, weight_decay = 0.0} : tensor<2xf32>, tensor<f32>, tensor<i64>
    return
  }
  func.func @helper() {
    return
  }
}

// -----

// Tests that an output returning a parameter's value as read before its
// update still receives the old value after bufferization: the old value
// must be copied out of the parameter buffer before the new one is written.
// BUF-LABEL: module @output_reads_old_param
// BUF: func.func @f(%[[W:[a-z0-9]+]]: memref<2xf32>, %{{.+}}: memref<i64>, %{{.+}}: memref<2xf32>, %[[OUT:[a-z0-9]+]]: memref<2xf32>)
// BUF-NOT: memref.copy %{{.+}}, %[[W]] :
// BUF: memref.copy %[[W]], %{{.+}} : memref<2xf32> to memref<2xf32>
// BUF: return
module @output_reads_old_param {
  loom.param @w : tensor<2xf32> init zeros
  func.func @f(%s: tensor<i64> {loom.input = "step"}, %g: tensor<2xf32>) -> tensor<2xf32> attributes {loom.entry = "f"} {
    %w = loom.get_param @w : tensor<2xf32>
    %lr = arith.constant dense<1.0e-1> : tensor<f32>
    loom.sgd @w, %g, %lr, %s {momentum = 0.0, weight_decay = 0.0} : tensor<2xf32>, tensor<f32>, tensor<i64>
    return %w : tensor<2xf32>
  }
}

// -----

// Tests that a parameter updated twice in one entry is rejected.
module @no_double_update {
  loom.param @w : tensor<2xf32> init zeros
  func.func @f(%s: tensor<i64>, %g: tensor<2xf32>) attributes {loom.entry = "f"} {
    %lr = arith.constant dense<1.0e-1> : tensor<f32>
    loom.sgd @w, %g, %lr, %s {momentum = 0.0, weight_decay = 0.0} : tensor<2xf32>, tensor<f32>, tensor<i64>
    // expected-error@+1 {{parameter "w" is updated twice in one step}}
    loom.sgd @w, %g, %lr, %s {momentum = 0.0, weight_decay = 0.0} : tensor<2xf32>, tensor<f32>, tensor<i64>
    return
  }
}

// -----

// Tests that dynamically shaped entry arguments are rejected.
module @no_dynamic_argument {
  // expected-error@+1 {{entry argument 0 must be a statically shaped tensor, got 'tensor<?xf32>'}}
  func.func @f(%x: tensor<?xf32>) attributes {loom.entry = "f"} {
    return
  }
}

// -----

// Tests that non-tensor entry arguments are rejected.
module @no_scalar_argument {
  // expected-error@+1 {{entry argument 0 must be a statically shaped tensor, got 'f32'}}
  func.func @f(%x: f32) attributes {loom.entry = "f"} {
    return
  }
}

// -----

// Tests that entries with several blocks are rejected.
module @no_multi_block_entry {
  // expected-error@+1 {{entry functions must have one block (inline calls first)}}
  func.func @f(%x: tensor<2xf32>) attributes {loom.entry = "f"} {
    cf.br ^bb1
  ^bb1:
    return
  }
}
