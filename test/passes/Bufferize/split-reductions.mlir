// RUN: loom-opt %s --pass-pipeline="builtin.module(func.func(loom-split-reductions))" | FileCheck %s

// Tests that a column reduction (a bias gradient: 4096 rows into 256
// outputs) becomes 64 strided partials per output (16384 threads of 64
// elements) and a reduction of the partials into the original output.
// CHECK-LABEL: func.func @columns(
// CHECK-SAME: %[[IN:.+]]: tensor<4096x256xf32>, %[[OUT:.+]]: tensor<256xf32>)
// CHECK: %[[X:.+]] = tensor.expand_shape %[[IN]] {{\[}}[0, 1], [2]] output_shape [64, 64, 256]
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<64x256xf32>)
// CHECK: %[[PART:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[X]] : tensor<64x64x256xf32>) outs(%[[INIT]] : tensor<64x256xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[PART]] : tensor<64x256xf32>) outs(%[[OUT]] : tensor<256xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]
func.func @columns(%a: tensor<4096x256xf32>, %b: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.reduce ins(%a : tensor<4096x256xf32>) outs(%b : tensor<256xf32>) dimensions = [0]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return %r : tensor<256xf32>
}

// Tests that contiguous reduced dimensions are collapsed into one first
// (16x256 rows), and that a full reduction becomes 512 partials of 512
// elements; the partials read with stride 512 (the inner, parallel split).
// CHECK-LABEL: func.func @several_dims(
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2]] : tensor<16x256x256xf32> into tensor<4096x256xf32>
// CHECK: tensor.expand_shape %{{.+}} output_shape [64, 64, 256]
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<64x64x256xf32>) outs(%{{.+}} : tensor<64x256xf32>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<64x256xf32>) outs(%{{.+}} : tensor<256xf32>)
func.func @several_dims(%a: tensor<16x256x256xf32>, %b: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.reduce ins(%a : tensor<16x256x256xf32>) outs(%b : tensor<256xf32>) dimensions = [0, 1]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return %r : tensor<256xf32>
}

// CHECK-LABEL: func.func @full(
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<1024x256xf32> into tensor<262144xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [512, 512]
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%{{.+}} : tensor<512x512xf32>) outs(%{{.+}} : tensor<512xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%{{.+}} : tensor<512xf32>) outs(%{{.+}} : tensor<f32>)
func.func @full(%a: tensor<1024x256xf32>, %b: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%a : tensor<1024x256xf32>) outs(%b : tensor<f32>) dimensions = [0, 1]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return %r : tensor<f32>
}

// Tests that a maximum's partials start from -inf, and that an elementwise
// prologue in the body (x * x) stays in the first stage only.
// CHECK-LABEL: func.func @max_of_squares(
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<4096x16xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}} : tensor<4096x16x16xf32>) outs(%{{.+}} : tensor<4096x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4096x16xf32>) outs(%{{.+}} : tensor<4096xf32>)
// CHECK-NOT: arith.mulf
// CHECK: arith.maximumf
// CHECK: return
func.func @max_of_squares(%a: tensor<4096x256xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4096x256xf32>) outs(%b : tensor<4096xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %m = arith.maximumf %sq, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// Tests what is left alone: enough outputs to fill the GPU (131072 rows,
// threads / 8 under the default threads), too few elements to split (32),
// reduced dimensions that are not contiguous, an op that reads
// linalg.index, and a dynamic shape.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK-COUNT-5: linalg.{{reduce|generic}}
// CHECK-NOT: linalg.{{reduce|generic}}
// CHECK: return
func.func @left_alone(%rows: tensor<131072x256xf32>, %rowsOut: tensor<131072xf32>,
                      %short: tensor<32x8xf32>, %shortOut: tensor<8xf32>,
                      %gaps: tensor<64x8x256xf32>, %gapsOut: tensor<8xf32>,
                      %idx: tensor<4096xf32>, %idxOut: tensor<f32>,
                      %dyn: tensor<?x256xf32>, %dynOut: tensor<256xf32>)
    -> (tensor<131072xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<256xf32>) {
  %0 = linalg.reduce ins(%rows : tensor<131072x256xf32>) outs(%rowsOut : tensor<131072xf32>) dimensions = [1]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %1 = linalg.reduce ins(%short : tensor<32x8xf32>) outs(%shortOut : tensor<8xf32>) dimensions = [0]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %2 = linalg.reduce ins(%gaps : tensor<64x8x256xf32>) outs(%gapsOut : tensor<8xf32>) dimensions = [0, 2]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %3 = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>], iterator_types = ["reduction"]} ins(%idx : tensor<4096xf32>) outs(%idxOut : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %p = arith.mulf %x, %kf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %4 = linalg.reduce ins(%dyn : tensor<?x256xf32>) outs(%dynOut : tensor<256xf32>) dimensions = [0]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return %0, %1, %2, %3, %4 : tensor<131072xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<256xf32>
}

// Tests that GEMMs are left alone however few their outputs (a 64x64
// weight gradient reducing 512 rows, a batched 8x8 one): they become cuBLAS
// calls later, which would be plain loops once split.
// CHECK-LABEL: func.func @gemms(
// CHECK-NEXT: %[[MM:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<64x512xf32>, tensor<512x64xf32>) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK-NEXT: %[[BMM:.+]] = linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<2x8x1024xf32>, tensor<2x1024x8xf32>) outs(%{{.+}} : tensor<2x8x8xf32>)
// CHECK-NEXT: return %[[MM]], %[[BMM]]
func.func @gemms(%a: tensor<64x512xf32>, %b: tensor<512x64xf32>, %c: tensor<64x64xf32>,
                 %x: tensor<2x8x1024xf32>, %y: tensor<2x1024x8xf32>, %z: tensor<2x8x8xf32>)
    -> (tensor<64x64xf32>, tensor<2x8x8xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = linalg.batch_matmul ins(%x, %y : tensor<2x8x1024xf32>, tensor<2x1024x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0, %1 : tensor<64x64xf32>, tensor<2x8x8xf32>
}
