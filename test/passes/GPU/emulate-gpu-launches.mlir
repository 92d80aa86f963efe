// RUN: loom-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(loom-emulate-gpu-launches))" | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics --pass-pipeline="builtin.module(func.func(loom-emulate-gpu-launches{reverse=1}))" | FileCheck %s --check-prefix=REV

// Tests that a launch becomes loops over blocks (z, y, x), then threads
// (z, y, x), bounded by the launch's operands, around its body, whose size
// arguments read the operands too; and that device memory becomes host
// memory. With reverse=1 each index counts down from the last.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[IN:.+]]: memref<1000xf32>, %[[OUT:.+]]: memref<1000xf32>
// CHECK-DAG: %[[GRID:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[BLOCK:.+]] = arith.constant 256 : index
// CHECK: %[[TMP:.+]] = memref.alloc() : memref<1000xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %{{.+}} step %[[ONE]] {
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %{{.+}} step %[[ONE]] {
// CHECK-NEXT: scf.for %[[BX:.+]] = %[[ZERO]] to %[[GRID]] step %[[ONE]] {
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %{{.+}} step %[[ONE]] {
// CHECK-NEXT: scf.for %{{.+}} = %[[ZERO]] to %{{.+}} step %[[ONE]] {
// CHECK-NEXT: scf.for %[[TX:.+]] = %[[ZERO]] to %[[BLOCK]] step %[[ONE]] {
// CHECK-NEXT: %[[BASE:.+]] = arith.muli %[[BX]], %[[BLOCK]] : index
// CHECK-NEXT: %[[I:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: memref.load %[[IN]][%[[I]]]
// CHECK: memref.store %{{.+}}, %[[TMP]][%[[I]]]
// CHECK-NOT: gpu.
// CHECK: memref.copy %[[TMP]], %[[OUT]] : memref<1000xf32> to memref<1000xf32>
// CHECK-NEXT: memref.dealloc %[[TMP]] : memref<1000xf32>

// REV-LABEL: func.func @scale(
// REV-DAG: %[[GRID:.+]] = arith.constant 4 : index
// REV-DAG: %[[BLOCK:.+]] = arith.constant 256 : index
// REV: scf.for %[[BX:.+]] = %{{.+}} to %[[GRID]] step %[[ONE:.+]] {
// REV-NEXT: %[[LASTB:.+]] = arith.subi %[[GRID]], %[[ONE]] : index
// REV-NEXT: %[[B:.+]] = arith.subi %[[LASTB]], %[[BX]] : index
// REV: scf.for %[[TX:.+]] = %{{.+}} to %[[BLOCK]] step %[[ONE]] {
// REV-NEXT: %[[LASTT:.+]] = arith.subi %[[BLOCK]], %[[ONE]] : index
// REV-NEXT: %[[T:.+]] = arith.subi %[[LASTT]], %[[TX]] : index
// REV-NEXT: %[[BASE:.+]] = arith.muli %[[B]], %[[BLOCK]] : index
// REV-NEXT: arith.addi %[[BASE]], %[[T]] : index
func.func @scale(%in: memref<1000xf32>, %out: memref<1000xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c1000 = arith.constant 1000 : index
  %tmp = gpu.alloc () : memref<1000xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %inside = arith.cmpi ult, %i, %c1000 : index
    scf.if %inside {
      %x = memref.load %in[%i] : memref<1000xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %tmp[%i] : memref<1000xf32>
    }
    gpu.terminator
  }
  gpu.memcpy %out, %tmp : memref<1000xf32>, memref<1000xf32>
  gpu.dealloc %tmp : memref<1000xf32>
  return
}

// -----

// Tests that a kernel whose threads synchronise is refused: run one after
// another, a thread would wait at the barrier for threads not yet run.
func.func @barrier(%out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  // expected-error@+1 {{cannot emulate a kernel that synchronises its threads or reads their ids other than through the launch's arguments}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

// Tests that a launch with workgroup memory is refused.
func.func @workgroup() {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{cannot emulate a launch with async tokens, clusters, attributions or several blocks}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) workgroup(%shared : memref<32xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}
