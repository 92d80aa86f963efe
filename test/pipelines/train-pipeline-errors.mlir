// Tests that bad options of --loom-train-pipeline are errors at the module
// (exit 1), not a crash of loom-opt: they once reached report_fatal_error,
// which printed "LLVM ERROR" and a stack dump.

// RUN: not loom-opt %s --loom-train-pipeline=dp=0 2>&1 | FileCheck %s --check-prefix=DP0
// RUN: not loom-opt %s --loom-train-pipeline=dp=-1 2>&1 | FileCheck %s --check-prefix=DPNEG
// RUN: not loom-opt %s --loom-train-pipeline=co2=true 2>&1 | FileCheck %s --check-prefix=CO2
// RUN: not loom-opt %s --loom-train-pipeline="dp=2 overlap=true co2=true" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CO2-OVERLAP

// DP0: train-pipeline-errors.mlir:[[@LINE+5]]:1: error: ranks must be positive, got 0
// DPNEG: error: ranks must be positive, got -1
// CO2: train-pipeline-errors.mlir:[[@LINE+3]]:1: error: --loom-co2 needs a data-parallel module: run --loom-data-parallel first
// CO2-OVERLAP: error: --loom-co2 expects the synchronous all-reduces of --loom-data-parallel (compile without --overlap)
// CHECK-NOT: LLVM ERROR
module attributes {loom.task = {kind = "classify", features = 4 : i64, classes = 3 : i64, batch = 2 : i64}} {
  loom.param @w : tensor<3x4xf32> init normal scale 5.000000e-01
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"},
                  %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<3x4xf32>
    %logits = loom.linear %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %l = loom.cross_entropy %logits, %y : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
