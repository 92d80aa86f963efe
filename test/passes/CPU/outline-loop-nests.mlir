// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(loom-outline-loop-nests)" | FileCheck %s

// Tests that each top-level loop nest of an entry becomes a call of a
// private noinline function taking the values it uses from outside but for
// constants, which are cloned in (the bound 64 and the factor 2.0 stay
// constants); that the nest over %b, the same as the one over %a but for
// its buffers, calls the first function rather than a copy; that a nest
// over other types (%c) gets a function of its own; and that a loop with
// results and a function that is not an entry are left alone.
// CHECK-LABEL: func.func private @step_nest(
// CHECK-SAME: %[[X:[^:]+]]: memref<64xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG: %[[N:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[N]]
// CHECK: memref.load %[[X]][%[[I]]]
// CHECK: arith.mulf %{{.+}}, %[[TWO]]
// CHECK: return
// CHECK-LABEL: func.func private @step_nest_0(
// CHECK-SAME: memref<32xf32>
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:[^:]+]]: memref<64xf32>, %[[B:[^:]+]]: memref<64xf32>, %[[C:[^:]+]]: memref<32xf32>
// CHECK-NOT: scf.for
// CHECK: call @step_nest(%[[A]]) : (memref<64xf32>) -> ()
// CHECK-NEXT: call @step_nest(%[[B]]) : (memref<64xf32>) -> ()
// CHECK-NEXT: call @step_nest_0(%[[C]]) : (memref<32xf32>) -> ()
// CHECK-NEXT: %[[S:.+]] = scf.for
// CHECK: return %[[S]]
// CHECK-LABEL: func.func @helper(
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK-NOT: func.func private
func.func @step(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<32xf32>) -> f32 attributes {loom.entry = "step"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %b[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c32 step %c1 {
    %x = memref.load %c[%i] : memref<32xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %c[%i] : memref<32xf32>
  }
  %s = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %c[%i] : memref<32xf32>
    %t = arith.addf %acc, %x : f32
    scf.yield %t : f32
  }
  return %s : f32
}
func.func @helper(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %a[%i] : memref<64xf32>
  }
  return
}

// -----

// Tests that a view with a runtime offset (a ZeRO slice), which no bare
// pointer can carry, is rebuilt inside the function from its source and
// offset, and that a nest over a memref of dynamic shape stays in place.
// CHECK-LABEL: func.func private @slices_nest(
// CHECK-SAME: %[[BASE:[^:]+]]: memref<80xf32>, %[[OFF:[^:]+]]: index)
// CHECK: %[[V:.+]] = memref.subview %[[BASE]][%[[OFF]]] [40] [1]
// CHECK: scf.for
// CHECK: memref.load %[[V]]
// CHECK-LABEL: func.func @slices(
// CHECK: %[[S:.+]] = memref.subview
// CHECK: call @slices_nest(%arg0, %arg1) : (memref<80xf32>, index) -> ()
// CHECK: scf.for
// CHECK: memref.load %arg2
// CHECK: return
func.func @slices(%a: memref<80xf32>, %offset: index, %d: memref<?xf32>) attributes {loom.entry = "slices"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %s = memref.subview %a[%offset] [40] [1] : memref<80xf32> to memref<40xf32, strided<[1], offset: ?>>
  scf.for %i = %c0 to %c40 step %c1 {
    %x = memref.load %s[%i] : memref<40xf32, strided<[1], offset: ?>>
    memref.store %x, %s[%i] : memref<40xf32, strided<[1], offset: ?>>
  }
  scf.for %i = %c0 to %c40 step %c1 {
    %x = memref.load %d[%i] : memref<?xf32>
    memref.store %x, %d[%i] : memref<?xf32>
  }
  return
}
