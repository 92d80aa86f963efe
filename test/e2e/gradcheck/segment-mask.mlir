// Tests that the gradient of loom.segment_mask (fill 0: masked entries are
// constants) matches central finite differences (float64).
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<2x3x4x4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x3x4x4xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<2x3x4x4xf64>
    %cot = loom.get_param @cotangent : tensor<2x3x4x4xf64>
    %docs = arith.constant dense<[[0, 0, 1, 1], [2, 3, 3, 3]]> : tensor<2x4xi32>
    %m = loom.segment_mask %x, %docs fill 0.5 : tensor<2x3x4x4xf64>, tensor<2x4xi32>
    %weighted = loom.mul %m, %cot : (tensor<2x3x4x4xf64>, tensor<2x3x4x4xf64>) -> tensor<2x3x4x4xf64>
    %l = loom.sum %weighted axes = [0, 1, 2, 3] : tensor<2x3x4x4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
