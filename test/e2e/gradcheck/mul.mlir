// Tests that the gradient of loom.mul with broadcasting matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @a : tensor<3x4xf64> init normal scale 1.0
  loom.param @b : tensor<4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<3x4xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %a = loom.get_param @a : tensor<3x4xf64>
    %b = loom.get_param @b : tensor<4xf64>
    %cot = loom.get_param @cotangent : tensor<3x4xf64>
    %y = loom.mul %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
    %weighted = loom.mul %y, %cot : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
    %l = loom.sum %weighted axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
