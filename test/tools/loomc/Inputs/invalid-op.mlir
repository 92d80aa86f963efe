// A model whose matmul contracts mismatched dimensions (line 6).
module {
  loom.param @w : tensor<4x8xf32> init normal scale 1.0
  func.func @loss(%x: tensor<2x4xf32>) -> tensor<f32> {
    %w = loom.get_param @w : tensor<4x8xf32>
    %y = loom.matmul %w, %x : (tensor<4x8xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %l = loom.sum %y axes = [0, 1] : tensor<4x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
