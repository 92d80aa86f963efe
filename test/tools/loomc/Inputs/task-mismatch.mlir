// A classifier whose loom.task names 5 classes while its logits have 4: the
// runtime's labels would reach past each row of logits.
module attributes {loom.task = {batch = 8 : i64, classes = 5 : i64, features = 16 : i64, kind = "classify"}} {
  loom.param @w : tensor<4x16xf32> init normal scale 2.500000e-01
  loom.param @b : tensor<4xf32> init zeros {no_weight_decay}
  func.func @loss(%x: tensor<8x16xf32> {loom.input = "x"}, %y: tensor<8xi32> {loom.input = "y"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<4x16xf32>
    %b = loom.get_param @b : tensor<4xf32>
    %logits = loom.linear %x, %w, %b : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    %l = loom.cross_entropy %logits, %y : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
