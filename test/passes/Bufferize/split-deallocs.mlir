// RUN: loom-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(loom-split-deallocs))" | FileCheck %s

// Tests that a dealloc of distinct allocations, unconditional and retaining
// nothing (what ownership-based deallocation ends a step with), becomes one
// memref.dealloc per buffer in its list's order.
// CHECK-LABEL: func.func @own(
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.+]] = memref.alloc() : memref<8xf32>
// CHECK-NOT: bufferization.dealloc
// CHECK: memref.dealloc %[[B]] : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT: return
func.func @own() {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  bufferization.dealloc (%b, %a : memref<8xf32>, memref<4xf32>) if (%true, %true)
  return
}

// -----

// Tests that deallocs needing an answer about aliasing or ownership are left
// to upstream simplification: one retaining a value, one with a condition
// known only at run time, one listing a buffer twice, one of a view.
// CHECK-LABEL: func.func @left(
// CHECK-COUNT-4: bufferization.dealloc
// CHECK-NOT: memref.dealloc
func.func @left(%c: i1, %r: memref<4xf32>) -> i1 {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %k = bufferization.dealloc (%a : memref<4xf32>) if (%true) retain (%r : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%b : memref<4xf32>) if (%c)
  %d = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%d, %d : memref<4xf32>, memref<4xf32>) if (%true, %true)
  %e = memref.alloc() : memref<8xf32>
  %v = memref.subview %e[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  bufferization.dealloc (%v : memref<4xf32, strided<[1]>>) if (%true)
  return %k : i1
}
