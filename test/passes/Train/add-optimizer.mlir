// RUN: loom-opt %s -split-input-file -loom-add-optimizer -verify-diagnostics | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   -loom-add-optimizer="optimizer=sgd momentum=0.9 clip-norm=1.0 lr=0.1 warmup-steps=10 decay-steps=100 min-lr=0.01 weight-decay=0.5" \
// RUN:   | FileCheck %s --check-prefix=SGD
// RUN: not loom-opt %s -loom-add-optimizer="optimizer=rmsprop" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Tests that @train_step(step, inputs...) calls @loss_and_grad, computes the
// global gradient norm and updates every parameter: AdamW by default without
// clipping, SGD with momentum, clipping and a warmup/cosine schedule when
// asked; no_weight_decay parameters get weight_decay = 0.
// CHECK-LABEL: module @two_params
// CHECK: func.func @train_step(%[[STEP:.+]]: tensor<i64> {loom.input = "step"}, %[[X:.+]]: tensor<3x4xf32> {loom.input = "x"})
// CHECK-SAME: -> (tensor<f32> {loom.output = "loss"}, tensor<f32> {loom.output = "lr"}, tensor<f32> {loom.output = "grad_norm"})
// CHECK-SAME: attributes {loom.entry = "train_step"}
// CHECK: %[[G:.+]]:3 = call @loss_and_grad(%[[X]]) : (tensor<3x4xf32>) -> (tensor<f32>, tensor<4x2xf32>, tensor<2xf32>)
// CHECK: %[[SQW:.+]] = loom.mul %[[G]]#1, %[[G]]#1 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[SW:.+]] = loom.sum %[[SQW]] axes = [0, 1] : tensor<4x2xf32> -> tensor<f32>
// CHECK: %[[SQB:.+]] = loom.mul %[[G]]#2, %[[G]]#2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[SB:.+]] = loom.sum %[[SQB]] axes = [0] : tensor<2xf32> -> tensor<f32>
// CHECK: %[[SS:.+]] = loom.add %[[SW]], %[[SB]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: %[[NORM:.+]] = loom.sqrt %[[SS]] : tensor<f32>
// CHECK-NOT: loom.minimum
// CHECK: %[[LR:.+]] = loom.lr_schedule %[[STEP]] {lr = 1.000000e-03 : f64} : tensor<i64> -> tensor<f32>
// CHECK: loom.adamw @w, %[[G]]#1, %[[LR]], %[[STEP]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64} : tensor<4x2xf32>, tensor<f32>, tensor<i64>
// CHECK: loom.adamw @b, %[[G]]#2, %[[LR]], %[[STEP]] {{{.*}}weight_decay = 0.000000e+00 : f64} : tensor<2xf32>, tensor<f32>, tensor<i64>
// CHECK: return %[[G]]#0, %[[LR]], %[[NORM]] : tensor<f32>, tensor<f32>, tensor<f32>

