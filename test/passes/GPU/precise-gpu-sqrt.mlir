// RUN: loom-opt %s --pass-pipeline="builtin.module(gpu.module(loom-precise-gpu-sqrt))" | FileCheck %s

// Tests that a kernel's f32 and f64 sqrt become NVVM's correctly rounded
// intrinsic and rsqrt one over it (as the CPU path lowers them), so that
// convert-gpu-to-nvvm calls no libdevice function for either, while other
// math (exp) is left alone.
// CHECK-LABEL: gpu.func @norms(
// CHECK-SAME: %[[X:.+]]: f32, %[[Y:.+]]: f64
// CHECK-NOT: math.sqrt
// CHECK-NOT: math.rsqrt
// CHECK-DAG: %[[S:.+]] = llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%[[X]]) : (f32) -> f32
// CHECK-DAG: %[[R:.+]] = llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%[[X]]) : (f32) -> f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[INV:.+]] = arith.divf %[[ONE]], %[[R]] : f32
// CHECK-DAG: %[[D:.+]] = llvm.call_intrinsic "llvm.nvvm.sqrt.rn.d"(%[[Y]]) : (f64) -> f64
// CHECK-DAG: math.exp %[[X]] : f32
// CHECK: gpu.return
gpu.module @kernels {
  gpu.func @norms(%x: f32, %y: f64, %out: memref<3xf32>, %out64: memref<f64>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %s = math.sqrt %x : f32
    %r = math.rsqrt %x : f32
    %d = math.sqrt %y : f64
    %e = math.exp %x : f32
    memref.store %s, %out[%c0] : memref<3xf32>
    memref.store %r, %out[%c1] : memref<3xf32>
    memref.store %e, %out[%c2] : memref<3xf32>
    memref.store %d, %out64[] : memref<f64>
    gpu.return
  }
}
