// RUN: loom-opt %s --loom-train-pipeline \
// RUN:   | loom-opt --loom-cuda-pipeline="format=isa" \
// RUN:   | FileCheck %s --implicit-check-not='{{loom\.[a-z_]+ [%@]|"loom\.|[ "](linalg|memref|tensor|bufferization|scf|cf|math|arith|func|affine)\.[a-z_]+|llvm.call @loom_rt_gemm_f32|_mlir_memref_to_llvm_alloc|llvm.alloca}}'
// RUN: loom-opt %s --loom-train-pipeline \
// RUN:   | loom-opt --loom-cuda-pipeline="format=isa bf16=1" \
// RUN:   | FileCheck %s --check-prefix=BF16 --implicit-check-not='llvm.call @loom_rt_gpu_gemm_f32'
// RUN: loom-opt %s --loom-train-pipeline \
// RUN:   | loom-opt --loom-cuda-pipeline="format=isa" \
// RUN:   | FileCheck %s --check-prefix=SQRT --implicit-check-not=sqrt.approx

// Adam's square root is the correctly rounded PTX instruction, as on the
// CPU and in nvcc's default, not libdevice's approximation
// (--loom-precise-gpu-sqrt).
// SQRT: gpu.binary @loom_kernels{{.*}}.visible .entry train_step_kernel{{.*}}sqrt.rn.f32

// With bf16 (mixed precision) every GEMM calls cuBLAS's bf16 GEMM and the
// kernels round its operands with the GPU's own conversion instruction.
// BF16: llvm.func @loom_rt_gpu_gemm_bf16(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// BF16: llvm.call @loom_rt_gpu_gemm_bf16(
// BF16: gpu.binary @loom_kernels{{.*}}cvt.rn.bf16.f32

// Tests that the NVIDIA GPU pipeline takes the train stage of a tiny model
// to host code in the LLVM dialect plus PTX kernels for sm_90: every entry
// keeps its loom.abi and gets its `loom_<entry>(ptr)` wrapper; matmuls call
// the runtime's cuBLAS GEMM; temporaries come from the runtime's device
// pool (mgpuMemAlloc), never from host memory or the host stack; every
// loop nest is a kernel launch, with blocks of 256 threads for elementwise
// work and one-thread kernels for what the loop mapping left on the host;
// and no loom, linalg, memref, tensor, scf, math, arith or func op is left
// on the host (the implicit-check-not above).
// CHECK-LABEL: module @tiny
// CHECK: llvm.func @loom_rt_gpu_gemm_f32(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK: llvm.func internal @loss(
// CHECK-SAME: loom.abi = [{name = "fc.weight", role = "param"}, {name = "fc.bias", role = "param"}, {name = "x", role = "input"}, {name = "y", role = "input"}, {name = "loss", role = "output"}]
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: llvm.call @loom_rt_gpu_gemm_f32(
// CHECK: gpu.launch_func <%{{.+}} : !llvm.ptr> @loom_kernels::@loss_kernel{{(_[0-9]+)?}} blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}})
// CHECK: llvm.call @mgpuMemFree(
// CHECK: llvm.func @loom_loss(%{{.+}}: !llvm.ptr) {
// Every kernel of every entry is in one module, so one binary (one ptxas
// run; --loom-merge-gpu-modules).
// The optimizer's kernel reads the step on the device and computes Adam's
// bias corrections there (the host never reads a buffer).
// CHECK: gpu.binary @loom_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry loss_kernel({{.*}}.maxntid 256, 1, 1{{.*}}%tid.x{{.*}}.visible .entry train_step_kernel{{.*}}ld.global{{.*}}cvt.rn.f32.s64
// CHECK-NOT: gpu.binary
// CHECK: llvm.func internal @train_step(
// CHECK-SAME: {name = "step", role = "step"}
// CHECK-SAME: loom.entry = "train_step"
// CHECK: llvm.call @loom_rt_gpu_gemm_f32(
// CHECK-NOT: gpu.binary
// CHECK: llvm.func @loom_train_step(%{{.+}}: !llvm.ptr) {
// CHECK-NOT: gpu.binary
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