// SGD-LABEL: module @two_params
// The module records what the step was built with (for the manifest):
// SGD-SAME: loom.optimizer = {{.*}}clip_norm = 1.000000e+00 : f64, decay_steps = 100 : i64, {{.*}}kind = "sgd", lr = 1.000000e-01 : f64, min_lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, warmup_steps = 10 : i64, weight_decay = 5.000000e-01 : f64}
// SGD: func.func @train_step(%[[STEP:.+]]: tensor<i64> {loom.input = "step"}
// SGD: %[[G:.+]]:3 = call @loss_and_grad
// SGD: %[[NORM:.+]] = loom.sqrt %{{.+}} : tensor<f32>
// SGD: %[[TINY:.+]] = arith.constant dense<9.99999997E-7> : tensor<f32>
// SGD: %[[DEN:.+]] = loom.add %[[NORM]], %[[TINY]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// SGD: %[[MAXN:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// SGD: %[[RATIO:.+]] = loom.div %[[MAXN]], %[[DEN]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// SGD: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// SGD: %[[COEF:.+]] = loom.minimum %[[RATIO]], %[[ONE]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// SGD: %[[GW:.+]] = loom.mul %[[G]]#1, %[[COEF]] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
// SGD: %[[GB:.+]] = loom.mul %[[G]]#2, %[[COEF]] : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// SGD: %[[LR:.+]] = loom.lr_schedule %[[STEP]] {decay_steps = 100 : i64, lr = 1.000000e-01 : f64, min_lr = 1.000000e-02 : f64, warmup_steps = 10 : i64} : tensor<i64> -> tensor<f32>
// SGD: loom.sgd @w, %[[GW]], %[[LR]], %[[STEP]] {momentum = 9.000000e-01 : f64, weight_decay = 5.000000e-01 : f64} : tensor<4x2xf32>, tensor<f32>, tensor<i64>
// SGD: loom.sgd @b, %[[GB]], %[[LR]], %[[STEP]] {momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64} : tensor<2xf32>, tensor<f32>, tensor<i64>
// SGD-NOT: loom.adamw
// SGD: return %[[G]]#0, %[[LR]], %[[NORM]] : tensor<f32>, tensor<f32>, tensor<f32>
module @two_params {
  loom.param @w : tensor<4x2xf32> init normal scale 1.0
  loom.param @b : tensor<2xf32> init zeros {no_weight_decay}
  func.func @loss_and_grad(%x: tensor<3x4xf32> {loom.input = "x"}) -> (tensor<f32>, tensor<4x2xf32>, tensor<2xf32>) {
    %l = arith.constant dense<1.0> : tensor<f32>
    %gw = arith.constant dense<2.0> : tensor<4x2xf32>
    %gb = arith.constant dense<3.0> : tensor<2xf32>
    return %l, %gw, %gb : tensor<f32>, tensor<4x2xf32>, tensor<2xf32>
  }
}

// -----

// Tests that an f64 model gets an f64 schedule, norm and updates.
// CHECK-LABEL: module @f64_model
// CHECK: func.func @train_step(%{{.+}}: tensor<i64> {loom.input = "step"}) -> (tensor<f64> {loom.output = "loss"}, tensor<f64> {loom.output = "lr"}, tensor<f64> {loom.output = "grad_norm"})
// CHECK: loom.lr_schedule %{{.+}} : tensor<i64> -> tensor<f64>
// CHECK: loom.adamw @v, %{{.+}} : tensor<3xf64>, tensor<f64>, tensor<i64>
// SGD-LABEL: module @f64_model
// SGD: loom.sgd @v, %{{.+}} : tensor<3xf64>, tensor<f64>, tensor<i64>
module @f64_model {
  loom.param @v : tensor<3xf64> init ones
  func.func @loss_and_grad() -> (tensor<f64>, tensor<3xf64>) {
    %l = arith.constant dense<1.0> : tensor<f64>
    %g = arith.constant dense<2.0> : tensor<3xf64>
    return %l, %g : tensor<f64>, tensor<3xf64>
  }
}

// -----

// Tests that a module without @loss_and_grad is rejected.
// expected-error@+1 {{no @loss_and_grad: run --loom-autodiff first}}
module @no_loss_and_grad {
  loom.param @w : tensor<2xf32> init zeros
}

// -----

// Tests that an existing @train_step is not overwritten.
// expected-error@+1 {{the module already has a @train_step function}}
module @dont_overwrite_train_step {
  loom.param @w : tensor<2xf32> init zeros
  func.func @loss_and_grad() -> (tensor<f32>, tensor<2xf32>) {
    %l = arith.constant dense<1.0> : tensor<f32>
    %g = arith.constant dense<2.0> : tensor<2xf32>
    return %l, %g : tensor<f32>, tensor<2xf32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// Tests that a model without parameters is rejected.
// expected-error@+1 {{the model has no loom.param to optimize}}
module @no_params {
  func.func @loss_and_grad() -> tensor<f32> {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that parameters must have the loss's element type.
module @no_mixed_precision {
  // expected-error@+1 {{parameter element type differs from the loss's}}
  loom.param @w : tensor<2xf64> init zeros
  func.func @loss_and_grad() -> (tensor<f32>, tensor<2xf64>) {
    %l = arith.constant dense<1.0> : tensor<f32>
    %g = arith.constant dense<2.0> : tensor<2xf64>
    return %l, %g : tensor<f32>, tensor<2xf64>
  }
}

// Tests that an unknown optimizer name is rejected.
// UNKNOWN: error: unknown optimizer 'rmsprop' (expected adamw or sgd)
