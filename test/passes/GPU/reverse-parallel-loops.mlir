// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-reverse-parallel-loops))" | FileCheck %s

// Tests that each induction variable becomes its mirror image, last - (iv
// - lb) with last = lb + ((ub - lb - 1) / step) * step: for i in 2, 5, 8
// (lb 2, ub 10, step 3) the body sees 8, 5, 2; other uses are replaced,
// the loop's own bounds are not.
// CHECK-LABEL: func.func @backwards(
// CHECK-SAME: %[[A:.+]]: memref<16xf32>, %[[LB:.+]]: index, %[[UB:.+]]: index, %[[STEP:.+]]: index)
// CHECK: scf.parallel (%[[I:.+]]) = (%[[LB]]) to (%[[UB]]) step (%[[STEP]]) {
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[W:.+]] = arith.subi %[[UB]], %[[LB]] : index
// CHECK-NEXT: %[[SPAN:.+]] = arith.subi %[[W]], %[[ONE]] : index
// CHECK-NEXT: %[[N:.+]] = arith.divui %[[SPAN]], %[[STEP]] : index
// CHECK-NEXT: %[[OFF:.+]] = arith.muli %[[N]], %[[STEP]] : index
// CHECK-NEXT: %[[LAST:.+]] = arith.addi %[[LB]], %[[OFF]] : index
// CHECK-NEXT: %[[D:.+]] = arith.subi %[[I]], %[[LB]] : index
// CHECK-NEXT: %[[R:.+]] = arith.subi %[[LAST]], %[[D]] : index
// CHECK-NEXT: %[[X:.+]] = memref.load %[[A]][%[[R]]]
// CHECK-NEXT: memref.store %[[X]], %[[A]][%[[R]]]
func.func @backwards(%a: memref<16xf32>, %lb: index, %ub: index, %step: index) {
  scf.parallel (%i) = (%lb) to (%ub) step (%step) {
    %x = memref.load %a[%i] : memref<16xf32>
    memref.store %x, %a[%i] : memref<16xf32>
    scf.reduce
  }
  return
}
