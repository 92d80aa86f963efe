// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-gpu-host-to-device | FileCheck %s

// Tests that a scalar the host read (the step) and what it computes from it
// move into the kernel that uses them: the host no longer reads the buffer.
// CHECK-LABEL: func.func @step_scalar(
// CHECK-SAME: %[[STEP:.+]]: memref<i64>, %[[P:.+]]: memref<256xf32>
// CHECK-NOT: memref.load
// CHECK: gpu.launch
// CHECK-NEXT: %[[S:.+]] = memref.load %[[STEP]][] : memref<i64>
// CHECK-NEXT: %[[F:.+]] = arith.sitofp %[[S]] : i64 to f32
// CHECK: arith.mulf %{{.+}}, %[[F]] : f32
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @step_scalar(%step: memref<i64>, %p: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %s = memref.load %step[] : memref<i64>
  %f = arith.sitofp %s : i64 to f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %p[%tx] : memref<256xf32>
    %w = arith.mulf %v, %f : f32
    memref.store %w, %p[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that host code left by the loop mapping (a reduction to a scalar)
// runs as a one-thread kernel, and that its temporary is device memory.
// CHECK-LABEL: func.func @full_reduction(
// CHECK: %[[ACC:.+]] = gpu.alloc () : memref<f32>
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK: memref.store %{{.+}}, %[[ACC]][]
// CHECK: scf.for
// CHECK: memref.store %{{.+}}, %arg1[]
// CHECK: gpu.terminator
// CHECK: gpu.dealloc %[[ACC]]
// CHECK-NOT: memref.
// CHECK: return
func.func @full_reduction(%x: memref<8xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<f32>
  memref.store %zero, %acc[] : memref<f32>
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %x[%i] : memref<8xf32>
    %b = memref.load %acc[] : memref<f32>
    %c = arith.addf %a, %b : f32
    memref.store %c, %acc[] : memref<f32>
  }
  %r = memref.load %acc[] : memref<f32>
  memref.store %r, %out[] : memref<f32>
  memref.dealloc %acc : memref<f32>
  return
}

// -----

// Tests that a free among host accesses (--loom-hoist-deallocs puts each
// after its buffer's last use) does not split them into two kernels, where
// the second would use a value the first computed: it moves after the
// one kernel they become.
// CHECK-LABEL: func.func @free_between_host_accesses(
// CHECK: %[[PART:.+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch
// CHECK: memref.load %[[PART]][]
// CHECK: memref.store %{{.+}}, %arg1[]
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: gpu.dealloc %[[PART]]
// CHECK-NEXT: return
func.func @free_between_host_accesses(%x: memref<f32>, %out: memref<f32>) {
  %part = memref.alloc() : memref<f32>
  %a = memref.load %x[] : memref<f32>
  memref.store %a, %part[] : memref<f32>
  %b = memref.load %part[] : memref<f32>
  memref.dealloc %part : memref<f32>
  %c = arith.addf %a, %b : f32
  memref.store %c, %out[] : memref<f32>
  return
}

// -----

// Tests that a load is not moved past a kernel that may write its buffer:
// the value the host read would differ from the one the kernel would read.
// Such a read cannot be kept on the host either, which is an error.
func.func @dont_sink_past_write(%lr: memref<f32>, %p: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  // expected-error@+1 {{reads or writes a device buffer on the host}}
  %s = memref.load %lr[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %two = arith.constant 2.0 : f32
    memref.store %two, %lr[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %s, %p[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a buffer on the host stack is refused: a kernel cannot read it.
func.func @no_host_stack() {
  // expected-error@+1 {{a host stack buffer cannot hold device data (run the cuda pipeline without promote-buffers-to-stack)}}
  %a = memref.alloca() : memref<4xf32>
  return
}
