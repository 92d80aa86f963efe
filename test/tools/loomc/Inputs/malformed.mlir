// A model with a syntax error on line 5.
module {
  loom.param @w : tensor<4x4xf32> init normal scale 1.0
  func.func @loss() -> tensor<f32> {
    %w = loom.get_param @w : tensor<4x4xf32
    return %w : tensor<f32>
  }
}
