// RUN: loom-opt %s -split-input-file -loom-autodiff -verify-diagnostics | FileCheck %s

// Tests that @loss is kept as an entry, @loss_and_grad returns the loss and
// one gradient per parameter with loom.grad_of / loom.output, and that a
// broadcast operand's gradient is summed back to its shape.
// CHECK-LABEL: module @broadcast_mul_add
// CHECK: func.func @loss(%{{.+}}: tensor<4x8xf32> {loom.input = "x"}) -> (tensor<f32> {loom.output = "loss"}) attributes {loom.entry = "loss"}
// CHECK: func.func @loss_and_grad(%[[X:.+]]: tensor<4x8xf32> {loom.input = "x"})
// CHECK-SAME: -> (tensor<f32> {loom.output = "loss"},
// CHECK-SAME: tensor<8xf32> {loom.grad_of = @w, loom.output = "grad:w"},
// CHECK-SAME: tensor<4x1xf32> {loom.grad_of = @b, loom.output = "grad:b"},
// CHECK-SAME: tensor<3xf32> {loom.grad_of = @unused, loom.output = "grad:unused"})
// CHECK-SAME: attributes {loom.entry = "loss_and_grad"}
// CHECK: %[[W:.+]] = loom.get_param @w : tensor<8xf32>
// CHECK: %[[B:.+]] = loom.get_param @b : tensor<4x1xf32>
// CHECK: %[[LOSS:.+]] = loom.sum %{{.+}} axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ONE2:.+]] = loom.reshape %[[ONE]] : tensor<f32> -> tensor<1x1xf32>
// CHECK: %[[DY:.+]] = loom.broadcast_to %[[ONE2]] : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK: %[[DB:.+]] = loom.sum %[[DY]] axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK: %[[DWFULL:.+]] = loom.mul %[[DY]], %[[X]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[DWSUM:.+]] = loom.sum %[[DWFULL]] axes = [0] keepdim : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK: %[[DW:.+]] = loom.reshape %[[DWSUM]] : tensor<1x8xf32> -> tensor<8xf32>
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]], %[[ZERO]] : tensor<f32>, tensor<8xf32>, tensor<4x1xf32>, tensor<3xf32>
module @broadcast_mul_add {
  loom.param @w : tensor<8xf32> init normal scale 1.0
  loom.param @b : tensor<4x1xf32> init zeros {no_weight_decay}
  loom.param @unused : tensor<3xf32> init zeros
  func.func @loss(%x: tensor<4x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<8xf32>
    %b = loom.get_param @b : tensor<4x1xf32>
    %0 = loom.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = loom.add %0, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %2 = loom.sum %1 axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %2 : tensor<f32>
  }
}

// -----

// Tests that the gradients of every use of a parameter are summed, across
// operands of one op and across several get_param reads.
// CHECK-LABEL: module @param_used_twice
// CHECK: func.func @loss_and_grad
// CHECK-SAME: -> (tensor<f32> {loom.output = "loss"}, tensor<4xf32> {loom.grad_of = @w, loom.output = "grad:w"})
// CHECK: %[[W:.+]] = loom.get_param @w : tensor<4xf32>
// CHECK: %[[DY:.+]] = loom.broadcast_to %{{.+}} : tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[D1:.+]] = loom.mul %[[DY]], %[[W]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[D2:.+]] = loom.mul %[[DY]], %[[W]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[DSQ:.+]] = loom.add %[[D1]], %[[D2]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[DW:.+]] = loom.add %[[DY]], %[[DSQ]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %{{.+}}, %[[DW]] : tensor<f32>, tensor<4xf32>
module @param_used_twice {
  loom.param @w : tensor<4xf32> init normal scale 1.0
  func.func @loss(%x: tensor<4xf32>) -> tensor<f32> {
    %w = loom.get_param @w : tensor<4xf32>
    %0 = loom.mul %w, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %w2 = loom.get_param @w : tensor<4xf32>
    %1 = loom.add %0, %w2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = loom.sum %1 axes = [0] : tensor<4xf32> -> tensor<f32>
    return %2 : tensor<f32>
  }
}

// -----

