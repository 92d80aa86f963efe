// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-collapse-parallel-loops,canonicalize))" | FileCheck %s
// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-collapse-parallel-loops))" | FileCheck %s --check-prefix=NEST

// The @offsets loop's first index (below).
// CHECK: #[[MAP:.+]] = affine_map<(d0) -> (d0 * 2 + 2)>

// Tests that a 3-d parallel loop becomes one loop over all 16*8*256
// iterations, the last index varying fastest (remainder by 256 first), so
// that consecutive threads take consecutive elements of a row-major buffer.
// CHECK-LABEL: func.func @three_dims(
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[N:.+]] = arith.constant 32768 : index
// CHECK: scf.parallel (%[[I:.+]]) = (%[[C0]]) to (%[[N]]) step (%[[C1]]) {
// CHECK-NEXT: %[[D2:.+]] = arith.remsi %[[I]], %[[C256]]
// CHECK-NEXT: %[[Q:.+]] = arith.divsi %[[I]], %[[C256]]
// CHECK-NEXT: %[[D1:.+]] = arith.remsi %[[Q]], %[[C8]]
// CHECK-NEXT: %[[D0:.+]] = arith.divsi %[[Q]], %[[C8]]
// CHECK-NEXT: memref.load %arg0[%[[D0]], %[[D1]], %[[D2]]]
func.func @three_dims(%a: memref<16x8x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c16, %c8, %c256) step (%c1, %c1, %c1) {
    %x = memref.load %a[%i, %j, %k] : memref<16x8x256xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i, %j, %k] : memref<16x8x256xf32>
    scf.reduce
  }
  return
}

// Tests that only outermost loops are collapsed (a nested parallel loop is
// left to the loop mapping) and one-dimensional loops stay as they are.
// (Without canonicalize, which would merge the two loops.)
// NEST-LABEL: func.func @nested_and_flat(
// NEST: scf.parallel (%{{[^,]+}}) = (%{{[^,]+}}) to (%{{[^,]+}}) step
// NEST: scf.parallel (%{{[^,]+}}, %{{[^,]+}}) = (%{{[^,]+}}, %{{[^,]+}}) to (%{{[^,]+}}, %{{[^,]+}}) step
// NEST: scf.parallel (%{{[^,]+}}) = (%{{[^,]+}}) to (%{{[^,]+}}) step
func.func @nested_and_flat(%a: memref<4x8x16xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%j, %k) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) {
      %x = memref.load %a[%i, %j, %k] : memref<4x8x16xf32>
      memref.store %x, %a[%i, %j, %k] : memref<4x8x16xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %b[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// Tests that lower bounds and steps are folded into the indices:
// i in 2, 4, .., 8 and j in 0..3 become one loop of 16 iterations.
// CHECK-LABEL: func.func @offsets(
// CHECK: scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%[[C16:.+]]) step
// CHECK-NEXT: %[[J:.+]] = arith.remsi %[[X]], %[[C4:.+]] : index
// CHECK-NEXT: %[[Q:.+]] = arith.divsi %[[X]], %[[C4]] : index
// CHECK-NEXT: %[[I:.+]] = affine.apply #[[MAP]](%[[Q]])
// CHECK-NEXT: memref.load %arg0[%[[I]], %[[J]]]
func.func @offsets(%a: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c2, %c0) to (%c10, %c4) step (%c2, %c1) {
    %x = memref.load %a[%i, %j] : memref<16x4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i, %j] : memref<16x4xf32>
    scf.reduce
  }
  return
}
