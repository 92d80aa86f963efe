// Tests that the gradient of loom.cross_entropy matches central finite
// differences (float64).
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @logits : tensor<2x3x5xf64> init normal scale 2.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @logits : tensor<2x3x5xf64>
    %t = arith.constant dense<[[0, 4, 2], [3, 1, 4]]> : tensor<2x3xi32>
    %l = loom.cross_entropy %x, %t : (tensor<2x3x5xf64>, tensor<2x3xi32>) -> tensor<f64>
    return %l : tensor<f64>
  }
}
