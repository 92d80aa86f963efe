// RUN: loom-opt %s --split-input-file --loom-roll-layer-calls=min-gain=2 | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-roll-layer-calls=min-gain=2 --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: not loom-opt %s --split-input-file --loom-roll-layer-calls=min-count=1 2>&1 | FileCheck %s --check-prefix=BAD

// Four layers: each loads its weight's address from the runtime's array
// (one slot further each), writes its output to an arena slice (32 bytes
// further each) and to a stack buffer the next layer reads. They become
// one loop: the weight's slot and the slice's offset computed from the
// index, the stack buffer carried, every layer's stack buffer a slice of
// one buffer (a later op uses the second layer's), the last one's the
// loop's result.

// CHECK-LABEL: func.func @loom_step
// CHECK:      %[[BYTES:.*]] = llvm.mlir.constant(256 : i64) : i64
// CHECK-NEXT: %[[STACK:.*]] = llvm.alloca %[[BYTES]] x i8 {alignment = 64 : i64}
// CHECK:      %[[IN:.*]] = memref.alloca() : memref<8xf32>
// CHECK:      %[[C4:.*]] = arith.constant 4 : index
// CHECK:      %[[LOOP:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[C4]] step %{{.*}} iter_args(%[[X:.*]] = %[[IN]]) -> (memref<8xf32>) {
// CHECK:        llvm.getelementptr %[[STACK]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:        %[[H:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<8xf32>
// CHECK:        %[[SLOT:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK:        %[[GEP:.*]] = llvm.getelementptr %arg0[%[[SLOT]]] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
// CHECK:        llvm.load %[[GEP]] : !llvm.ptr -> !llvm.ptr
// CHECK:        %[[OFF:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK:        call @loom_rt_arena_slice(%{{.*}}, %[[OFF]])
// CHECK:        call @layer(%{{.*}}, %[[X]], %{{.*}}, %[[H]])
// CHECK-NEXT:   scf.yield %[[H]] : memref<8xf32>
// CHECK-NEXT: }
// CHECK-NOT:  call @layer
// CHECK:      %[[SECOND:.*]] = llvm.getelementptr %[[STACK]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:      %[[H2:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<8xf32>
// CHECK:      call @use(%[[H2]], %[[LOOP]])

// STATS: RollLayerCallsPass
// STATS:  4 num-iterations
// STATS:  1 num-loops

// BAD: loom-roll-layer-calls: min-count must be at least 2, not 1

func.func private @loom_rt_arena_slice(!llvm.ptr, i64) -> !llvm.ptr
func.func private @layer(memref<4xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>)
func.func private @use(memref<8xf32>, memref<8xf32>)

