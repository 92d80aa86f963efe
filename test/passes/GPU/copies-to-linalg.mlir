// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-copies-to-linalg))" | FileCheck %s

// Tests that a buffer copy becomes a linalg.copy (a loop nest the GPU
// mapping turns into a kernel), strided views included.
// CHECK-LABEL: func.func @copies(
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%arg0 : memref<8x4xf32>) outs(%arg1 : memref<8x4xf32>)
// CHECK: linalg.copy ins(%{{.+}} : memref<4x4xf32, strided<[4, 1], offset: 4>>) outs(%arg2 : memref<4x4xf32>)
func.func @copies(%a: memref<8x4xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  memref.copy %a, %b : memref<8x4xf32> to memref<8x4xf32>
  %v = memref.subview %a[1, 0] [4, 4] [1, 1] : memref<8x4xf32> to memref<4x4xf32, strided<[4, 1], offset: 4>>
  memref.copy %v, %c : memref<4x4xf32, strided<[4, 1], offset: 4>> to memref<4x4xf32>
  return
}
