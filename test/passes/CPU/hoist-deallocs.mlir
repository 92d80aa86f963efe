// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(loom-hoist-deallocs))" | FileCheck %s

// Tests that each temporary is freed right after the last op that uses it,
// directly or through a view, and that a use nested in a loop counts as a
// use by the loop: %t after the loop that reads its collapsed view, %u
// after the copy, both before the unrelated work that follows.
// CHECK-LABEL: func.func @after_last_use(
// CHECK: %[[T:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[U:.+]] = memref.alloc() : memref<32xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[T]] : memref<4x8xf32>)
// CHECK: %[[V:.+]] = memref.collapse_shape %[[T]]
// CHECK: scf.for
// CHECK: memref.load %[[V]]
// CHECK: memref.store %{{.+}}, %[[U]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: memref.copy %[[U]], %arg0
// CHECK-NEXT: memref.dealloc %[[U]]
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%arg1 : memref<32xf32>)
// CHECK-NEXT: return
func.func @after_last_use(%out: memref<32xf32>, %other: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  %u = memref.alloc() : memref<32xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<4x8xf32>)
  %v = memref.collapse_shape %t [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  scf.for %i = %c0 to %c32 step %c1 {
    %x = memref.load %v[%i] : memref<32xf32>
    memref.store %x, %u[%i] : memref<32xf32>
  }
  memref.copy %u, %out : memref<32xf32> to memref<32xf32>
  linalg.fill ins(%one : f32) outs(%other : memref<32xf32>)
  memref.dealloc %t : memref<4x8xf32>
  memref.dealloc %u : memref<32xf32>
  return
}

// -----

// Tests that a buffer handed to an asynchronous collective by address is
// freed only after the wait that takes the collective's handle, not after
// the start (the runtime reads it until then), while a synchronous call
// (no result) ends its use when it returns.
// CHECK-LABEL: func.func @async_collective(
// CHECK: %[[B:.+]] = memref.alloc() : memref<64xf32>
// CHECK: %[[S:.+]] = memref.alloc() : memref<64xf32>
// CHECK: call @sync_use(%{{.+}})
// CHECK-NEXT: memref.dealloc %[[S]]
// CHECK: %[[H:.+]] = call @start(%{{.+}})
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: call @wait(%[[H]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func private @start(!llvm.ptr) -> i64
func.func private @wait(i64)
func.func private @sync_use(!llvm.ptr)
func.func @async_collective(%other: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %b = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  linalg.fill ins(%one : f32) outs(%b : memref<64xf32>)
  linalg.fill ins(%one : f32) outs(%s : memref<64xf32>)
  %sp = memref.extract_aligned_pointer_as_index %s : memref<64xf32> -> index
  %si = arith.index_cast %sp : index to i64
  %sptr = llvm.inttoptr %si : i64 to !llvm.ptr
  call @sync_use(%sptr) : (!llvm.ptr) -> ()
  %p = memref.extract_aligned_pointer_as_index %b : memref<64xf32> -> index
  %i = arith.index_cast %p : index to i64
  %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
  %h = call @start(%ptr) : (!llvm.ptr) -> i64
  linalg.fill ins(%one : f32) outs(%other : memref<8xf32>)
  call @wait(%h) : (i64) -> ()
  linalg.fill ins(%one : f32) outs(%other : memref<8xf32>)
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %s : memref<64xf32>
  return
}

// -----

// Tests that a buffer a region yields (here the result of an scf.if) is
// used wherever that result is.
// CHECK-LABEL: func.func @yielded(
// CHECK: %[[T:.+]] = memref.alloc() : memref<16xf32>
// CHECK: %[[R:.+]] = scf.if
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg3
// CHECK-NEXT: memref.copy %[[R]], %arg1
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%arg3
// CHECK-NEXT: return
func.func @yielded(%cond: i1, %out: memref<16xf32>, %arg: memref<16xf32>, %other: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<16xf32>)
  %r = scf.if %cond -> memref<16xf32> {
    scf.yield %t : memref<16xf32>
  } else {
    scf.yield %arg : memref<16xf32>
  }
  linalg.fill ins(%one : f32) outs(%other : memref<8xf32>)
  memref.copy %r, %out : memref<16xf32> to memref<16xf32>
  linalg.fill ins(%one : f32) outs(%other : memref<8xf32>)
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// Tests what keeps a free in place: a buffer whose address is stored to
// memory (it could be read back anywhere), and a free of a buffer the
// function did not allocate.
// CHECK-LABEL: func.func @kept(
// CHECK: memref.store %{{.+}}, %arg0[]
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%arg1
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc %arg2
// CHECK-NEXT: return
func.func @kept(%slot: memref<index>, %other: memref<8xf32>, %given: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<64xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<64xf32>)
  %p = memref.extract_aligned_pointer_as_index %t : memref<64xf32> -> index
  memref.store %p, %slot[] : memref<index>
  linalg.fill ins(%one : f32) outs(%other : memref<8xf32>)
  memref.dealloc %t : memref<64xf32>
  memref.dealloc %given : memref<8xf32>
  return
}
