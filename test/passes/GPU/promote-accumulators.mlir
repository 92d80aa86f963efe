// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-promote-accumulators))" | FileCheck %s

// Tests that a row sum's accumulator (an entry's output, loaded and stored
// at the row in every iteration) becomes a loop-carried value: loaded once
// before the reduction loop, stored once after it.
// CHECK-LABEL: func.func @row_sum(
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: %[[INIT:.+]] = memref.load %arg1[%[[I]]]
// CHECK-NEXT: %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.+]] = memref.load %arg0[%[[I]], %[[K]]]
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[ACC]]
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %arg1[%[[I]]]
func.func @row_sum(%a: memref<64x32xf32>, %b: memref<64xf32>) attributes {loom.entry = "row_sum"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c32 step %c1 {
      %x = memref.load %a[%i, %k] : memref<64x32xf32>
      %acc = memref.load %b[%i] : memref<64xf32>
      %s = arith.addf %x, %acc : f32
      memref.store %s, %b[%i] : memref<64xf32>
    }
    scf.reduce
  }
  return
}

// Tests that a reduction over two loops is promoted out of both, that two
// accumulators of one loop (a mean and a mean of squares) are both
// promoted, and that a temporary (memref.alloc) counts as its own buffer.
// CHECK-LABEL: func.func @two_loops_two_outputs(
// CHECK: %[[T:.+]] = memref.alloc() : memref<8xf32>
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: %[[Q0:.+]] = memref.load %arg2[%[[I]]]
// CHECK-NEXT: %[[T0:.+]] = memref.load %[[T]][%[[I]]]
// CHECK-NEXT: %[[R:.+]]:2 = scf.for {{.+}} iter_args(%[[QA:.+]] = %[[Q0]], %[[TA:.+]] = %[[T0]]) -> (f32, f32) {
// CHECK-NEXT: %[[IN:.+]]:2 = scf.for {{.+}} iter_args(%[[TB:.+]] = %[[TA]], %[[QB:.+]] = %[[QA]]) -> (f32, f32) {
// CHECK-NEXT: %[[X:.+]] = memref.load %arg0
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[TB]]
// CHECK-NEXT: %[[X2:.+]] = arith.mulf %[[X]], %[[X]]
// CHECK-NEXT: %[[S2:.+]] = arith.addf %[[X2]], %[[QB]]
// CHECK-NEXT: scf.yield %[[S]], %[[S2]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[IN]]#1, %[[IN]]#0
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]]#1, %[[T]][%[[I]]]
// CHECK-NEXT: memref.store %[[R]]#0, %arg2[%[[I]]]
func.func @two_loops_two_outputs(%a: memref<4x8x16xf32>, %out: memref<8xf32>, %sq: memref<8xf32>) attributes {loom.entry = "two"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c4 step %c1 {
      scf.for %l = %c0 to %c16 step %c1 {
        %x = memref.load %a[%k, %i, %l] : memref<4x8x16xf32>
        %acc = memref.load %t[%i] : memref<8xf32>
        %s = arith.addf %x, %acc : f32
        memref.store %s, %t[%i] : memref<8xf32>
        %x2 = arith.mulf %x, %x : f32
        %acc2 = memref.load %sq[%i] : memref<8xf32>
        %s2 = arith.addf %x2, %acc2 : f32
        memref.store %s2, %sq[%i] : memref<8xf32>
      }
    }
    scf.reduce
  }
  memref.copy %t, %out : memref<8xf32> to memref<8xf32>
  memref.dealloc %t : memref<8xf32>
  return
}

// Tests what stays in memory: arguments of a function that is not an
// entry (they may alias), an input that views the output's buffer, an
// accumulator whose index changes in the loop, a store under a condition,
// and a loop that calls a function.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: iter_args
// CHECK: return
func.func @kept(%a: memref<64x32xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.for %k = %c0 to %c32 step %c1 {
    %x = memref.load %a[%c0, %k] : memref<64x32xf32>
    %acc = memref.load %b[%c0] : memref<64xf32>
    %s = arith.addf %x, %acc : f32
    memref.store %s, %b[%c0] : memref<64xf32>
  }
  return
}
// CHECK-LABEL: func.func @kept_entry(
// CHECK-NOT: iter_args
// CHECK: return
func.func private @opaque()
func.func @kept_entry(%a: memref<64x32xf32>, %b: memref<64xf32>, %flag: i1) attributes {loom.entry = "kept"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %view = memref.subview %a[0, 0] [1, 32] [1, 1] : memref<64x32xf32> to memref<32xf32, strided<[1]>>
  // The input is a view of the accumulator's buffer.
  scf.for %k = %c0 to %c32 step %c1 {
    %x = memref.load %view[%k] : memref<32xf32, strided<[1]>>
    %acc = memref.load %a[%c1, %c0] : memref<64x32xf32>
    %s = arith.addf %x, %acc : f32
    memref.store %s, %a[%c1, %c0] : memref<64x32xf32>
  }
  // The accumulator's index is the loop's.
  scf.for %k = %c0 to %c32 step %c1 {
    %x = memref.load %a[%c0, %k] : memref<64x32xf32>
    %acc = memref.load %b[%k] : memref<64xf32>
    %s = arith.addf %x, %acc : f32
    memref.store %s, %b[%k] : memref<64xf32>
  }
  // The store is conditional.
  scf.for %k = %c0 to %c32 step %c1 {
    %x = memref.load %a[%c0, %k] : memref<64x32xf32>
    %acc = memref.load %b[%c0] : memref<64xf32>
    %s = arith.addf %x, %acc : f32
    scf.if %flag {
      memref.store %s, %b[%c0] : memref<64xf32>
    }
  }
  // The loop calls a function.
  scf.for %k = %c0 to %c32 step %c1 {
    %x = memref.load %a[%c0, %k] : memref<64x32xf32>
    %acc = memref.load %b[%c0] : memref<64xf32>
    %s = arith.addf %x, %acc : f32
    memref.store %s, %b[%c0] : memref<64xf32>
    func.call @opaque() : () -> ()
  }
  return
}
