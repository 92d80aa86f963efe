// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-fuse-parallel-loops{block-size=256}))" | FileCheck %s
// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-fuse-parallel-loops{block-size=256 max-kernel-arguments=4}))" | FileCheck %s --check-prefix=CAP

// Tests that two loops over disjoint buffers (both read %a, which is
// fine) become one loop at the second one's place, across a view and an
// allocation: the first member on iterations [0, 100), the second on
// [256, 556) (its range starts at a block boundary). A thread finds its
// member by comparing with the second's start (halving the members), then
// checks its own end; the second's index is shifted to start at 0.
// CHECK-LABEL: func.func @independent(
// CHECK: %[[T:.+]] = memref.alloc() : memref<300xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: %[[END:.+]] = arith.constant 768 : index
// CHECK: scf.parallel (%[[I:.+]]) = (%[[ZERO]]) to (%[[END]]) step (%[[ONE]]) {
// CHECK-NEXT: %[[S2:.+]] = arith.constant 256 : index
// CHECK-NEXT: %[[LOW:.+]] = arith.cmpi ult, %[[I]], %[[S2]] : index
// CHECK-NEXT: scf.if %[[LOW]] {
// CHECK-NEXT: %[[P1:.+]] = arith.constant 100 : index
// CHECK-NEXT: %[[IN1:.+]] = arith.cmpi ult, %[[I]], %[[P1]] : index
// CHECK-NEXT: scf.if %[[IN1]] {
// CHECK-NEXT: memref.load %arg0[%[[I]]]
// CHECK: memref.store %{{.+}}, %arg1[%[[I]]]
// CHECK: } else {
// CHECK-NEXT: %[[P2:.+]] = arith.constant 556 : index
// CHECK-NEXT: %[[IN2:.+]] = arith.cmpi ult, %[[I]], %[[P2]] : index
// CHECK-NEXT: scf.if %[[IN2]] {
// CHECK-NEXT: %[[S2B:.+]] = arith.constant 256 : index
// CHECK-NEXT: %[[J:.+]] = arith.subi %[[I]], %[[S2B]] : index
// CHECK-NEXT: memref.load %[[V:.+]][%[[J]]] : memref<300xf32, strided<[1]>>
// CHECK: memref.store %{{.+}}, %[[T]][%[[J]]]
// CHECK-NOT: scf.parallel
// CHECK: memref.copy
func.func @independent(%a: memref<300xf32>, %b: memref<100xf32>, %c: memref<300xf32>) attributes {loom.entry = "independent"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %c300 = arith.constant 300 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c100) step (%c1) {
    %x = memref.load %a[%i] : memref<300xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<100xf32>
    scf.reduce
  }
  %t = memref.alloc() : memref<300xf32>
  %v = memref.subview %a[0] [300] [1] : memref<300xf32> to memref<300xf32, strided<[1]>>
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    %x = memref.load %v[%i] : memref<300xf32, strided<[1]>>
    %y = arith.addf %x, %two : f32
    memref.store %y, %t[%i] : memref<300xf32>
    scf.reduce
  }
  memref.copy %t, %c : memref<300xf32> to memref<300xf32>
  memref.dealloc %t : memref<300xf32>
  return
}

// Tests what keeps loops apart: the second reads what the first writes;
// the third writes what the second reads (so only the third and fourth,
// which share nothing, merge); a dealloc between two loops; and the
// arguments of a function that is not an entry (they may alias).
// CHECK-LABEL: func.func @dependent(
// CHECK: scf.parallel
// CHECK-NOT: scf.if
// CHECK: scf.parallel
// CHECK-NOT: scf.if
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: scf.if
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @dependent(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>) attributes {loom.entry = "dependent"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  // b = 2a
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  // c = 2b: reads what the first writes.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %b[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %c[%i] : memref<64xf32>
    scf.reduce
  }
  // b = 2d: writes what the second reads.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %d[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  // a = 2a: shares nothing with the third.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// Tests what else keeps loops apart: a temporary's free between them (the
// first loop would move past it), and a call.
// CHECK-LABEL: func.func @across_a_free(
// CHECK: scf.parallel
// CHECK-NOT: scf.if
// CHECK: memref.dealloc
// CHECK-NEXT: scf.parallel
// CHECK-NOT: scf.if
// CHECK: return
// CHECK-LABEL: func.func @apart(
// CHECK-COUNT-2: scf.parallel
// CHECK-NOT: scf.if
// CHECK-LABEL: func.func @not_an_entry(
// CHECK-COUNT-2: scf.parallel
// CHECK-NOT: scf.if
func.func @across_a_free(%a: memref<64xf32>, %b: memref<64xf32>) attributes {loom.entry = "across_a_free"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %t[%i] : memref<64xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
func.func private @opaque()
func.func @apart(%a: memref<64xf32>, %b: memref<64xf32>) attributes {loom.entry = "apart"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %a[%i] : memref<64xf32>
    scf.reduce
  }
  func.call @opaque() : () -> ()
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %b[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
func.func @not_an_entry(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<64xf32>
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

// Tests that a run is cut where the next loop would take the merged loop
// past max-kernel-arguments values from outside (its kernel's parameters;
// constants do not count, they are sunk into the kernel): with 4, the
// first two loops (%a, %b, %c, %d) merge, the third (%e, %f) starts a new
// loop, which the fourth (%a, %g: 4 values with %e, %f) joins. Under the
// default bound all four merge, and a thread finds its member in two
// comparisons (with the third's start, 512, then the second's or the
// fourth's), not four.
// CHECK-LABEL: func.func @capped(
// CHECK: scf.parallel
// CHECK: arith.constant 512 : index
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.constant 256 : index
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.constant 64 : index
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: scf.if
// CHECK: } else {
// CHECK-NEXT: arith.constant 320 : index
// CHECK: } else {
// CHECK-NEXT: arith.constant 768 : index
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.constant 576 : index
// CHECK: } else {
// CHECK-NEXT: arith.constant 832 : index
// CHECK-NOT: scf.parallel
// CAP-LABEL: func.func @capped(
// CAP: scf.parallel
// CAP-COUNT-3: scf.if
// CAP-NOT: scf.if
// CAP: }
// CAP: scf.parallel
// CAP-COUNT-3: scf.if
// CAP-NOT: scf.parallel
// CAP: return
func.func @capped(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %d: memref<64xf32>, %e: memref<64xf32>, %f: memref<64xf32>, %g: memref<64xf32>) attributes {loom.entry = "capped"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %c[%i] : memref<64xf32>
    memref.store %x, %d[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %e[%i] : memref<64xf32>
    memref.store %x, %f[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %g[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
