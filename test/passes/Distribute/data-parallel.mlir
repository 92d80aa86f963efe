// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-data-parallel | FileCheck %s
// RUN: not loom-opt %s -split-input-file --loom-data-parallel="ranks=8 mesh=m axis=data" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=OPTS
// RUN: not loom-opt %s -split-input-file --loom-data-parallel="ranks=8 mesh=m axis=data" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=OPTS-ERR
// RUN: split-file %s %t --leading-lines
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2" | FileCheck %s --check-prefix=TRAIN
// RUN: loom-opt %t/model.mlir --loom-train-pipeline | FileCheck %s --check-prefix=NODP
// RUN: not loom-opt %s -split-input-file --loom-data-parallel="ranks=0" 2>&1 | FileCheck %s --check-prefix=RANKS

// Tests that the pass declares a 1-D mesh of `ranks` ranks (2 by default)
// named after its options, and makes @loss_and_grad return the mean over
// that axis of the loss and of every gradient: one all_reduce per result,
// in result order, right before the return. Other functions are untouched.
// CHECK-LABEL: module @averages_every_result
// CHECK-NEXT: comm.mesh @world shape = [2] axes = ["dp"]
// CHECK-NOT: comm.mesh
// CHECK-LABEL: func.func @loss(
// CHECK-NOT: comm.
// CHECK: return
// CHECK-LABEL: func.func @loss_and_grad(
// CHECK-SAME: %[[X:.+]]: tensor<4x3xf32>, %[[B:.+]]: tensor<3xf32>)
// Values are averaged in the order they are produced (arguments first).
// CHECK: %[[L:.+]] = loom.sum %[[X]]
// CHECK-NEXT: %[[AX:.+]] = comm.all_reduce %[[X]] over @world ["dp"] mean : tensor<4x3xf32>
// CHECK-NEXT: %[[AB:.+]] = comm.all_reduce %[[B]] over @world ["dp"] mean : tensor<3xf32>
// CHECK-NEXT: %[[AL:.+]] = comm.all_reduce %[[L]] over @world ["dp"] mean : tensor<f32>
// CHECK-NEXT: return %[[AL]], %[[AX]], %[[AB]] : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: comm.
// CHECK: return
// OPTS-LABEL: module @averages_every_result
// OPTS-NEXT: comm.mesh @m shape = [8] axes = ["data"]
// OPTS-LABEL: func.func @loss_and_grad(
// OPTS: %[[L:.+]] = loom.sum
// OPTS-NEXT: %[[AX:.+]] = comm.all_reduce %{{.+}} over @m ["data"] mean : tensor<4x3xf32>
// OPTS-NEXT: %[[AB:.+]] = comm.all_reduce %{{.+}} over @m ["data"] mean : tensor<3xf32>
// OPTS-NEXT: %[[AL:.+]] = comm.all_reduce %[[L]] over @m ["data"] mean : tensor<f32>
// OPTS-NEXT: return %[[AL]], %[[AX]], %[[AB]]
//
// Tests that ranks=0 is rejected, with its value, when the pass has to
// declare the mesh.
// RANKS: error: ranks must be positive, got 0{{$}}
module @averages_every_result {
  func.func @loss(%x: tensor<4x3xf32>) -> tensor<f32> {
    %l = loom.sum %x axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @loss_and_grad(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3xf32>) {
    %l = loom.sum %x axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
    return %l, %x, %b : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
  }
  func.func @train_step(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
    %0:3 = call @loss_and_grad(%x, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3xf32>)
    return %0#0 : tensor<f32>
  }
}

// -----

// Tests that a result returned twice is averaged twice, once per result, so
// every rank issues the same sequence of collectives.
// CHECK-LABEL: module @one_collective_per_result
// CHECK: func.func @loss_and_grad(%[[G:.+]]: tensor<2xf64>)
// CHECK-NEXT: %[[A0:.+]] = comm.all_reduce %[[G]] over @world ["dp"] mean : tensor<2xf64>
// CHECK-NEXT: %[[A1:.+]] = comm.all_reduce %[[G]] over @world ["dp"] mean : tensor<2xf64>
// CHECK-NEXT: return %[[A0]], %[[A1]]
module @one_collective_per_result {
  func.func @loss_and_grad(%g: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
    return %g, %g : tensor<2xf64>, tensor<2xf64>
  }
}

// -----

// Tests that an existing mesh with the axis is reused, whatever its size and
// other axes: no second mesh is declared and `ranks` is ignored.
// CHECK-LABEL: module @reuses_mesh
// CHECK-NEXT: comm.mesh @m shape = [3] axes = ["data"]
// CHECK-NEXT: comm.mesh @world shape = [4, 2] axes = ["dp", "tp"]
// CHECK-NOT: comm.mesh
// CHECK: %[[A:.+]] = comm.all_reduce %{{.+}} over @world ["dp"] mean : tensor<f32>
// CHECK-NEXT: return %[[A]]
// OPTS-LABEL: module @reuses_mesh
// OPTS-NEXT: comm.mesh @m shape = [3] axes = ["data"]
// OPTS-NEXT: comm.mesh @world shape = [4, 2] axes = ["dp", "tp"]
// OPTS-NOT: comm.mesh
// OPTS: comm.all_reduce %{{.+}} over @m ["data"] mean : tensor<f32>
module @reuses_mesh {
  comm.mesh @m shape = [3] axes = ["data"]
  comm.mesh @world shape = [4, 2] axes = ["dp", "tp"]
  func.func @loss_and_grad(%l: tensor<f32>) -> tensor<f32> {
    return %l : tensor<f32>
  }
}

// -----

// Tests that an existing mesh without the axis is an error, not extended or
// replaced (@world for the default options, @m for mesh=m axis=data).
// OPTS-ERR: error: mesh @m has no axis 'data'
// OPTS-ERR-NOT: error: mesh @world
// OPTS-ERR: error: no @loss_and_grad: run --loom-autodiff first
module @no_axis_in_mesh {
  // expected-error@+1 {{mesh @world has no axis 'dp'}}
  comm.mesh @world shape = [4] axes = ["tp"]
  comm.mesh @m shape = [4] axes = ["tp"]
  func.func @loss_and_grad(%l: tensor<f32>) -> tensor<f32> {
    return %l : tensor<f32>
  }
}

// -----

// Tests that the pass fails, naming what to run, on a model without
// @loss_and_grad. The same tiny model is the train-pipeline input below.
//
// Tests that --loom-train-pipeline="dp=2" averages the loss and both
// gradients inside @loss_and_grad, right before its return, so that
// @train_step's call results feed the gradient norm and the optimizer
// updates unchanged; and that without dp no mesh or collective appears.
// TRAIN: comm.mesh @world shape = [2] axes = ["dp"]
// TRAIN-LABEL: func.func @loss_and_grad(
// TRAIN: %[[L:.+]] = loom.cross_entropy
// TRAIN: %[[DW:.+]] = loom.matmul %{{.+}}, %{{.+}} transpose_a : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// TRAIN-NEXT: %[[DB:.+]] = loom.sum %{{.+}} axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
// TRAIN-NEXT: %[[AL:.+]] = comm.all_reduce %[[L]] over @world ["dp"] mean : tensor<f32>
// TRAIN-NEXT: %[[AW:.+]] = comm.all_reduce %[[DW]] over @world ["dp"] mean : tensor<3x4xf32>
// TRAIN-NEXT: %[[AB:.+]] = comm.all_reduce %[[DB]] over @world ["dp"] mean : tensor<3xf32>
// TRAIN-NEXT: return %[[AL]], %[[AW]], %[[AB]]
// TRAIN-LABEL: func.func @train_step(
// TRAIN-NOT: comm.
// TRAIN: %[[G:.+]]:3 = call @loss_and_grad(
// TRAIN-NOT: comm.
// TRAIN: loom.mul %[[G]]#1, %[[G]]#1
// TRAIN: loom.adamw @w, %[[G]]#1, %{{.+}}, %{{.+}} {
// TRAIN-NEXT: loom.adamw @b, %[[G]]#2, %{{.+}}, %{{.+}} {
// TRAIN-NEXT: return %[[G]]#0,
// NODP-NOT: comm.
// NODP-LABEL: func.func @loss_and_grad(
// NODP-NOT: comm.
// NODP: return
// expected-error@+2 {{no @loss_and_grad: run --loom-autodiff first}}
//--- model.mlir
module @tiny_model {
  loom.param @w : tensor<3x4xf32> init normal scale 0.5
  loom.param @b : tensor<3xf32> init zeros {no_weight_decay}
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}, %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<3x4xf32>
    %b = loom.get_param @b : tensor<3xf32>
    %h = loom.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = loom.cross_entropy %h, %y : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
