// A module without a @loss function.
module {
  loom.param @w : tensor<4xf32> init zeros
}
