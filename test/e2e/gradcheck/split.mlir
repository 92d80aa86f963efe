// Tests that the gradient of loom.split (one piece unused) matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<2x7xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x4xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<2x7xf64>
    %cot = loom.get_param @cotangent : tensor<2x4xf64>
    %p:3 = loom.split %x axis = 1 : tensor<2x7xf64> -> tensor<2x2xf64>, tensor<2x3xf64>, tensor<2x2xf64>
    %y = loom.concat %p#2, %p#0 axis = 1 : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x4xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
    %l = loom.sum %weighted axes = [0, 1] : tensor<2x4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
