// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-finalize-comm | FileCheck %s

// Tests that every comm.mesh is removed, 1-D and 2-D, including one in a
// nested module, and that the runtime calls and everything else stay.
// CHECK-LABEL: module @drops_meshes
// CHECK-NOT: comm.
// CHECK: func.func private @loom_rt_all_reduce(i64, !llvm.ptr, i64, i32, i32)
// CHECK-NOT: comm.
// CHECK: module @inner {
// CHECK-NEXT: }
// CHECK-NOT: comm.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[GROUP:.+]]: i64, %[[PTR:.+]]: !llvm.ptr, %[[COUNT:.+]]: i64, %[[DTYPE:.+]]: i32, %[[OP:.+]]: i32)
// CHECK-NEXT: call @loom_rt_all_reduce(%[[GROUP]], %[[PTR]], %[[COUNT]], %[[DTYPE]], %[[OP]])
// CHECK-NEXT: return
// CHECK-NOT: comm.
module @drops_meshes {
  func.func private @loom_rt_all_reduce(i64, !llvm.ptr, i64, i32, i32)
  comm.mesh @world shape = [2] axes = ["dp"]
  comm.mesh @grid shape = [2, 4] axes = ["dp", "tp"]
  module @inner {
    comm.mesh @world shape = [8] axes = ["dp"]
  }
  func.func @step(%group: i64, %ptr: !llvm.ptr, %count: i64, %dtype: i32, %op: i32) {
    call @loom_rt_all_reduce(%group, %ptr, %count, %dtype, %op) : (i64, !llvm.ptr, i64, i32, i32) -> ()
    return
  }
}

// -----

// Tests that a module without a mesh is left as it is.
// CHECK-LABEL: module @no_mesh
// CHECK-NEXT: func.func @id(%[[X:.+]]: memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: return %[[X]]
module @no_mesh {
  func.func @id(%x: memref<4xf32>) -> memref<4xf32> {
    return %x : memref<4xf32>
  }
}

// -----

// Tests that a collective left over (not bufferized) is an error at the
// collective.
module @no_left_over_all_reduce {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @left_over(%t: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{left after bufferization}}
    %r = comm.all_reduce %t over @world ["dp"] sum : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

// Tests that every kind of collective left over is an error.
module @no_left_over_gather {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @left_over(%t: tensor<4xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{left after bufferization}}
    %r = comm.all_gather %t over @world ["dp"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
    return %r : tensor<8xf32>
  }
}

// -----

module @no_left_over_broadcast {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @left_over(%t: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{left after bufferization}}
    %r = comm.broadcast %t over @world ["dp"] root = 1 : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

module @no_left_over_reduce_scatter {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @left_over(%t: tensor<4xf32>) -> tensor<2xf32> {
    // expected-error@+1 {{left after bufferization}}
    %r = comm.reduce_scatter %t over @world ["dp"] max dim = 0 : tensor<4xf32> -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
}
