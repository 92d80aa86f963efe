// RUN: loom-opt %s -split-input-file --loom-async-collectives | FileCheck %s

// Tests that each synchronous collective becomes a start immediately
// followed by its wait, with the same attributes.
// CHECK-LABEL: func.func @split_all
// CHECK: %[[T0:.+]], %[[F0:.+]] = comm.all_reduce_start %arg0 over @world ["dp"] mean : tensor<8xf32>
// CHECK-NEXT: %[[R0:.+]] = comm.wait %[[T0]], %[[F0]] : tensor<8xf32>
// CHECK: %[[T1:.+]], %[[F1:.+]] = comm.reduce_scatter_start %arg1 over @world ["dp"] sum dim = 0 : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: comm.wait %[[T1]], %[[F1]] : tensor<2x3xf32>
// CHECK: comm.all_gather_start %arg2 over @world ["dp"] dim = 0 : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: comm.wait
// CHECK: comm.broadcast_start %[[R0]] over @world ["dp"] root = 1 : tensor<8xf32>
// CHECK-NEXT: comm.wait
// CHECK-NOT: comm.all_reduce %
comm.mesh @world shape = [2] axes = ["dp"]
func.func @split_all(%a: tensor<8xf32>, %b: tensor<4x3xf32>, %c: tensor<2x3xf32>)
    -> (tensor<8xf32>, tensor<2x3xf32>, tensor<4x3xf32>) {
  %0 = comm.all_reduce %a over @world ["dp"] mean : tensor<8xf32>
  %1 = comm.reduce_scatter %b over @world ["dp"] sum dim = 0 : tensor<4x3xf32> -> tensor<2x3xf32>
  %2 = comm.all_gather %c over @world ["dp"] dim = 0 : tensor<2x3xf32> -> tensor<4x3xf32>
  %3 = comm.broadcast %0 over @world ["dp"] root = 1 : tensor<8xf32>
  return %3, %1, %2 : tensor<8xf32>, tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// Tests that a function without collectives is left alone.
// CHECK-LABEL: func.func @no_collectives
// CHECK-NOT: comm.
func.func @no_collectives(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
