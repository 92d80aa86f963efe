// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(loom-plan-buffers)" | FileCheck %s
// RUN: not loom-opt %s -split-input-file --pass-pipeline="builtin.module(loom-plan-buffers{alignment=48})" 2>&1 | FileCheck %s --check-prefix=ALIGN

// ALIGN: error: loom-plan-buffers: alignment must be a power of 2, not 48

// Tests that buffers whose lifetimes do not overlap share bytes, and that
// buffers that live together do not: %a (4096 bytes) is freed before %c is
// allocated, so %c (1024 bytes) sits at %a's offset 0; %b lives with both,
// so it goes after the larger %a, at 4096. Each buffer is the address the
// runtime returns for its offset, as a memref descriptor. The arena is
// allocated first, freed last, and every free of a placed buffer is gone.
// CHECK-LABEL: func.func @reuse(
// CHECK-NEXT: %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<6144xi8>
// CHECK: %[[BASE:.+]] = llvm.inttoptr
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: %[[A:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<1024xf32>
// CHECK: arith.constant 4096 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: %[[B:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<256x2xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[A]] : memref<1024xf32>)
// CHECK: memref.copy %[[A]], %arg0
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: %[[C:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<256xf32>
// CHECK: memref.copy %[[C]], %arg1
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[ARENA]] : memref<6144xi8>
// CHECK-NEXT: return
func.func @reuse(%out: memref<1024xf32>, %out2: memref<256xf32>, %out3: memref<256x2xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<1024xf32>
  %b = memref.alloc() : memref<256x2xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<1024xf32>)
  linalg.fill ins(%one : f32) outs(%b : memref<256x2xf32>)
  memref.copy %a, %out : memref<1024xf32> to memref<1024xf32>
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() : memref<256xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<256xf32>)
  memref.copy %c, %out2 : memref<256xf32> to memref<256xf32>
  memref.dealloc %c : memref<256xf32>
  memref.copy %b, %out3 : memref<256x2xf32> to memref<256x2xf32>
  memref.dealloc %b : memref<256x2xf32>
  return
}

// -----

// Tests the greedy-by-size layout: sizes round up to the alignment, larger
// buffers are placed first (equal sizes in block order), each at the
// lowest offset where it overlaps none of the buffers it lives with. %a
// (256 bytes) is at 0, %b (192) after it; %d (192) lives with %b but not
// %a, so it takes the space below %b; %c (128) lives with both, and the
// 64 bytes between them are too few: it goes after %b. Then %e and %f (100
// i8 and 40 bf16 elements: 128 bytes each) reuse the start.
// CHECK-LABEL: func.func @gaps(
// CHECK-NEXT: %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<576xi8>
// CHECK: %[[BASE:.+]] = llvm.inttoptr
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<64xf32>
// CHECK: arith.constant 256 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<48xf32>
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<48xf32>
// CHECK: arith.constant 448 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<32xf32>
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<100xi8>
// CHECK: arith.constant 128 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<40xbf16>
func.func @gaps(%x: memref<64xf32>, %y: memref<48xf32>, %z: memref<32xf32>, %u: memref<100xi8>, %v: memref<40xbf16>) {
  %a = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<48xf32>
  memref.copy %a, %x : memref<64xf32> to memref<64xf32>
  memref.dealloc %a : memref<64xf32>
  %d = memref.alloc() : memref<48xf32>
  %c = memref.alloc() : memref<32xf32>
  memref.copy %c, %z : memref<32xf32> to memref<32xf32>
  memref.copy %d, %y : memref<48xf32> to memref<48xf32>
  memref.dealloc %c : memref<32xf32>
  memref.dealloc %d : memref<48xf32>
  memref.copy %b, %y : memref<48xf32> to memref<48xf32>
  memref.dealloc %b : memref<48xf32>
  %e = memref.alloc() : memref<100xi8>
  %f = memref.alloc() : memref<40xbf16>
  memref.copy %e, %u : memref<100xi8> to memref<100xi8>
  memref.copy %f, %v : memref<40xbf16> to memref<40xbf16>
  memref.dealloc %e : memref<100xi8>
  memref.dealloc %f : memref<40xbf16>
  return
}

// -----

// Tests what keeps its own allocation: a dynamic shape, i1 elements (not
// whole bytes), an allocation in a loop, one freed in a nested region, one
// never freed here (returned), one aligned beyond the arena's alignment;
// and that one plannable buffer alone is left as it is.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: loom_rt_arena_slice
// CHECK-NOT: xi8>
// CHECK: return
func.func @kept(%n: index, %cond: i1) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dyn = memref.alloc(%n) : memref<?xf32>
  %bits = memref.alloc() : memref<64xi1>
  scf.for %i = %c0 to %n step %c1 {
    %inner = memref.alloc() : memref<8xf32>
    memref.dealloc %inner : memref<8xf32>
  }
  %cond_freed = memref.alloc() : memref<8xf32>
  scf.if %cond {
    memref.dealloc %cond_freed : memref<8xf32>
  }
  %returned = memref.alloc() : memref<8xf32>
  %wide = memref.alloc() {alignment = 128 : i64} : memref<8xf32>
  %alone = memref.alloc() : memref<8xf32>
  memref.dealloc %alone : memref<8xf32>
  memref.dealloc %wide : memref<8xf32>
  memref.dealloc %dyn : memref<?xf32>
  memref.dealloc %bits : memref<64xi1>
  return %returned : memref<8xf32>
}

