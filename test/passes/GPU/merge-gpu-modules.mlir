// RUN: loom-opt %s -split-input-file -loom-merge-gpu-modules | FileCheck %s

// Tests that one-kernel modules (as gpu-kernel-outlining makes them) become
// one module @loom_kernels whose kernels carry their old modules' names,
// that launches point at them, that a constant two modules both define is
// kept once per kernel (the second renamed, with its kernel's uses), and
// that a module holding two kernels stays as it is.
// CHECK-LABEL: module @merge
// CHECK: gpu.module @loom_kernels {
// CHECK: memref.global "private" constant @__constant_xf32 : memref<f32> = dense<1.000000e+00>
// CHECK: gpu.func @f_kernel(%{{.+}}: memref<f32>) kernel {
// CHECK: memref.get_global @__constant_xf32 : memref<f32>
// CHECK: memref.global "private" constant @[[RENAMED:__constant_xf32_[0-9]+]] : memref<f32> = dense<2.000000e+00>
// CHECK: gpu.func @f_kernel_0(%{{.+}}: memref<f32>) kernel {
// CHECK: memref.get_global @[[RENAMED]] : memref<f32>
// CHECK: }
// CHECK-NOT: gpu.module @f_kernel
// CHECK: gpu.module @two {
// CHECK: gpu.func @a(
// CHECK: gpu.func @b(
// CHECK: func.func @f(
// CHECK: gpu.launch_func @loom_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @loom_kernels::@f_kernel_0 blocks
// CHECK: gpu.launch_func @two::@a blocks
module @merge attributes {gpu.container_module} {
  gpu.module @f_kernel {
    gpu.func @f_kernel(%m: memref<f32>) kernel {
      %c = memref.get_global @__constant_xf32 : memref<f32>
      %v = memref.load %c[] : memref<f32>
      memref.store %v, %m[] : memref<f32>
      gpu.return
    }
    memref.global "private" constant @__constant_xf32 : memref<f32> = dense<1.0>
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%m: memref<f32>) kernel {
      %c = memref.get_global @__constant_xf32 : memref<f32>
      %v = memref.load %c[] : memref<f32>
      memref.store %v, %m[] : memref<f32>
      gpu.return
    }
    memref.global "private" constant @__constant_xf32 : memref<f32> = dense<2.0>
  }
  gpu.module @two {
    gpu.func @a(%m: memref<f32>) kernel {
      gpu.return
    }
    gpu.func @b(%m: memref<f32>) kernel {
      gpu.return
    }
  }
  func.func @f(%m: memref<f32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
    gpu.launch_func @two::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
    return
  }
}

// -----

// Tests that a single module, or modules whose attributes differ (other
// targets), are left alone.
// CHECK-LABEL: module @differ
// CHECK-NOT: loom_kernels
// CHECK: gpu.module @k1 [#nvvm.target<chip = "sm_90">]
// CHECK: gpu.module @k2 [#nvvm.target<chip = "sm_80">]
module @differ attributes {gpu.container_module} {
  gpu.module @k1 [#nvvm.target<chip = "sm_90">] {
    gpu.func @k1() kernel {
      gpu.return
    }
  }
  gpu.module @k2 [#nvvm.target<chip = "sm_80">] {
    gpu.func @k2() kernel {
      gpu.return
    }
  }
}

// -----

// Tests that a kernel equal to one already merged but for its name (the
// same nest in another layer) is not merged again: its launch goes to the
// first; that a constant with the same name and value is shared, so the
// kernels reading it stay equal; and that a kernel that differs (a
// constant of another value, renamed) is merged on its own.
// CHECK-LABEL: module @dedup
// CHECK: gpu.module @loom_kernels {
// CHECK-COUNT-1: memref.global "private" constant @__constant_xf32 : memref<f32> = dense<1.000000e+00>
// CHECK: gpu.func @layer0(
// CHECK: memref.global "private" constant @[[OTHER:__constant_xf32_[0-9]+]] : memref<f32> = dense<3.000000e+00>
// CHECK: gpu.func @other(
// CHECK-NOT: gpu.func
// CHECK: func.func @g(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: gpu.launch_func @loom_kernels::@layer0 blocks
// CHECK-SAME: args(%arg0 : memref<f32>)
// CHECK-NEXT: gpu.launch_func @loom_kernels::@layer0 blocks
// CHECK-SAME: args(%arg1 : memref<f32>)
// CHECK-NEXT: gpu.launch_func @loom_kernels::@other blocks
module @dedup attributes {gpu.container_module} {
  gpu.module @layer0 {
    gpu.func @layer0(%m: memref<f32>) kernel {
      %c = memref.get_global @__constant_xf32 : memref<f32>
      %v = memref.load %c[] : memref<f32>
      memref.store %v, %m[] : memref<f32>
      gpu.return
    }
    memref.global "private" constant @__constant_xf32 : memref<f32> = dense<1.0>
  }
  gpu.module @layer1 {
    gpu.func @layer1(%m: memref<f32>) kernel {
      %c = memref.get_global @__constant_xf32 : memref<f32>
      %v = memref.load %c[] : memref<f32>
      memref.store %v, %m[] : memref<f32>
      gpu.return
    }
    memref.global "private" constant @__constant_xf32 : memref<f32> = dense<1.0>
  }
  gpu.module @other {
    gpu.func @other(%m: memref<f32>) kernel {
      %c = memref.get_global @__constant_xf32 : memref<f32>
      %v = memref.load %c[] : memref<f32>
      memref.store %v, %m[] : memref<f32>
      gpu.return
    }
    memref.global "private" constant @__constant_xf32 : memref<f32> = dense<3.0>
  }
  func.func @g(%a: memref<f32>, %b: memref<f32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @layer0::@layer0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<f32>)
    gpu.launch_func @layer1::@layer1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<f32>)
    gpu.launch_func @other::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<f32>)
    return
  }
}
