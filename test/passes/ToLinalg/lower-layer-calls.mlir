// RUN: loom-opt %s -split-input-file -loom-lower-layer-calls | FileCheck %s

// Tests that an outlined function's tensor arguments become buffers read
// through restrict to_tensor, its results buffers after the others that
// it writes, and that its buffer and scalar arguments stay; that the call
// passes its tensors' buffers read-only, allocates one buffer per result
// and reads the results from them; and that other functions and calls are
// left alone.
// CHECK-LABEL: module @lowered
// CHECK: func.func private @entry_repeat0(%[[X:.+]]: memref<4xf32>, %[[S:.+]]: f32, %[[BUF:.+]]: memref<4xf32>, %[[OUT0:.+]]: memref<4xf32>, %[[OUT1:.+]]: memref<2xf32>)
// CHECK-NEXT: %[[XT:.+]] = bufferization.to_tensor %[[X]] restrict : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT: %[[A:.+]] = arith.addf %[[XT]], %[[XT]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in restrict writable %[[BUF]]
// CHECK-NEXT: %[[E:.+]] = tensor.extract_slice %[[A]][0] [2] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[A]] in restrict writable %[[OUT0]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[E]] in restrict writable %[[OUT1]]
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK: func.func private @plain(%{{.+}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: func.func @entry(%[[IN:.+]]: tensor<4xf32>, %[[F:.+]]: f32, %[[P:.+]]: memref<4xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[INB:.+]] = bufferization.to_buffer %[[IN]] read_only : tensor<4xf32> to memref<4xf32>
// CHECK-NEXT: %[[O0:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[O1:.+]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT: call @entry_repeat0(%[[INB]], %[[F]], %[[P]], %[[O0]], %[[O1]]) {no_inline} : (memref<4xf32>, f32, memref<4xf32>, memref<4xf32>, memref<2xf32>) -> ()
// CHECK-NEXT: %[[R0:.+]] = bufferization.to_tensor %[[O0]] restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT: %[[R1:.+]] = bufferization.to_tensor %[[O1]] restrict writable : memref<2xf32> to tensor<2xf32>
// CHECK-NEXT: %[[Q:.+]] = call @plain(%[[R0]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[R1]]
module @lowered {
  func.func private @entry_repeat0(%x: tensor<4xf32>, %s: f32, %buf: memref<4xf32>) -> (tensor<4xf32>, tensor<2xf32>) attributes {loom.outlined} {
    %a = arith.addf %x, %x : tensor<4xf32>
    bufferization.materialize_in_destination %a in restrict writable %buf : (tensor<4xf32>, memref<4xf32>) -> ()
    %e = tensor.extract_slice %a[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
    return %a, %e : tensor<4xf32>, tensor<2xf32>
  }
  func.func private @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @entry(%in: tensor<4xf32>, %f: f32, %p: memref<4xf32>) -> tensor<2xf32> {
    %r:2 = call @entry_repeat0(%in, %f, %p) {no_inline} : (tensor<4xf32>, f32, memref<4xf32>) -> (tensor<4xf32>, tensor<2xf32>)
    %q = call @plain(%r#0) : (tensor<4xf32>) -> tensor<4xf32>
    return %r#1 : tensor<2xf32>
  }
}
