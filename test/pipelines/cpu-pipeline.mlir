// RUN: loom-opt %s -split-input-file --loom-train-pipeline \
// RUN:   | loom-opt -split-input-file --loom-cpu-pipeline \
// RUN:   | FileCheck %s --implicit-check-not='{{loom\.[a-z_]+ [%@]|"loom\.|[ "](linalg|memref|tensor|bufferization|scf|cf|math|arith|func|affine)\.[a-z_]+}}'

// RUN: loom-opt %s -split-input-file --loom-train-pipeline \
// RUN:   | loom-opt -split-input-file --loom-cpu-pipeline="bf16=1" \
// RUN:   | FileCheck %s --check-prefix=BF16 --implicit-check-not='{{llvm.call @loom_rt_gemm_f32|llvm.fptrunc|llvm.fpext}}'

// Tests that the CPU pipeline takes the train stage of a tiny model to the
// LLVM dialect: every entry becomes the exported `loom_<entry>(ptr)` with
// its loom.abi, loading the address of each buffer from the array where it
// first uses it, matmuls call the runtime GEMM, and no loom, linalg,
// memref, tensor, bufferization, scf, cf, math, arith, func or affine op is
// left (the implicit-check-not above).
// With bf16 (mixed precision) every GEMM calls loom_rt_gemm_bf16, and the
// f32 <-> bf16 conversions are integer ops (no fptrunc/fpext, which LLVM
// would turn into libgcc calls on CPUs without AVX512-BF16).
// BF16-LABEL: module @tiny
// BF16: llvm.func @loom_rt_gemm_bf16(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// BF16: llvm.lshr
// BF16: llvm.trunc %{{.+}} : i32 to i16
// BF16: llvm.func @loom_train_step(
// BF16: llvm.call @loom_rt_gemm_bf16(
// CHECK-LABEL: module @tiny
// CHECK: llvm.func @loom_rt_gemm_f32(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK: llvm.func @loom_loss(%{{.+}}: !llvm.ptr)
// CHECK-SAME: loom.abi = [{name = "fc.weight", role = "param"}, {name = "fc.bias", role = "param"}, {name = "x", role = "input"}, {name = "y", role = "input"}, {name = "loss", role = "output"}]
// CHECK: llvm.call @loom_rt_gemm_f32(
// CHECK: llvm.func @loom_loss_and_grad(%{{.+}}: !llvm.ptr)
// CHECK: llvm.func @loom_train_step(%[[ARGS:.+]]: !llvm.ptr)
// CHECK-SAME: {name = "fc.weight", role = "param"}, {name = "fc.bias", role = "param"},
// CHECK-SAME: {name = "fc.weight.exp_avg", role = "state"}, {name = "fc.weight.exp_avg_sq", role = "state"},
// CHECK-SAME: {name = "fc.bias.exp_avg", role = "state"}, {name = "fc.bias.exp_avg_sq", role = "state"},
// CHECK-SAME: {name = "step", role = "step"}, {name = "x", role = "input"}, {name = "y", role = "input"},
// CHECK-SAME: {name = "loss", role = "output"}, {name = "lr", role = "output"}, {name = "grad_norm", role = "output"}]
// CHECK: llvm.call @loom_rt_gemm_f32(
// CHECK: llvm.intr.pow
// CHECK: llvm.getelementptr %[[ARGS]][11] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NOT: llvm.getelementptr %[[ARGS]][12]
// CHECK-NOT: llvm.func internal @train_step(
module @tiny {
  loom.param @"fc.weight" : tensor<3x4xf32> init normal scale 0.5
  loom.param @"fc.bias" : tensor<3xf32> init zeros {no_weight_decay}
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}, %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %w = loom.get_param @"fc.weight" : tensor<3x4xf32>
    %b = loom.get_param @"fc.bias" : tensor<3xf32>
    %h = loom.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = loom.cross_entropy %h, %y : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a model with a public helper function (inlined into @loss but
// not an entry) still compiles to the LLVM dialect.
// CHECK-LABEL: module @public_helper
// CHECK: llvm.func @loom_train_step(
module @public_helper {
  loom.param @w : tensor<4x3xf32> init normal scale 0.5
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
    %w = loom.get_param @w : tensor<4x3xf32>
    %h = loom.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    return %h : tensor<2x3xf32>
  }
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}) -> tensor<f32> {
    %h = func.call @forward(%x) : (tensor<2x4xf32>) -> tensor<2x3xf32>
    %l = loom.mean %h axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
