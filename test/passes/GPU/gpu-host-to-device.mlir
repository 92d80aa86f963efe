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

// Tests that a load is not moved past a kernel that may write its buffer
// (the kernel would read the new value, not the one the host read): a
// one-thread launch where the load was copies the value into a 0-d buffer,
// which the kernel reads, and which is freed at the end.
// CHECK-LABEL: func.func @dont_sink_past_write(
// CHECK-SAME: %[[LR:.+]]: memref<f32>, %[[P:.+]]: memref<256xf32>
// CHECK: %[[COPY:.+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[V:.+]] = memref.load %[[LR]][] : memref<f32>
// CHECK-NEXT: memref.store %[[V]], %[[COPY]][] : memref<f32>
// CHECK-NEXT: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[LR]][] : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[S:.+]] = memref.load %[[COPY]][] : memref<f32>
// CHECK-NEXT: memref.store %[[S]], %[[P]][%{{.+}}] : memref<256xf32>
// CHECK: gpu.dealloc %[[COPY]]
// CHECK-NEXT: return
func.func @dont_sink_past_write(%lr: memref<f32>, %p: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
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

// Tests that a load is not moved into a kernel of many threads that writes
// its buffer (thread 0 updates the scalar the others scale by: a copied
// load would race with that store). It is read by a one-thread launch
// first, as above. The kernel after it, which only reads the scalar, gets
// the load itself.
// CHECK-LABEL: func.func @dont_sink_into_a_writer(
// CHECK-SAME: %[[S:.+]]: memref<f32>, %[[B:.+]]: memref<256xf32>
// CHECK: %[[COPY:.+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[V:.+]] = memref.load %[[S]][] : memref<f32>
// CHECK-NEXT: memref.store %[[V]], %[[COPY]][] : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[OLD:.+]] = memref.load %[[COPY]][] : memref<f32>
// CHECK: arith.mulf %{{.+}}, %[[OLD]] : f32
// CHECK: memref.store %{{.+}}, %[[S]][] : memref<f32>
// CHECK: gpu.dealloc %[[COPY]]
// CHECK-NEXT: return
func.func @dont_sink_into_a_writer(%s: memref<f32>, %b: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %v = memref.load %s[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %x = memref.load %b[%tx] : memref<256xf32>
    %y = arith.mulf %x, %v : f32
    memref.store %y, %b[%tx] : memref<256xf32>
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %z = arith.addf %v, %v : f32
      memref.store %z, %s[] : memref<f32>
    }
    gpu.terminator
  }
  return
}

// -----