func.func @loom_step(%args: !llvm.ptr) attributes {loom.abi = []} {
  %c32 = arith.constant 32 : i64
  %c64 = arith.constant 64 : i64
  %c96 = arith.constant 96 : i64
  %c128 = arith.constant 128 : i64
  %in = memref.alloca() : memref<8xf32>
  %ga = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %arena = llvm.load %ga : !llvm.ptr -> !llvm.ptr

  %g1 = llvm.getelementptr %args[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %p1 = llvm.load %g1 : !llvm.ptr -> !llvm.ptr
  %w1 = builtin.unrealized_conversion_cast %p1 : !llvm.ptr to memref<4xf32>
  %s1 = call @loom_rt_arena_slice(%arena, %c32) : (!llvm.ptr, i64) -> !llvm.ptr
  %t1 = builtin.unrealized_conversion_cast %s1 : !llvm.ptr to memref<8xf32>
  %h1 = memref.alloca() : memref<8xf32>
  call @layer(%w1, %in, %t1, %h1) : (memref<4xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()

  %g2 = llvm.getelementptr %args[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %p2 = llvm.load %g2 : !llvm.ptr -> !llvm.ptr
  %w2 = builtin.unrealized_conversion_cast %p2 : !llvm.ptr to memref<4xf32>
  %s2 = call @loom_rt_arena_slice(%arena, %c64) : (!llvm.ptr, i64) -> !llvm.ptr
  %t2 = builtin.unrealized_conversion_cast %s2 : !llvm.ptr to memref<8xf32>
  %h2 = memref.alloca() : memref<8xf32>
  call @layer(%w2, %h1, %t2, %h2) : (memref<4xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()

  %g3 = llvm.getelementptr %args[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %p3 = llvm.load %g3 : !llvm.ptr -> !llvm.ptr
  %w3 = builtin.unrealized_conversion_cast %p3 : !llvm.ptr to memref<4xf32>
  %s3 = call @loom_rt_arena_slice(%arena, %c96) : (!llvm.ptr, i64) -> !llvm.ptr
  %t3 = builtin.unrealized_conversion_cast %s3 : !llvm.ptr to memref<8xf32>
  %h3 = memref.alloca() : memref<8xf32>
  call @layer(%w3, %h2, %t3, %h3) : (memref<4xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()

  %g4 = llvm.getelementptr %args[4] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %p4 = llvm.load %g4 : !llvm.ptr -> !llvm.ptr
  %w4 = builtin.unrealized_conversion_cast %p4 : !llvm.ptr to memref<4xf32>
  %s4 = call @loom_rt_arena_slice(%arena, %c128) : (!llvm.ptr, i64) -> !llvm.ptr
  %t4 = builtin.unrealized_conversion_cast %s4 : !llvm.ptr to memref<8xf32>
  %h4 = memref.alloca() : memref<8xf32>
  call @layer(%w4, %h3, %t4, %h4) : (memref<4xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()

  call @use(%h2, %h4) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// The slices' offsets do not step evenly in any three layers in a row
// (0, 32, 96, 128, 224): nothing changes.

// CHECK-LABEL: func.func @loom_uneven
// CHECK-NOT:   scf.for
// CHECK-COUNT-4: call @layer

func.func private @loom_rt_arena_slice(!llvm.ptr, i64) -> !llvm.ptr
func.func private @layer(memref<8xf32>, memref<8xf32>)

func.func @loom_uneven(%args: !llvm.ptr) attributes {loom.abi = []} {
  %c0 = arith.constant 0 : i64
  %c32 = arith.constant 32 : i64
  %c96 = arith.constant 96 : i64
  %c128 = arith.constant 128 : i64
  %c224 = arith.constant 224 : i64
  %ga = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %arena = llvm.load %ga : !llvm.ptr -> !llvm.ptr
  %s0 = call @loom_rt_arena_slice(%arena, %c0) : (!llvm.ptr, i64) -> !llvm.ptr
  %t0 = builtin.unrealized_conversion_cast %s0 : !llvm.ptr to memref<8xf32>
  %s1 = call @loom_rt_arena_slice(%arena, %c32) : (!llvm.ptr, i64) -> !llvm.ptr
  %t1 = builtin.unrealized_conversion_cast %s1 : !llvm.ptr to memref<8xf32>
  call @layer(%t0, %t1) : (memref<8xf32>, memref<8xf32>) -> ()
  %s2 = call @loom_rt_arena_slice(%arena, %c96) : (!llvm.ptr, i64) -> !llvm.ptr
  %t2 = builtin.unrealized_conversion_cast %s2 : !llvm.ptr to memref<8xf32>
  call @layer(%t1, %t2) : (memref<8xf32>, memref<8xf32>) -> ()
  %s3 = call @loom_rt_arena_slice(%arena, %c128) : (!llvm.ptr, i64) -> !llvm.ptr
  %t3 = builtin.unrealized_conversion_cast %s3 : !llvm.ptr to memref<8xf32>
  call @layer(%t2, %t3) : (memref<8xf32>, memref<8xf32>) -> ()
  %s4 = call @loom_rt_arena_slice(%arena, %c224) : (!llvm.ptr, i64) -> !llvm.ptr
  %t4 = builtin.unrealized_conversion_cast %s4 : !llvm.ptr to memref<8xf32>
  call @layer(%t3, %t4) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}
