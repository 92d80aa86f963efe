// Tests that the gradient of loom.sqrt (on positive inputs a*a + 1) matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @a : tensor<3x5xf64> init normal scale 1.0
  loom.param @cotangent : tensor<3x5xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %a = loom.get_param @a : tensor<3x5xf64>
    %cot = loom.get_param @cotangent : tensor<3x5xf64>
    %sq = loom.mul %a, %a : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    %one = arith.constant dense<1.0> : tensor<f64>
    %pos = loom.add %sq, %one : (tensor<3x5xf64>, tensor<f64>) -> tensor<3x5xf64>
    %y = loom.sqrt %pos : tensor<3x5xf64>
    %weighted = loom.mul %y, %cot : (tensor<3x5xf64>, tensor<3x5xf64>) -> tensor<3x5xf64>
    %l = loom.sum %weighted axes = [0, 1] : tensor<3x5xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
