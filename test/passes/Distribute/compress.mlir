// RUN: split-file %s %t
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-rank=2" \
// RUN:   | FileCheck %s
// RUN: loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel \
// RUN:   --loom-compress="method=lgreco rank=2 warmup=5 every=50 objective=bytes" \
// RUN:   | FileCheck %s --check-prefix=LGRECO
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 overlap=1" \
// RUN:   | FileCheck %s --check-prefix=OVERLAP
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-rank=2" \
// RUN:   --loom-lower-to-linalg-pipeline --loom-bufferize-pipeline \
// RUN:   | FileCheck %s --check-prefix=LOWERED
// RUN: loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel --loom-compress \
// RUN:   --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-rank=8" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANK
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-method=quant compress-bits=3" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BITS
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-method=topk compress-density=1.5" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DENSITY
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-method=lgreco compress-warmup=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WARMUP
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 compress-method=zip" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=METHOD
// RUN: not loom-opt %t/model.mlir --loom-compress 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 compress=1 zero=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO2
// RUN: not loom-opt %t/f64.mlir --loom-autodiff --loom-data-parallel --loom-compress 2>&1 \
// RUN:   | FileCheck %s --check-prefix=F64

// Tests that the gradients of the matrices (w1 16x8, w2 4x16) get a
// compress_slot in @loss_and_grad's result order, their matrix views
// recorded in loom.compression; the biases' stay plain all-reduces.
// CHECK: loom.compression = #loom.compression<method = "powersgd", rank = 2, bits = 8, density = 1.000000e-02 : f64, warmup_steps = 10, resolve_every = 100, objective = "time", params = ["w1", "w2"], rows = [16, 4], cols = [8, 16]>
// CHECK-LABEL: func.func @loss_and_grad(
// CHECK: comm.all_reduce %{{.+}} mean : tensor<f32>
// CHECK-NEXT: comm.all_reduce %{{.+}} mean {compress_slot = 1 : i64} : tensor<4x16xf32>
// CHECK-NEXT: comm.all_reduce %{{.+}} mean : tensor<4xf32>
// CHECK-NEXT: comm.all_reduce %{{.+}} mean {compress_slot = 0 : i64} : tensor<16x8xf32>
// CHECK-NEXT: comm.all_reduce %{{.+}} mean : tensor<16xf32>

// Tests that lgreco's options reach the attribute as given.
// LGRECO: #loom.compression<method = "lgreco", rank = 2, bits = 8, density = 1.000000e-02 : f64, warmup_steps = 5, resolve_every = 50, objective = "bytes", params = ["w1", "w2"]

// Tests that with --overlap the biases and the loss share a bucket while
// each compressed all-reduce stays its own, asynchronous, slot kept.
// OVERLAP-LABEL: func.func @loss_and_grad(
// OVERLAP-DAG: comm.all_reduce_start %{{.+}} mean : tensor<21xf32>
// OVERLAP-DAG: comm.all_reduce_start %{{.+}} mean {compress_slot = 1 : i64} : tensor<4x16xf32>
// OVERLAP-DAG: comm.all_reduce_start %{{.+}} mean {compress_slot = 0 : i64} : tensor<16x8xf32>

// Tests that a compressed all-reduce calls the runtime's compressed form
// with its slot as the last argument (f32 = 0, mean = 1).
// LOWERED: func.func private @loom_rt_compressed_all_reduce(i64, !llvm.ptr, i64, i32, i32, i32)
// LOWERED: %[[C64:.+]] = arith.constant 64 : i64
// LOWERED: call @loom_rt_compressed_all_reduce(%{{.+}}, %{{.+}}, %[[C64]], %{{.+}}, %{{.+}}, %{{.+}}) : (i64, !llvm.ptr, i64, i32, i32, i32) -> ()

// STATS: CompressPass
// STATS-NEXT: (S) 2 num-compressed

// Tests the bad options: each names what is wrong.
// RANK: error: --loom-compress: PowerSGD rank 8 is above the smaller dimension 4 of @w2's gradient (4 x 16); choose a rank of at most 4
// BITS: error: --loom-compress: bits must be 2, 4 or 8, got 3
// DENSITY: error: --loom-compress: density must be in (0, 1], got 1.5
// WARMUP: error: --loom-compress: lgreco needs at least one warm-up step (it measures at the last)
// METHOD: error: --loom-compress: method must be bf16, powersgd, quant, topk or lgreco, got "zip"
// FIRST: error: --loom-compress needs @loss_and_grad: run --loom-autodiff and --loom-data-parallel first
// ZERO2: error: --loom-shard-state{stage=2}: the gradient of @w1 is compressed (--loom-compress), which averages whole gradients; stage 2 reduce-scatters them
// F64: error: --loom-compress: compressed gradients are f32; @w is 'f64'

//--- model.mlir
module @two_layers {
  loom.param @w1 : tensor<16x8xf32> init normal scale 0.5
  loom.param @b1 : tensor<16xf32> init zeros {no_weight_decay}
  loom.param @w2 : tensor<4x16xf32> init normal scale 0.5
  loom.param @b2 : tensor<4xf32> init zeros {no_weight_decay}
  func.func @loss(%x: tensor<2x8xf32> {loom.input = "x"}, %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %w1 = loom.get_param @w1 : tensor<16x8xf32>
    %b1 = loom.get_param @b1 : tensor<16xf32>
    %w2 = loom.get_param @w2 : tensor<4x16xf32>
    %b2 = loom.get_param @b2 : tensor<4xf32>
    %h = loom.linear %x, %w1, %b1 : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x16xf32>
    %o = loom.linear %h, %w2, %b2 : (tensor<2x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %l = loom.cross_entropy %o, %y : (tensor<2x4xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
//--- f64.mlir
module {
  loom.param @w : tensor<3x4xf64> init normal scale 0.5
  func.func @loss(%x: tensor<2x4xf64> {loom.input = "x"}) -> tensor<f64> {
    %w = loom.get_param @w : tensor<3x4xf64>
    %h = loom.matmul %x, %w transpose_b : (tensor<2x4xf64>, tensor<3x4xf64>) -> tensor<2x3xf64>
    %l = loom.sum %h axes = [0, 1] : tensor<2x3xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
