// Tests that the gradient of loom.document_mask (fill 0: masked entries are
// constants) matches central finite differences (float64), with queries and
// keys of different lengths: a key counts if it is in the query's document
// at its position or before.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<1x2x3x5xf64> init normal scale 1.0
  loom.param @cotangent : tensor<1x2x3x5xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<1x2x3x5xf64>
    %cot = loom.get_param @cotangent : tensor<1x2x3x5xf64>
    %qd = arith.constant dense<[[4, 4, 7]]> : tensor<1x3xi32>
    %qp = arith.constant dense<[[2, 3, 0]]> : tensor<1x3xi32>
    %kd = arith.constant dense<[[4, 4, 4, 4, 7]]> : tensor<1x5xi32>
    %kp = arith.constant dense<[[0, 1, 2, 3, 0]]> : tensor<1x5xi32>
    %m = loom.document_mask %x, %qd, %qp, %kd, %kp fill 0.5 : tensor<1x2x3x5xf64>, tensor<1x3xi32>, tensor<1x5xi32>
    %weighted = loom.mul %m, %cot : (tensor<1x2x3x5xf64>, tensor<1x2x3x5xf64>) -> tensor<1x2x3x5xf64>
    %l = loom.sum %weighted axes = [0, 1, 2, 3] : tensor<1x2x3x5xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
