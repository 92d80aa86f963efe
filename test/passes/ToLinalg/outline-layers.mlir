// RUN: loom-opt %s -split-input-file -loom-outline-layers=min-ops=3 | FileCheck %s
// RUN: not loom-opt %s -split-input-file -loom-outline-layers=min-ops=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: loom-outline-layers: min-ops must be at least 1, not 0

// Tests that three equal layers (matmul, tanh, scale, add, each on its own
// parameter) become one function called three times: each call's parameter
// read stays in the entry before it and is an argument (the first, as the
// read comes first), the residual input is the other, the layer's output
// the result, the shared constant is copied in; the head after the layers
// stays in the entry.
// CHECK-LABEL: module @three_layers
// CHECK: func.func private @loss_repeat0(%[[W:.+]]: tensor<4x4xf32>, %[[X:.+]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, loom.outlined, passthrough = ["noinline"]}
// CHECK-NEXT: %[[M:.+]] = loom.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[T:.+]] = loom.tanh %[[M]]
// CHECK-NEXT: %[[C:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[S:.+]] = loom.mul %[[T]], %[[C]]
// CHECK-NEXT: %[[A:.+]] = loom.add %[[X]], %[[S]]
// CHECK-NEXT: return %[[A]]
// CHECK: func.func @loss(%[[IN:.+]]: tensor<2x4xf32>)
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[W0:.+]] = loom.get_param @w0
// CHECK-NEXT: %[[Y0:.+]] = call @loss_repeat0(%[[W0]], %[[IN]]) {no_inline}
// CHECK-NEXT: %[[W1:.+]] = loom.get_param @w1
// CHECK-NEXT: %[[Y1:.+]] = call @loss_repeat0(%[[W1]], %[[Y0]]) {no_inline}
// CHECK-NEXT: %[[W2:.+]] = loom.get_param @w2
// CHECK-NEXT: %[[Y2:.+]] = call @loss_repeat0(%[[W2]], %[[Y1]]) {no_inline}
// CHECK-NEXT: %[[R:.+]] = loom.sum %[[Y2]]
// CHECK-NEXT: return %[[R]]
module @three_layers {
  loom.param @w0 : tensor<4x4xf32> init normal scale 0.02
  loom.param @w1 : tensor<4x4xf32> init normal scale 0.02
  loom.param @w2 : tensor<4x4xf32> init normal scale 0.02
  func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> attributes {loom.entry = "loss"} {
    %half = arith.constant dense<0.5> : tensor<f32>
    %w0 = loom.get_param @w0 : tensor<4x4xf32>
    %m0 = loom.matmul %x, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t0 = loom.tanh %m0 : tensor<2x4xf32>
    %s0 = loom.mul %t0, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y0 = loom.add %x, %s0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %w1 = loom.get_param @w1 : tensor<4x4xf32>
    %m1 = loom.matmul %y0, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t1 = loom.tanh %m1 : tensor<2x4xf32>
    %s1 = loom.mul %t1, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y1 = loom.add %y0, %s1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %w2 = loom.get_param @w2 : tensor<4x4xf32>
    %m2 = loom.matmul %y1, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t2 = loom.tanh %m2 : tensor<2x4xf32>
    %s2 = loom.mul %t2, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y2 = loom.add %y1, %s2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = loom.sum %y2 axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %r : tensor<f32>
  }
}

// -----

// Tests that a repetition that is not the same computation (here the
// second layer's constant differs) is left in the entry: the first layer
// has no equal neighbour, the last two form a group.
// CHECK-LABEL: module @one_differs
// CHECK: func.func private @loss_repeat0(
// CHECK-NOT: func.func private
// CHECK: func.func @loss(
// CHECK: %[[M0:.+]] = loom.matmul
// CHECK-NEXT: loom.tanh %[[M0]]
// CHECK: call @loss_repeat0(
// CHECK: call @loss_repeat0(
// CHECK-NOT: call
module @one_differs {
  loom.param @w0 : tensor<4x4xf32> init normal scale 0.02
  loom.param @w1 : tensor<4x4xf32> init normal scale 0.02
  loom.param @w2 : tensor<4x4xf32> init normal scale 0.02
  func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> attributes {loom.entry = "loss"} {
    %half = arith.constant dense<0.5> : tensor<f32>
    %third = arith.constant dense<0.3> : tensor<f32>
    %w0 = loom.get_param @w0 : tensor<4x4xf32>
    %m0 = loom.matmul %x, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t0 = loom.tanh %m0 : tensor<2x4xf32>
    %s0 = loom.mul %t0, %third : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y0 = loom.add %x, %s0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %w1 = loom.get_param @w1 : tensor<4x4xf32>
    %m1 = loom.matmul %y0, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t1 = loom.tanh %m1 : tensor<2x4xf32>
    %s1 = loom.mul %t1, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y1 = loom.add %y0, %s1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %w2 = loom.get_param @w2 : tensor<4x4xf32>
    %m2 = loom.matmul %y1, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t2 = loom.tanh %m2 : tensor<2x4xf32>
    %s2 = loom.mul %t2, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
    %y2 = loom.add %y1, %s2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = loom.sum %y2 axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
    return %r : tensor<f32>
  }
}

// -----

