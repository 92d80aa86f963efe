// A model without a loom.param: it parses and verifies, and the optimizer
// pass refuses it (nothing to optimize).
module attributes {loom.task = {kind = "classify", features = 4 : i64, classes = 4 : i64, batch = 2 : i64}} {
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"},
                  %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %l = loom.cross_entropy %x, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
