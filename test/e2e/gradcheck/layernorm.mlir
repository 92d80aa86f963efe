// Tests that the gradient of loom.layernorm matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<2x3x6xf64> init normal scale 1.0
  loom.param @w : tensor<6xf64> init normal scale 1.0
  loom.param @b : tensor<6xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x3x6xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<2x3x6xf64>
    %w = loom.get_param @w : tensor<6xf64>
    %b = loom.get_param @b : tensor<6xf64>
    %cot = loom.get_param @cotangent : tensor<2x3x6xf64>
    %y = loom.layernorm %x, %w, %b : (tensor<2x3x6xf64>, tensor<6xf64>, tensor<6xf64>) -> tensor<2x3x6xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x3x6xf64>, tensor<2x3x6xf64>) -> tensor<2x3x6xf64>
    %l = loom.sum %weighted axes = [0, 1, 2] : tensor<2x3x6xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