// -----

// Tests that a free through a view counts as the buffer's free, and that a
// buffer used inside a loop lives until its free after the loop (the two
// buffers do not share bytes).
// CHECK-LABEL: func.func @views_and_loops(
// CHECK-NEXT: %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CHECK: %[[BASE:.+]] = llvm.inttoptr
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<4x8xf32>
// CHECK: arith.constant 128 : i64
// CHECK-NEXT: call @loom_rt_arena_slice(%[[BASE]], %{{.+}})
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<32xf32>
// CHECK-NOT: memref.dealloc %{{.+}} : memref<32xf32>
// CHECK: memref.dealloc %[[ARENA]]
func.func @views_and_loops(%out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %t = memref.alloc() : memref<4x8xf32>
  %u = memref.alloc() : memref<32xf32>
  %v = memref.collapse_shape %t [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  scf.for %i = %c0 to %c32 step %c1 {
    %x = memref.load %v[%i] : memref<32xf32>
    memref.store %x, %u[%i] : memref<32xf32>
  }
  memref.dealloc %v : memref<32xf32>
  memref.copy %u, %out : memref<32xf32> to memref<32xf32>
  memref.dealloc %u : memref<32xf32>
  return
}

// -----

// Tests that a function of a model's repeated layers (loom.outlined) is
// planned before its caller and takes its arena as a last argument: each
// call allocates it just around itself, and the caller's plan places it
// with the caller's own buffers (here at %keep's side, as both live
// during the call; the 4096-byte scratch and the 1024-byte %keep make an
// arena of 5120 bytes, not two arenas).
// CHECK-LABEL: module @arena_from_callers
// CHECK: func.func private @layer(%{{.+}}: memref<256xf32>, %[[SCRATCH:.+]]: memref<4096xi8>)
// CHECK-NOT: memref.alloc
// CHECK: llvm.inttoptr
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK: func.func @step(%[[OUT:.+]]: memref<256xf32>)
// CHECK-NEXT: memref.alloc() {alignment = 64 : i64} : memref<5120xi8>
// CHECK-COUNT-2: builtin.unrealized_conversion_cast %{{.+}} to memref
// CHECK: call @layer(%[[OUT]], %{{.+}}) : (memref<256xf32>, memref<4096xi8>) -> ()
// CHECK-NOT: memref.alloc
module @arena_from_callers {
  func.func private @layer(%out: memref<256xf32>) attributes {loom.outlined} {
    %one = arith.constant 1.0 : f32
    %a = memref.alloc() : memref<512xf32>
    %b = memref.alloc() : memref<512xf32>
    linalg.fill ins(%one : f32) outs(%a : memref<512xf32>)
    linalg.fill ins(%one : f32) outs(%b : memref<512xf32>)
    %s = memref.subview %a[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
    memref.copy %s, %out : memref<256xf32, strided<[1]>> to memref<256xf32>
    memref.dealloc %a : memref<512xf32>
    memref.dealloc %b : memref<512xf32>
    return
  }
  func.func @step(%out: memref<256xf32>) {
    %one = arith.constant 1.0 : f32
    %keep = memref.alloc() : memref<256xf32>
    linalg.fill ins(%one : f32) outs(%keep : memref<256xf32>)
    call @layer(%out) : (memref<256xf32>) -> ()
    memref.copy %keep, %out : memref<256xf32> to memref<256xf32>
    memref.dealloc %keep : memref<256xf32>
    return
  }
}
