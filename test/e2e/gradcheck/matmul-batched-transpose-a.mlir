// Tests that the gradient of loom.matmul transpose_a matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @a : tensor<2x4x3xf64> init normal scale 1.0
  loom.param @b : tensor<2x4x5xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x3x5xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %a = loom.get_param @a : tensor<2x4x3xf64>
    %b = loom.get_param @b : tensor<2x4x5xf64>
    %cot = loom.get_param @cotangent : tensor<2x3x5xf64>
    %y = loom.matmul %a, %b transpose_a : (tensor<2x4x3xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x3x5xf64>, tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
    %l = loom.sum %weighted axes = [0, 1, 2] : tensor<2x3x5xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