// Tests that values a repetition makes and the ops after it use are
// results (here each layer's matmul also feeds a sum after the layers), and
// that an op with effects between layers ends the run: after the
// collective, the layers stay in the entry.
// CHECK-LABEL: module @results_and_barriers
// CHECK: func.func private @loss_repeat0(%{{.+}}: tensor<4x4xf32>, %{{.+}}: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK: func.func @loss(
// CHECK: %[[A:.+]]:2 = call @loss_repeat0(
// CHECK: %[[B:.+]]:2 = call @loss_repeat0(%{{.+}}, %[[A]]#1)
// CHECK: comm.all_reduce
// CHECK: loom.matmul
// CHECK: loom.add %[[A]]#0, %[[B]]#0
module @results_and_barriers {
  comm.mesh @world shape = [2] axes = ["dp"]
  loom.param @w0 : tensor<4x4xf32> init normal scale 0.02
  loom.param @w1 : tensor<4x4xf32> init normal scale 0.02
  loom.param @w2 : tensor<4x4xf32> init normal scale 0.02
  func.func @loss(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {loom.entry = "loss"} {
    %w0 = loom.get_param @w0 : tensor<4x4xf32>
    %m0 = loom.matmul %x, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t0 = loom.tanh %m0 : tensor<2x4xf32>
    %y0 = loom.add %x, %t0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %w1 = loom.get_param @w1 : tensor<4x4xf32>
    %m1 = loom.matmul %y0, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t1 = loom.tanh %m1 : tensor<2x4xf32>
    %y1 = loom.add %y0, %t1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %c = comm.all_reduce %y1 over @world ["dp"] mean : tensor<2x4xf32>
    %w2 = loom.get_param @w2 : tensor<4x4xf32>
    %m2 = loom.matmul %c, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %t2 = loom.tanh %m2 : tensor<2x4xf32>
    %y2 = loom.add %c, %t2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %a = loom.add %m0, %m1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = loom.add %a, %y2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  }
}

// -----

// Tests that writes of new values into the entry's buffers move into the
// function with the buffer as an argument (each write stays where it was
// among the computations), and that functions without loom.entry are left
// alone.
// CHECK-LABEL: module @entry_writes
// CHECK: func.func @helper(
// CHECK-NOT: call
// CHECK: func.func private @step_repeat0(%[[V:.+]]: tensor<8xf32>, %[[G:.+]]: tensor<8xf32>, %[[BUF:.+]]: memref<8xf32>)
// CHECK-NEXT: %[[N:.+]] = arith.subf %[[V]], %[[G]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[N]] in restrict writable %[[BUF]]
// CHECK-NEXT: arith.addf %[[G]], %[[G]]
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK: func.func @step(%[[P0:.+]]: memref<8xf32>, %[[P1:.+]]: memref<8xf32>, %[[P2:.+]]: memref<8xf32>, %[[G0:.+]]: tensor<8xf32>, %[[G1:.+]]: tensor<8xf32>, %[[G2:.+]]: tensor<8xf32>)
// CHECK: call @step_repeat0(%{{.+}}, %[[G0]], %[[P0]]) {no_inline}
// CHECK-NEXT: call @step_repeat0(%{{.+}}, %[[G1]], %[[P1]]) {no_inline}
// CHECK-NEXT: call @step_repeat0(%{{.+}}, %[[G2]], %[[P2]]) {no_inline}
// CHECK-NEXT: return
module @entry_writes {
  func.func @helper(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
    %0 = arith.subf %a, %b : tensor<8xf32>
    %1 = arith.subf %0, %b : tensor<8xf32>
    %2 = arith.subf %1, %b : tensor<8xf32>
    %3 = arith.subf %2, %b : tensor<8xf32>
    %4 = arith.subf %3, %b : tensor<8xf32>
    %5 = arith.subf %4, %b : tensor<8xf32>
    return %5 : tensor<8xf32>
  }
  func.func @step(%p0: memref<8xf32>, %p1: memref<8xf32>, %p2: memref<8xf32>, %g0: tensor<8xf32>, %g1: tensor<8xf32>, %g2: tensor<8xf32>) attributes {loom.entry = "train_step"} {
    %v0 = bufferization.to_tensor %p0 restrict : memref<8xf32> to tensor<8xf32>
    %v1 = bufferization.to_tensor %p1 restrict : memref<8xf32> to tensor<8xf32>
    %v2 = bufferization.to_tensor %p2 restrict : memref<8xf32> to tensor<8xf32>
    %n0 = arith.subf %v0, %g0 : tensor<8xf32>
    bufferization.materialize_in_destination %n0 in restrict writable %p0 : (tensor<8xf32>, memref<8xf32>) -> ()
    %e0 = arith.addf %g0, %g0 : tensor<8xf32>
    %n1 = arith.subf %v1, %g1 : tensor<8xf32>
    bufferization.materialize_in_destination %n1 in restrict writable %p1 : (tensor<8xf32>, memref<8xf32>) -> ()
    %e1 = arith.addf %g1, %g1 : tensor<8xf32>
    %n2 = arith.subf %v2, %g2 : tensor<8xf32>
    bufferization.materialize_in_destination %n2 in restrict writable %p2 : (tensor<8xf32>, memref<8xf32>) -> ()
    %e2 = arith.addf %g2, %g2 : tensor<8xf32>
    return
  }
}
