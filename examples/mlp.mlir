// A two-layer MLP classifier: 16 features, 32 hidden units, 4 classes,
// batch 8. Compile it with `loomc examples/mlp.mlir -o out/mlp` and train it
// with `loom-run out/mlp --steps 200 --data synthetic`; the loom.task
// attribute tells the runtime how to feed it (x [8, 16], y [8] below 4).
module attributes {loom.task = {kind = "classify", features = 16 : i64, classes = 4 : i64, batch = 8 : i64}} {
  loom.param @"fc1.weight" : tensor<32x16xf32> init normal scale 2.500000e-01
  loom.param @"fc1.bias" : tensor<32xf32> init zeros {no_weight_decay}
  loom.param @"fc2.weight" : tensor<4x32xf32> init normal scale 1.767767e-01
  loom.param @"fc2.bias" : tensor<4xf32> init zeros {no_weight_decay}

  func.func @loss(%x: tensor<8x16xf32> {loom.input = "x"},
                  %y: tensor<8xi32> {loom.input = "y"}) -> tensor<f32> {
    %w1 = loom.get_param @"fc1.weight" : tensor<32x16xf32>
    %b1 = loom.get_param @"fc1.bias" : tensor<32xf32>
    %w2 = loom.get_param @"fc2.weight" : tensor<4x32xf32>
    %b2 = loom.get_param @"fc2.bias" : tensor<4xf32>
    %h = loom.linear %x, %w1, %b1 : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
    %a = loom.relu %h : tensor<8x32xf32>
    %logits = loom.linear %a, %w2, %b2 : (tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    %l = loom.cross_entropy %logits, %y : (tensor<8x4xf32>, tensor<8xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
