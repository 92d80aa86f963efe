// RUN: loom-opt %s --loom-gpu-kernels-pipeline | FileCheck %s
// RUN: loom-opt %s --pass-pipeline="builtin.module(loom-gpu-kernels-pipeline,loom-gpu-to-llvm-pipeline{format=isa})" \
// RUN:   | FileCheck %s --check-prefix=PTX

// Tests the shape of the kernels the GPU pipeline makes of the loop nests
// that dominate a training step (docs/gpu.md):
// - a bias gradient (a sum over the leading dimension) runs a thread per
//   output, not a kernel launch per summed row;
// - its accumulator stays in a register: loaded once, stored once;
// - a 2-d elementwise op runs on a one-dimensional grid whose threads take
//   consecutive elements of a row (coalesced);
// - the two touch disjoint buffers, so they are one launch: blocks 0 (the
//   256 outputs of the sum) and 1..4096 (the elementwise op);
// - constants are sunk into the kernels, so the loop bounds and the
//   divisions of the collapsed index are constants (shifts, an unrolled
//   loop), not kernel parameters.
// CHECK-LABEL: func.func @step(
// CHECK-NOT: scf.for
// CHECK: gpu.launch blocks(%[[BX:[^,]+]], {{.+}}) in (%{{.+}} = %c4097, %{{.+}} = %c1{{(_[0-9]+)?}}, %{{.+}} = %c1{{(_[0-9]+)?}}) threads(%[[TX:[^,]+]], {{.+}}) in (%{{.+}} = %c256{{(_[0-9]+)?}}, %{{.+}} = %c1{{(_[0-9]+)?}}, %{{.+}} = %c1{{(_[0-9]+)?}})
// CHECK: %[[I:.+]] = arith.addi %[[TX]], %{{.+}} : index
// CHECK: %[[SUM_PART:.+]] = arith.cmpi ult, %[[I]], %c256
// CHECK-NEXT: scf.if %[[SUM_PART]] {
// CHECK-NEXT: %[[INIT:.+]] = memref.load %arg1[%[[I]]]
// CHECK-NEXT: %[[SUM:.+]] = scf.for %[[K:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: memref.load %arg0[%[[K]], %[[I]]]
// CHECK: memref.store %[[SUM]], %arg1[%[[I]]]
// CHECK: scf.if
// CHECK-NEXT: %[[FLAT:.+]] = arith.subi %[[I]], %c256
// CHECK-NEXT: %[[COL:.+]] = arith.remsi %[[FLAT]], %c256
// CHECK-NEXT: %[[ROW:.+]] = arith.divsi %[[FLAT]], %c256
// CHECK-NEXT: memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return

// PTX: .visible .entry step_kernel(
// PTX-SAME: .param .u64 .ptr .align 1 step_kernel_param_0,
// PTX-SAME: .param .u64 .ptr .align 1 step_kernel_param_1,
// PTX-SAME: .param .u64 .ptr .align 1 step_kernel_param_2
// PTX-SAME: )
// The reduction loop (unrolled) stores nothing; the sum is stored after it.
// PTX-SAME: $L__BB0_{{[0-9]+}}:{{([^s]|s[^t]|st[^.])*}}ld.global.b32{{([^s]|s[^t]|st[^.])*}}ld.global.b32{{([^s]|s[^t]|st[^.])*}}bra \09$L__BB0_{{[0-9]+}};\0A\09st.global.b32
// PTX-NOT: div.s64
// PTX-NOT: rem.s64
// PTX-NOT: .entry
func.func @step(%a: memref<4096x256xf32>, %bias_grad: memref<256xf32>,
                %b: memref<4096x256xf32>) attributes {loom.entry = "step"} {
  linalg.reduce ins(%a : memref<4096x256xf32>) outs(%bias_grad : memref<256xf32>) dimensions = [0]
  (%x: f32, %y: f32) {
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4096x256xf32>) outs(%b : memref<4096x256xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
