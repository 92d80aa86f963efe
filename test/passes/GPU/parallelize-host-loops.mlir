// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-parallelize-host-loops))" | FileCheck %s

// Tests that host code touching memory (the copy of a 0-d init, then a
// reduction to a scalar) moves into one one-iteration scf.parallel after
// it, with the constants that later code also uses left in place.
// CHECK-LABEL: func.func @scalar_sum(
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[C64:.+]] = arith.constant 64 : index
// CHECK-NOT: memref.load
// CHECK: scf.parallel (%{{.+}}) = (%[[Z:.+]]) to (%[[ONE:.+]]) step (%[[ONE]]) {
// CHECK-NEXT: %[[INIT:.+]] = memref.load %arg1[]
// CHECK-NEXT: memref.store %[[INIT]], %arg2[]
// CHECK-NEXT: scf.for %{{.+}} = %[[C0]] to %[[C64]]
// CHECK: scf.reduce
// CHECK: scf.parallel (%{{.+}}) = (%[[C0]]) to (%[[C64]])
func.func @scalar_sum(%a: memref<64xf32>, %init: memref<f32>, %out: memref<f32>, %b: memref<64xf32>) attributes {loom.entry = "scalar_sum"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %i = memref.load %init[] : memref<f32>
  memref.store %i, %out[] : memref<f32>
  scf.for %k = %c0 to %c64 step %c1 {
    %x = memref.load %a[%k] : memref<64xf32>
    %acc = memref.load %out[] : memref<f32>
    %s = arith.addf %x, %acc : f32
    memref.store %s, %out[] : memref<f32>
  }
  scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%j] : memref<64xf32>
    memref.store %x, %b[%j] : memref<64xf32>
    scf.reduce
  }
  return
}

// Tests what stays on the host: a scalar the code after it uses (the
// learning rate of the loop below), and the accesses of a function that is
// not an entry.
// CHECK-LABEL: func.func @kept(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[LR:.+]] = memref.load %arg1[]
// CHECK-NEXT: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func @not_an_entry(
// CHECK-NOT: scf.parallel
func.func @kept(%a: memref<64xf32>, %lr: memref<f32>) attributes {loom.entry = "kept"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %r = memref.load %lr[] : memref<f32>
  scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%j] : memref<64xf32>
    %y = arith.mulf %x, %r : f32
    memref.store %y, %a[%j] : memref<64xf32>
    scf.reduce
  }
  return
}
func.func @not_an_entry(%init: memref<f32>, %out: memref<f32>) {
  %i = memref.load %init[] : memref<f32>
  memref.store %i, %out[] : memref<f32>
  return
}
