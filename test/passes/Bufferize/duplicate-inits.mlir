// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-duplicate-inits))" | FileCheck %s
// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-duplicate-inits),one-shot-bufferize{bufferize-function-boundaries})" | FileCheck %s --check-prefix=BUF

// Tests that two GEMMs sharing one zero-filled destination (as CSE leaves
// them) each get their own empty tensor and fill, just before them, and the
// shared ones go: bufferized, each GEMM fills a buffer of its own in place,
// and no zero buffer is copied.
// CHECK-LABEL: func.func @shared_zero(
// CHECK-NOT: linalg.fill
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[Z1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<4x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : {{.+}}) outs(%[[Z1]] : tensor<4x4xf32>)
// CHECK-NEXT: %[[E2:.+]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[Z2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<4x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg1, %arg0 : {{.+}}) outs(%[[Z2]] : tensor<4x4xf32>)
// BUF-LABEL: func.func @shared_zero(
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_zero(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %x, %y : tensor<4x4xf32>, tensor<4x4xf32>
}

// Tests that a fill that is also read (an input of the add) stays for its
// reader while the destination gets its own copy.
// CHECK-LABEL: func.func @read_and_written(
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[Z2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<4x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg0 : {{.+}}) outs(%[[Z2]] : tensor<4x4xf32>)
// CHECK: linalg.add ins(%{{.+}}, %[[Z]] : {{.+}})
func.func @read_and_written(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %y = linalg.add ins(%x, %init : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
