// Tests that the gradient of loom.mean over two axes (keepdim and not) matches central finite differences
// (float64) for every parameter feeding it.
// RUN: loomc %s -o %t && loom-gradcheck %t | FileCheck %s
// CHECK: gradcheck: PASS
module {
  loom.param @x : tensor<2x3x4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x3x4xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %x = loom.get_param @x : tensor<2x3x4xf64>
    %cot = loom.get_param @cotangent : tensor<2x3x4xf64>
    %r = loom.mean %x axes = [0, 2] keepdim : tensor<2x3x4xf64> -> tensor<1x3x1xf64>
    %s = loom.mean %x axes = [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
    %rb = loom.broadcast_to %r : tensor<1x3x1xf64> -> tensor<2x3x4xf64>
    %sb = loom.reshape %s : tensor<2x4xf64> -> tensor<2x1x4xf64>
    %y = loom.mul %rb, %sb : (tensor<2x3x4xf64>, tensor<2x1x4xf64>) -> tensor<2x3x4xf64>
    %weighted = loom.mul %y, %cot : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
    %l = loom.sum %weighted axes = [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
