// Tests that the gradient of loom.embedding (a repeated id accumulates) matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @table : tensor<5x3xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x3x3xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %table = loom.get_param @table : tensor<5x3xf64>
    %cot = loom.get_param @cotangent : tensor<2x3x3xf64>
    %ids = arith.constant dense<[[0, 4, 2], [4, 1, 4]]> : tensor<2x3xi32>
    %y = loom.embedding %table, %ids : (tensor<5x3xf64>, tensor<2x3xi32>) -> tensor<2x3x3xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x3x3xf64>, tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
    %l = loom.sum %weighted axes = [0, 1, 2] : tensor<2x3x3xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
