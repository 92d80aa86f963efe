// RUN: loom-opt %s -split-input-file --loom-bucket-collectives | FileCheck %s
// RUN: loom-opt %s -split-input-file --loom-bucket-collectives="max-mib=0.0001" | FileCheck %s --check-prefix=SMALL

// Tests that consecutive compatible all-reduces become one flat bucket:
// flatten, concat, one all_reduce, split, reshape back (members in program
// order). With a 104-byte limit (max-mib=0.0001) the 128-byte operand stays
// alone and only the two small ones share a bucket.
// CHECK-LABEL: func.func @bucket
// CHECK: %[[A:.+]] = loom.reshape %arg0 : tensor<4x8xf32> -> tensor<32xf32>
// CHECK: %[[B:.+]] = loom.reshape %arg1 : tensor<2x3xf32> -> tensor<6xf32>
// CHECK: %[[CAT:.+]] = loom.concat %[[A]], %[[B]], %arg2 axis = 0 : (tensor<32xf32>, tensor<6xf32>, tensor<5xf32>) -> tensor<43xf32>
// CHECK: %[[RED:.+]] = comm.all_reduce %[[CAT]] over @world ["dp"] mean : tensor<43xf32>
// CHECK: %[[P:.+]]:3 = loom.split %[[RED]] axis = 0 : tensor<43xf32> -> tensor<32xf32>, tensor<6xf32>, tensor<5xf32>
// CHECK-DAG: loom.reshape %[[P]]#0 : tensor<32xf32> -> tensor<4x8xf32>
// CHECK-DAG: loom.reshape %[[P]]#1 : tensor<6xf32> -> tensor<2x3xf32>
// CHECK-NOT: comm.all_reduce
// SMALL-LABEL: func.func @bucket
// SMALL: comm.all_reduce %arg0 over @world ["dp"] mean : tensor<4x8xf32>
// SMALL: loom.concat {{.*}} -> tensor<11xf32>
// SMALL: comm.all_reduce {{.*}} : tensor<11xf32>
comm.mesh @world shape = [2] axes = ["dp"]
func.func @bucket(%a: tensor<4x8xf32>, %b: tensor<2x3xf32>, %c: tensor<5xf32>)
    -> (tensor<4x8xf32>, tensor<2x3xf32>, tensor<5xf32>) {
  %0 = comm.all_reduce %a over @world ["dp"] mean : tensor<4x8xf32>
  %1 = comm.all_reduce %b over @world ["dp"] mean : tensor<2x3xf32>
  %2 = comm.all_reduce %c over @world ["dp"] mean : tensor<5xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<2x3xf32>, tensor<5xf32>
}

// -----

// Tests that all-reduces with different reductions are not fused.
// CHECK-LABEL: func.func @dont_mix_reductions
// CHECK: comm.all_reduce %arg0 over @world ["dp"] mean
// CHECK: comm.all_reduce %arg1 over @world ["dp"] sum
// CHECK-NOT: loom.concat
comm.mesh @world shape = [2] axes = ["dp"]
func.func @dont_mix_reductions(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = comm.all_reduce %a over @world ["dp"] mean : tensor<4xf32>
  %1 = comm.all_reduce %b over @world ["dp"] sum : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a member whose result is used before the next collective
// closes the bucket (the bucket would not dominate that use).
// CHECK-LABEL: func.func @dont_fuse_across_use
// CHECK: %[[R:.+]] = comm.all_reduce %arg0
// CHECK: loom.mul %[[R]], %[[R]]
// CHECK: comm.all_reduce
// CHECK-NOT: loom.concat
comm.mesh @world shape = [2] axes = ["dp"]
func.func @dont_fuse_across_use(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = comm.all_reduce %a over @world ["dp"] mean : tensor<4xf32>
  %1 = loom.mul %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = comm.all_reduce %1 over @world ["dp"] mean : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Tests that consecutive reduce-scatters of flat tensors (ZeRO's gradients)
// share one: each operand, N slices of s, as an N x s matrix, the matrices
// side by side (N x S) and flattened row by row, so rank r receives row r,
// its slice of every member; split back into the members' slices. The
// all-reduce after them is not fused with them.
// CHECK-LABEL: func.func @bucket_reduce_scatters
// CHECK: %[[A:.+]] = loom.reshape %arg0 : tensor<8xf32> -> tensor<2x4xf32>
// CHECK: %[[B:.+]] = loom.reshape %arg1 : tensor<4xf32> -> tensor<2x2xf32>
// CHECK: %[[GRID:.+]] = loom.concat %[[A]], %[[B]] axis = 1 : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
// CHECK: %[[ROWS:.+]] = loom.reshape %[[GRID]] : tensor<2x6xf32> -> tensor<12xf32>
// CHECK: %[[MINE:.+]] = comm.reduce_scatter %[[ROWS]] over @world ["dp"] mean dim = 0 : tensor<12xf32> -> tensor<6xf32>
// CHECK: %[[S:.+]]:2 = loom.split %[[MINE]] axis = 0 : tensor<6xf32> -> tensor<4xf32>, tensor<2xf32>
// CHECK-NOT: comm.reduce_scatter
// CHECK: comm.all_reduce %arg2
// CHECK: return %[[S]]#0, %[[S]]#1
comm.mesh @world shape = [2] axes = ["dp"]
func.func @bucket_reduce_scatters(%a: tensor<8xf32>, %b: tensor<4xf32>, %c: tensor<f32>)
    -> (tensor<4xf32>, tensor<2xf32>, tensor<f32>) {
  %0 = comm.reduce_scatter %a over @world ["dp"] mean dim = 0 : tensor<8xf32> -> tensor<4xf32>
  %2 = comm.reduce_scatter %b over @world ["dp"] mean dim = 0 : tensor<4xf32> -> tensor<2xf32>
  %1 = comm.all_reduce %c over @world ["dp"] sum : tensor<f32>
  return %0, %2, %1 : tensor<4xf32>, tensor<2xf32>, tensor<f32>
}
