// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(loom-outline-segments{ops=2})" | FileCheck %s
// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(loom-outline-segments{ops=2})" --mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// Tests that an entry is cut into runs of two ops with effects, each a
// private noinline function called in order; that the stack buffer moves
// ahead of every run and the arena's allocation stays in the entry, both
// passed to the runs that use them; that the arena slice and its
// descriptor (ops without effects) are rebuilt in each run that uses them
// and never passed; and that the loaded scalar a later run needs is
// returned by the run that loads it.
// CHECK-LABEL: func.func private @step_part_0(
// CHECK-SAME: %[[ARENA:[^:]+]]: memref<128xi8>, %[[P:[^:]+]]: memref<16xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[S:.+]] = call @loom_rt_arena_slice(
// CHECK: %[[BUF:.+]] = builtin.unrealized_conversion_cast %[[S]] : !llvm.ptr to memref<16xf32>
// CHECK-NEXT: call @nest(%[[BUF]])
// CHECK-NEXT: call @nest(%[[P]])
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @step_part_1(
// CHECK-SAME: %{{[^:]+}}: memref<128xi8>, %[[STACK:[^:]+]]: memref<4xf32>) -> f32
// CHECK: call @loom_rt_arena_slice(
// CHECK: %[[V:.+]] = memref.load
// CHECK-NEXT: memref.store %[[V]], %[[STACK]]
// CHECK-NEXT: return %[[V]] : f32
// CHECK-LABEL: func.func private @step_part_2(
// CHECK: call @loom_rt_arena_slice(
// CHECK-LABEL: func.func private @step_part_3(
// CHECK-SAME: %[[ARG:[^:]+]]: f32, %[[A2:[^:]+]]: memref<128xi8>)
// CHECK-NEXT: call @consume(%[[ARG]])
// CHECK-NEXT: memref.dealloc %[[A2]]
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[ENTRYP:[^:]+]]: memref<16xf32>)
// CHECK-NEXT: %[[ALLOCA:.+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT: %[[ALLOC:.+]] = memref.alloc() : memref<128xi8>
// CHECK-NEXT: call @step_part_0(%[[ALLOC]], %[[ENTRYP]])
// CHECK-NEXT: %[[R:.+]] = call @step_part_1(%[[ALLOC]], %[[ALLOCA]]) : (memref<128xi8>, memref<4xf32>) -> f32
// CHECK-NEXT: call @step_part_2(%[[ALLOC]], %[[ENTRYP]])
// CHECK-NEXT: call @step_part_3(%[[R]], %[[ALLOC]])
// CHECK-NEXT: return
// STATS: OutlineSegmentsPass
// STATS: 0 num-kept
// STATS: num-segments
func.func private @nest(memref<16xf32>)
func.func private @loom_rt_arena_slice(!llvm.ptr, i64) -> !llvm.ptr
func.func private @consume(f32)
func.func @step(%p: memref<16xf32>) attributes {loom.entry = "step"} {
  %arena = memref.alloc() : memref<128xi8>
  %idx = memref.extract_aligned_pointer_as_index %arena : memref<128xi8> -> index
  %i64 = arith.index_cast %idx : index to i64
  %base = llvm.inttoptr %i64 : i64 to !llvm.ptr
  %c0 = arith.constant 0 : i64
  %s = call @loom_rt_arena_slice(%base, %c0) : (!llvm.ptr, i64) -> !llvm.ptr
  %buf = builtin.unrealized_conversion_cast %s : !llvm.ptr to memref<16xf32>
  call @nest(%buf) : (memref<16xf32>) -> ()
  call @nest(%p) : (memref<16xf32>) -> ()
  %stack = memref.alloca() : memref<4xf32>
  %i0 = arith.constant 0 : index
  %v = memref.load %buf[%i0] : memref<16xf32>
  memref.store %v, %stack[%i0] : memref<4xf32>
  call @nest(%buf) : (memref<16xf32>) -> ()
  call @nest(%p) : (memref<16xf32>) -> ()
  call @consume(%v) : (f32) -> ()
  memref.dealloc %arena : memref<128xi8>
  return
}

// -----

// Tests that an entry whose runs would have to pass a memref of dynamic
// shape (made by a call, used two runs later) is left whole, and so is a
// function that is not an entry.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT: _part_
// CHECK: call @make
// CHECK: call @use
// CHECK-LABEL: func.func @helper(
// CHECK-NOT: _part_
// STATS: OutlineSegmentsPass
// STATS: 1 num-kept
// STATS: 0 num-segments
func.func private @make() -> memref<?xf32>
func.func private @use(memref<?xf32>)
func.func private @tick()
func.func @dynamic() attributes {loom.entry = "dynamic"} {
  %m = call @make() : () -> memref<?xf32>
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @use(%m) : (memref<?xf32>) -> ()
  return
}
func.func @helper() {
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  call @tick() : () -> ()
  return
}
