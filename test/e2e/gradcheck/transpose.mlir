// Tests that the gradient of loom.transpose matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<2x3x4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<4x2x3xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<2x3x4xf64>
    %cot = loom.get_param @cotangent : tensor<4x2x3xf64>
    %y = loom.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
    %weighted = loom.mul %y, %cot : (tensor<4x2x3xf64>, tensor<4x2x3xf64>) -> tensor<4x2x3xf64>
    %l = loom.sum %weighted axes = [0, 1, 2] : tensor<4x2x3xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