// Tests that gradients are returned in parameter declaration order, not in
// the order the parameters are read.
// CHECK-LABEL: module @declaration_order
// CHECK: func.func @loss_and_grad(%{{.+}}: tensor<4xi32>)
// CHECK-SAME: tensor<8x2xf32> {loom.grad_of = @first, loom.output = "grad:first"}, tensor<2xf32> {loom.grad_of = @second, loom.output = "grad:second"}
// CHECK: %[[HOT:.+]] = loom.one_hot
// CHECK: %[[DT:.+]] = loom.matmul %{{.+}}, %{{.+}} transpose_a : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK: return %{{.+}}, %[[DT]], %{{.+}} : tensor<f32>, tensor<8x2xf32>, tensor<2xf32>
module @declaration_order {
  loom.param @first : tensor<8x2xf32> init normal scale 1.0
  loom.param @second : tensor<2xf32> init ones
  func.func @loss(%ids: tensor<4xi32>) -> tensor<f32> {
    %s = loom.get_param @second : tensor<2xf32>
    %t = loom.get_param @first : tensor<8x2xf32>
    %e = loom.embedding %t, %ids : (tensor<8x2xf32>, tensor<4xi32>) -> tensor<4x2xf32>
    %0 = loom.mul %e, %s : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %1 = loom.mean %0 axes = [0, 1] : tensor<4x2xf32> -> tensor<f32>
    return %1 : tensor<f32>
  }
}

// -----

