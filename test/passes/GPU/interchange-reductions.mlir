// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-interchange-reductions))" | FileCheck %s
// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-interchange-reductions,convert-linalg-to-parallel-loops))" | FileCheck %s --check-prefix=LOOPS

// Tests that a reduction over the leading dimension becomes a generic with
// the parallel iterator first (the input read transposed), so the loop
// nest is one scf.parallel over the outputs around the reduction loop,
// not a sequential loop around a parallel one.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[IN3:.+]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[OUT3:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @leading(
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<4096x256xf32>) outs(%arg1 : memref<256xf32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: arith.addf %[[X]], %[[ACC]]
// LOOPS-LABEL: func.func @leading(
// LOOPS: scf.parallel (%[[J:.+]]) =
// LOOPS-NEXT: scf.for %[[K:.+]] =
// LOOPS-NEXT: memref.load %arg0[%[[K]], %[[J]]]
// LOOPS-NOT: scf.parallel
// LOOPS: return
func.func @leading(%a: memref<4096x256xf32>, %b: memref<256xf32>) {
  linalg.reduce ins(%a : memref<4096x256xf32>) outs(%b : memref<256xf32>) dimensions = [0]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// Tests that several reduced dimensions keep their order after the
// parallel one (d0 = the output, then the old d0 and d2).
// CHECK-LABEL: func.func @around(
// CHECK: linalg.generic {indexing_maps = [#[[IN3]], #[[OUT3]]], iterator_types = ["parallel", "reduction", "reduction"]}
func.func @around(%a: memref<64x8x256xf32>, %b: memref<8xf32>) {
  linalg.reduce ins(%a : memref<64x8x256xf32>) outs(%b : memref<8xf32>) dimensions = [0, 2]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// Tests that ops whose reductions already come last, and ops without
// reductions, are left as they are.
// CHECK-LABEL: func.func @already_last(
// CHECK: linalg.reduce ins(%arg0 : memref<4096x256xf32>) outs(%arg1 : memref<4096xf32>) dimensions = [1]
// CHECK: linalg.transpose
func.func @already_last(%a: memref<4096x256xf32>, %b: memref<4096xf32>, %t: memref<256x4096xf32>) {
  linalg.reduce ins(%a : memref<4096x256xf32>) outs(%b : memref<4096xf32>) dimensions = [1]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.transpose ins(%a : memref<4096x256xf32>) outs(%t : memref<256x4096xf32>) permutation = [1, 0]
  return
}
