// RUN: loom-opt %s --pass-pipeline='builtin.module(func.func(loom-sink-dynamic-views))' | FileCheck %s
// RUN: loom-opt %s --pass-pipeline='builtin.module(func.func(loom-sink-dynamic-views),gpu-kernel-outlining)' | FileCheck %s --check-prefix=OUTLINED

// Tests that a view with a runtime offset used in a launch is rebuilt at
// the top of the launch body from its source and offset, while a view with
// a static layout stays outside (a bare pointer can carry it), and that
// the outlined kernel then takes the source and the offset.
// CHECK-LABEL: func.func @slice_in_kernel
// CHECK-SAME: (%[[P:.+]]: memref<8xf32>, %[[OUT:.+]]: memref<4xf32>, %[[OFF:.+]]: index)
// CHECK: %[[STATIC:.+]] = memref.subview %[[P]][4] [4] [1]
// CHECK: gpu.launch
// CHECK-NEXT: %[[VIEW:.+]] = memref.subview %[[P]][%[[OFF]]] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK: memref.load %[[VIEW]]
// CHECK: memref.load %[[STATIC]]
// OUTLINED: gpu.func @slice_in_kernel_kernel(%{{.+}}: memref<8xf32>, %{{.+}}: index,
// OUTLINED-NOT: offset: ?>>,
func.func @slice_in_kernel(%p: memref<8xf32>, %out: memref<4xf32>, %off: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %view = memref.subview %p[%off] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  %static = memref.subview %p[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %a = memref.load %view[%tx] : memref<4xf32, strided<[1], offset: ?>>
    %b = memref.load %static[%tx] : memref<4xf32, strided<[1], offset: 4>>
    %s = arith.addf %a, %b : f32
    memref.store %s, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
