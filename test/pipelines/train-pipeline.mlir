// RUN: loom-opt %s --loom-train-pipeline | FileCheck %s
// RUN: loom-opt %s --loom-train-pipeline="optimizer=sgd momentum=0.9 clip-norm=1.0 warmup-steps=5 lr=0.05" \
// RUN:   | FileCheck %s --check-prefix=SGD

// Tests that the train pipeline inlines helpers into @loss, builds
// @loss_and_grad with one gradient per parameter and @train_step with one
// optimizer update per parameter, leaving every function an entry.

// CHECK: loom.param @fc.weight : tensor<3x4xf32> init normal scale 5.000000e-01
// CHECK: loom.param @fc.bias : tensor<3xf32> init zeros {no_weight_decay}
// CHECK-NOT: func.func private @forward
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: attributes {loom.entry = "loss"}
// CHECK-NOT: call
// CHECK: loom.linear
// CHECK: loom.cross_entropy
// CHECK-LABEL: func.func @loss_and_grad(
// CHECK-SAME: tensor<3x4xf32> {loom.grad_of = @fc.weight, loom.output = "grad:fc.weight"}
// CHECK-SAME: tensor<3xf32> {loom.grad_of = @fc.bias, loom.output = "grad:fc.bias"}
// CHECK-SAME: attributes {loom.entry = "loss_and_grad"}
// CHECK: %[[DW:.+]] = loom.matmul %{{.+}}, %{{.+}} transpose_a : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[DB:.+]] = loom.sum %{{.+}} axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %{{.+}}, %[[DW]], %[[DB]]
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[STEP:.+]]: tensor<i64> {loom.input = "step"}, %[[X:.+]]: tensor<2x4xf32> {loom.input = "x"}, %[[Y:.+]]: tensor<2xi32> {loom.input = "y"})
// CHECK-SAME: attributes {loom.entry = "train_step"}
// CHECK: %[[G:.+]]:3 = call @loss_and_grad(%[[X]], %[[Y]])
// CHECK: %[[NORM:.+]] = loom.sqrt
// CHECK-NOT: loom.minimum
// CHECK: %[[LR:.+]] = loom.lr_schedule %[[STEP]] {lr = 1.000000e-03 : f64}
// CHECK: loom.adamw @fc.weight, %[[G]]#1, %[[LR]], %[[STEP]] {{{.*}}weight_decay = 1.000000e-02 : f64}
// CHECK: loom.adamw @fc.bias, %[[G]]#2, %[[LR]], %[[STEP]] {{{.*}}weight_decay = 0.000000e+00 : f64}
// CHECK: return %[[G]]#0, %[[LR]], %[[NORM]]

// SGD-LABEL: func.func @train_step(
// SGD: loom.minimum
// SGD: loom.lr_schedule %{{.+}} {lr = 5.000000e-02 : f64, warmup_steps = 5 : i64}
// SGD: loom.sgd @fc.weight, {{.*}} {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64}
// SGD: loom.sgd @fc.bias, {{.*}} {momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64}
// SGD-NOT: loom.adamw

loom.param @"fc.weight" : tensor<3x4xf32> init normal scale 0.5
loom.param @"fc.bias" : tensor<3xf32> init zeros {no_weight_decay}

func.func private @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = loom.get_param @"fc.weight" : tensor<3x4xf32>
  %b = loom.get_param @"fc.bias" : tensor<3xf32>
  %h = loom.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %h : tensor<2x3xf32>
}

func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}, %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
  %h = func.call @forward(%x) : (tensor<2x4xf32>) -> tensor<2x3xf32>
  %l = loom.cross_entropy %h, %y : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