// Tests that a one-thread kernel that writes the buffer still gets the
// load itself: its only thread reads before it writes, as the host did.
// CHECK-LABEL: func.func @sink_into_a_one_thread_writer(
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch
// CHECK-NEXT: %[[V:.+]] = memref.load %arg0[] : memref<f32>
// CHECK-NEXT: %[[W:.+]] = arith.addf %[[V]], %[[V]] : f32
// CHECK-NEXT: memref.store %[[W]], %arg0[] : memref<f32>
func.func @sink_into_a_one_thread_writer(%s: memref<f32>) {
  %c1 = arith.constant 1 : index
  %v = memref.load %s[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %w = arith.addf %v, %v : f32
    memref.store %w, %s[] : memref<f32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a constant global the host uses other than in a kernel (a
// view a kernel reads, its address for cuBLAS) is copied to the device
// where it is fetched, every such use reads the copy, and the copy is
// freed at the end; a kernel that used the global itself reads the copy
// too (the CSE after the pass would merge its get_global into the host's,
// handing it the host's address).
// CHECK-LABEL: func.func @constant_on_the_host(
// CHECK: %[[G:.+]] = memref.get_global @table : memref<64xf32>
// CHECK-NEXT: %[[D:.+]] = gpu.alloc () : memref<64xf32>
// CHECK-NEXT: gpu.memcpy %[[D]], %[[G]] : memref<64xf32>, memref<64xf32>
// CHECK: %[[E:.+]] = memref.expand_shape %[[D]]
// CHECK: gpu.launch
// CHECK: memref.load %[[E]]
// CHECK: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: gpu.launch
// CHECK-NOT: memref.get_global
// CHECK: memref.load %[[D]]
// CHECK: gpu.dealloc %[[D]]
// CHECK-NEXT: return
memref.global "private" constant @table : memref<64xf32> = dense<2.0>
func.func private @gemm(index)
func.func @constant_on_the_host(%a: memref<8x8xf32>, %out: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %g = memref.get_global @table : memref<64xf32>
  %e = memref.expand_shape %g [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %c8 = arith.constant 8 : index
    %i = arith.divui %tx, %c8 : index
    %j = arith.remui %tx, %c8 : index
    %x = memref.load %e[%i, %j] : memref<8x8xf32>
    memref.store %x, %a[%i, %j] : memref<8x8xf32>
    gpu.terminator
  }
  %p = memref.extract_aligned_pointer_as_index %g : memref<64xf32> -> index
  func.call @gemm(%p) : (index) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %x = memref.load %g[%tx] : memref<64xf32>
    memref.store %x, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Tests that a kernel in a host loop gets the device copy of a constant
// fetched outside the loop (sinkInto only moves ops from its own block).
// CHECK-LABEL: func.func @constant_into_a_loop(
// CHECK: %[[G:.+]] = memref.get_global @cst : memref<4xf32>
// CHECK-NEXT: %[[D:.+]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[D]], %[[G]]
// CHECK: scf.for
// CHECK: gpu.launch
// CHECK: memref.load %[[D]]
// CHECK: gpu.dealloc %[[D]]
memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @constant_into_a_loop(%out: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @cst : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %g[%tx] : memref<4xf32>
      memref.store %v, %out[%tx] : memref<4xf32>
      gpu.terminator
    }
  }
  return
}

// -----

// Tests that a constant that leaves the block fetching it is refused: its
// device copy would be freed before that use.
memref.global "private" constant @leaving : memref<4xf32> = dense<1.0>
func.func @constant_leaves_its_block() -> memref<4xf32> {
  %g = memref.get_global @leaving : memref<4xf32>
  // expected-error@+1 {{uses a constant outside the block that fetches it; its device copy cannot be freed there}}
  return %g : memref<4xf32>
}

// -----

// Tests that a mutable global the host uses is refused: a device copy
// made per call would lose what a step writes into it.
memref.global "private" @counter : memref<4xf32> = dense<0.0>
func.func private @use(index)
func.func @mutable_on_the_host() {
  // expected-error@+1 {{a mutable global cannot be used from the host of a cuda artifact (only constant globals are copied to the device)}}
  %g = memref.get_global @counter : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  func.call @use(%p) : (index) -> ()
  return
}

// -----

// Tests that a load the host keeps (its value is needed after the run of
// host code it is in) still gives the value it read when the run writes
// its buffer after it: the one-thread launch stores what it read into a
// 0-d buffer, which the later code reads, not the overwritten buffer.
// CHECK-LABEL: func.func @kept_load_then_written(
// CHECK-SAME: %[[A:.+]]: memref<f32>, %[[OUT:.+]]: memref<f32>
// CHECK: %[[KEPT:.+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[V:.+]] = memref.load %[[A]][] : memref<f32>
// CHECK-NEXT: memref.store %[[V]], %[[KEPT]][] : memref<f32>
// CHECK: memref.store %{{.+}}, %[[A]][] : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[OLD:.+]] = memref.load %[[KEPT]][] : memref<f32>
// CHECK-NEXT: memref.store %[[OLD]], %[[OUT]][] : memref<f32>
// CHECK: gpu.dealloc %[[KEPT]]
func.func @kept_load_then_written(%a: memref<f32>, %out: memref<f32>) {
  %v = memref.load %a[] : memref<f32>
  %w = arith.constant 5.0 : f32
  memref.store %w, %a[] : memref<f32>
  %t = memref.alloc() : memref<f32>
  memref.store %v, %out[] : memref<f32>
  memref.dealloc %t : memref<f32>
  return
}

// -----

// Tests that a run of host code whose value a racing kernel needs stays
// one launch: the host keeps what that value is computed from as well (it
// all moves into the kernel later), and the kernel, which writes the
// loaded buffer with other threads, reads a snapshot taken where the load
// was, after the run wrote it.
// CHECK-LABEL: func.func @run_feeding_a_racing_kernel(
// CHECK-SAME: %[[X:.+]]: memref<f32>, %[[A:.+]]: memref<f32>, %[[Y:.+]]: memref<f32>, %[[P:.+]]: memref<256xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[A]][] : memref<f32>
// CHECK: memref.store %{{.+}}, %[[Y]][] : memref<f32>
// CHECK: gpu.terminator
// CHECK: %[[SNAP:.+]] = gpu.alloc () : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[V:.+]] = memref.load %[[A]][] : memref<f32>
// CHECK-NEXT: memref.store %[[V]], %[[SNAP]][] : memref<f32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[S:.+]] = memref.load %[[SNAP]][] : memref<f32>
// CHECK: memref.store %[[S]], %[[P]][%{{.+}}] : memref<256xf32>
func.func @run_feeding_a_racing_kernel(%x: memref<f32>, %a: memref<f32>, %y: memref<f32>, %p: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %v0 = memref.load %x[] : memref<f32>
  %b = arith.addf %v0, %v0 : f32
  memref.store %b, %a[] : memref<f32>
  %v = memref.load %a[] : memref<f32>
  %c = arith.addf %b, %v : f32
  memref.store %c, %y[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %v, %p[%tx] : memref<256xf32>
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %zero, %a[] : memref<f32>
    }
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
