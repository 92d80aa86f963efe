// Tests that the gradient of loom.causal_mask (fill 0) matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @a : tensor<2x4x4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x4x4xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %a = loom.get_param @a : tensor<2x4x4xf64>
    %cot = loom.get_param @cotangent : tensor<2x4x4xf64>
    %y = loom.causal_mask %a fill 0.0 : tensor<2x4x4xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x4x4xf64>, tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
    %l = loom.sum %weighted axes = [0, 1, 2] : tensor<2x4x4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
