// Tests that the gradient of loom.attention with segments (causal, rows
// packed with documents: a query sees only its own document's keys) matches
// central finite differences (float64) for every parameter feeding it. Row 0
// holds documents of 1, 2 and 1 tokens, row 1 one of 4.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @q : tensor<2x2x4x3xf64> init normal scale 1.0
  loom.param @k : tensor<2x2x4x3xf64> init normal scale 1.0
  loom.param @v : tensor<2x2x4x3xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x2x4x3xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %q = loom.get_param @q : tensor<2x2x4x3xf64>
    %k = loom.get_param @k : tensor<2x2x4x3xf64>
    %v = loom.get_param @v : tensor<2x2x4x3xf64>
    %cot = loom.get_param @cotangent : tensor<2x2x4x3xf64>
    %docs = arith.constant dense<[[0, 1, 1, 2], [5, 5, 5, 5]]> : tensor<2x4xi32>
    %y = loom.attention %q, %k, %v segments %docs causal : (tensor<2x2x4x3xf64>, tensor<2x2x4x3xf64>, tensor<2x2x4x3xf64>, tensor<2x4xi32>) -> tensor<2x2x4x3xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x2x4x3xf64>, tensor<2x2x4x3xf64>) -> tensor<2x2x4x3xf64>
    %l = loom.sum %weighted axes = [0, 1, 2, 3] : tensor<2x2x4x3xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
