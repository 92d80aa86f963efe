// RUN: loom-opt %s -split-input-file --loom-approximate-math | FileCheck %s

// Tests that f32 tanh and exp become polynomial arithmetic (no math call
// left for libm).
// CHECK-LABEL: func.func @f32_math
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: return
func.func @f32_math(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  %1 = math.exp %0 : f32
  return %1 : f32
}

// -----

// Tests that f64 math is left exact for the float64 gradient checks.
// CHECK-LABEL: func.func @dont_approximate_f64
// CHECK: math.tanh
// CHECK: math.exp
func.func @dont_approximate_f64(%x: f64) -> f64 {
  %0 = math.tanh %x : f64
  %1 = math.exp %0 : f64
  return %1 : f64
}