// Tests that a heaviside on the path stops the gradient (a zero gradient for
// the parameter behind it).
// CHECK-LABEL: module @heaviside_blocks_gradient
// CHECK: func.func @loss_and_grad
// CHECK-NOT: loom.mul
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: return %{{.+}}, %[[ZERO]] : tensor<f32>, tensor<4xf32>
module @heaviside_blocks_gradient {
  loom.param @w : tensor<4xf32> init ones
  func.func @loss() -> tensor<f32> {
    %w = loom.get_param @w : tensor<4xf32>
    %h = loom.heaviside %w : tensor<4xf32>
    %0 = loom.sum %h axes = [0] : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Tests that a module without @loss is rejected.
// expected-error@+1 {{no function @loss to train: a model defines func.func @loss(inputs...) -> tensor<f32>}}
module @no_loss_function {
  func.func @objective() {
    return
  }
}

// -----

// Tests that a non-scalar loss is rejected.
module @no_scalar_loss {
  // expected-error@+1 {{@loss must return exactly one scalar float tensor (the loss)}}
  func.func @loss(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that a loss with two results is rejected.
module @no_single_loss {
  // expected-error@+1 {{@loss must return exactly one scalar float tensor (the loss)}}
  func.func @loss(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    return %x, %x : tensor<f32>, tensor<f32>
  }
}

// -----

// Tests that an integer loss is rejected.
module @no_float_loss {
  // expected-error@+1 {{@loss must return exactly one scalar float tensor (the loss)}}
  func.func @loss(%x: tensor<i32>) -> tensor<i32> {
    return %x : tensor<i32>
  }
}

// -----

// Tests that a loss with several blocks is rejected.
module @no_single_block {
  // expected-error@+1 {{@loss must have one block}}
  func.func @loss(%x: tensor<f32>) -> tensor<f32> {
    cf.br ^bb1
  ^bb1:
    return %x : tensor<f32>
  }
}

// -----

// Tests that an existing @loss_and_grad is not overwritten.
module @dont_overwrite_loss_and_grad {
  // expected-error@+1 {{the module already has a @loss_and_grad function}}
  func.func @loss(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func @loss_and_grad() {
    return
  }
}

// -----

// Tests that an op without a gradient rule on the loss path is an error.
module @no_vjp_for_reduce_max {
  loom.param @w : tensor<4xf32> init ones
  func.func @loss() -> tensor<f32> {
    %w = loom.get_param @w : tensor<4xf32>
    // expected-error@+1 {{cannot differentiate 'loom.reduce_max': it does not implement VJPOpInterface}}
    %0 = loom.reduce_max %w axes = [0] : tensor<4xf32> -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Tests the gradients of the comm ops of tensor parallelism (Megatron-LM's
// conventions): a comm.fan_out's input gets the all-reduce sum of its
// result's gradient, a forward comm.all_reduce sum's input its result's
// gradient unchanged.
// CHECK-LABEL: module @tensor_parallel_gradients
// CHECK: func.func @loss_and_grad
// CHECK: comm.fan_out %{{.+}} over @world ["tp"] : tensor<4xf32>
// CHECK: comm.all_reduce %{{.+}} over @world ["tp"] sum : tensor<4xf32>
// CHECK-NOT: comm.
// CHECK: %[[G:.+]] = comm.all_reduce %{{.+}} over @world ["tp"] sum : tensor<4xf32>
// CHECK-NEXT: return %{{.+}}, %[[G]]
module @tensor_parallel_gradients {
  comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]
  loom.param @w : tensor<4xf32> init ones
  func.func @loss() -> tensor<f32> {
    %w = loom.get_param @w : tensor<4xf32>
    %f = comm.fan_out %w over @world ["tp"] : tensor<4xf32>
    %sq = loom.mul %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = comm.all_reduce %sq over @world ["tp"] sum : tensor<4xf32>
    %l = loom.sum %s axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a mean all-reduce before autodiff is refused: its gradient
// has no convention here.
module @mean_all_reduce {
  comm.mesh @world shape = [2] axes = ["dp"]
  loom.param @w : tensor<4xf32> init ones
  func.func @loss() -> tensor<f32> {
    %w = loom.get_param @w : tensor<4xf32>
    // expected-error@+1 {{cannot differentiate 'comm.all_reduce' here: before autodiff only comm.all_gather, comm.fan_out, comm.shard, comm.unshard, comm.all_reduce sum, comm.reduce_scatter sum, comm.send and comm.recv are differentiated}}
    %s = comm.all_reduce %w over @world ["dp"] mean : tensor<4xf32>
    %l = loom.sum %s axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the gradients of a pipeline stage's transfers (GPipe's backward
// pass): the activation received from the stage before sends its gradient
// back to it, the one sent to the stage after receives its gradient from
// it, in the reverse order of the forward transfers; a received value that
// nothing differentiable uses still answers with zeros.
// CHECK-LABEL: module @pipeline_stage_gradients
// CHECK: func.func @loss_and_grad
// CHECK: %[[X:.+]] = comm.recv over @world ["pp"] peer = -1 : tensor<4xf32>
// CHECK: comm.recv over @world ["pp"] peer = -1 : tensor<4xf32>
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = 1 : tensor<4xf32>
// CHECK: %[[GY:.+]] = comm.recv over @world ["pp"] peer = 1 : tensor<4xf32>
// CHECK: %[[GX:.+]] = loom.mul %[[GY]]
// CHECK: comm.send %{{.+}} over @world ["pp"] peer = -1 : tensor<4xf32>
// CHECK: comm.send %[[GX]] over @world ["pp"] peer = -1 : tensor<4xf32>
// CHECK: return
module @pipeline_stage_gradients {
  comm.mesh @world shape = [1, 3] axes = ["dp", "pp"]
  loom.param @w : tensor<4xf32> init ones
  func.func @loss() -> tensor<f32> {
    %x = comm.recv over @world ["pp"] peer = -1 : tensor<4xf32>
    %unused = comm.recv over @world ["pp"] peer = -1 : tensor<4xf32>
    %w = loom.get_param @w : tensor<4xf32>
    %y = loom.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    comm.send %y over @world ["pp"] peer = 1 : tensor<4xf32>
    %zero = arith.constant dense<0.0> : tensor<f32>
    return %zero : tensor<f32>
  }
}

// -----

// Tests the gradients of sequence parallelism's comm ops: a comm.shard's
// operand and a comm.reduce_scatter sum's get the all-gather of their
// result's gradient along the same dimension, a comm.unshard's operand its
// part of the result's gradient.
// CHECK-LABEL: module @sequence_parallel_gradients
// CHECK: func.func @loss_and_grad
// CHECK: %[[S:.+]] = comm.reduce_scatter %{{.+}} over @world ["tp"] sum dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: %[[P:.+]] = comm.shard %{{.+}} over @world ["tp"] dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: %[[U:.+]] = comm.unshard %{{.+}} over @world ["tp"] dim = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: comm.shard %{{.+}} over @world ["tp"] dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: comm.all_gather %{{.+}} over @world ["tp"] dim = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: comm.all_gather %{{.+}} over @world ["tp"] dim = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
module @sequence_parallel_gradients {
  comm.mesh @world shape = [1, 2] axes = ["dp", "tp"]
  loom.param @w : tensor<4x2xf32> init ones
  loom.param @v : tensor<4x2xf32> init ones
  func.func @loss() -> tensor<f32> {
    %w = loom.get_param @w : tensor<4x2xf32>
    %v = loom.get_param @v : tensor<4x2xf32>
    %s = comm.reduce_scatter %w over @world ["tp"] sum dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
    %p = comm.shard %v over @world ["tp"] dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
    %m = loom.mul %s, %p : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %u = comm.unshard %m over @world ["tp"] dim = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
    %l = loom.sum %u axes = [0, 1] : tensor<4x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
