// Tests that the gradient of loom.linear without bias matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<3x4xf64> init normal scale 1.0
  loom.param @w : tensor<5x4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<3x5xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<3x4xf64>
    %w = loom.get_param @w : tensor<5x4xf64>
    %cot = loom.get_param @cotangent : tensor<3x5xf64>
    %y = loom.linear %x, %w : (tensor<3x4xf64>, tensor<5x4xf64>) -> tensor<3x5xf64>
    %weighted = loom.mul %y, %cot : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    %l = loom.sum %weighted axes = [0, 1] : tensor<3x5xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
