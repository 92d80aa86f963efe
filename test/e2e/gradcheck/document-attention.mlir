// Tests the gradients of loom.document_attention, which on the CPU target
// is the runtime's blocked kernel (forward and gradient), against central
// finite differences of the kernel's forward (float64): two heads, queries
// of three documents (one of them split around keys of another), keys of
// four (one without queries), positions not in token order. The same
// model with the attention decomposed (the dense masked form the other
// targets use, forced by --emulate-gpu-loops) gives the same loss.
// RUN: loomc %s -o %t && loom-gradcheck %t --samples 40 | FileCheck %s
// CHECK: gradcheck: PASS
// RUN: loomc %s -o %t.dense --emulate-gpu-loops && loom-gradcheck %t.dense --samples 40 | FileCheck %s
// RUN: loom-run %t --eval --eval-batches 1 --metrics %t.kernel.jsonl 2>/dev/null
// RUN: loom-run %t.dense --eval --eval-batches 1 --metrics %t.dense.jsonl 2>/dev/null
// RUN: %python %S/../Inputs/same_loss.py %t.kernel.jsonl:eval %t.dense.jsonl:eval --rtol 1e-12 \
// RUN:   | FileCheck %s --check-prefix=SAME
// SAME: same loss
module {
  loom.param @q : tensor<2x6x4xf64> init normal scale 1.0
  loom.param @k : tensor<2x9x4xf64> init normal scale 1.0
  loom.param @v : tensor<2x9x4xf64> init normal scale 1.0
  loom.param @cotangent : tensor<2x6x4xf64> init normal scale 1.0
  func.func @loss() -> tensor<f64> {
    %q = loom.get_param @q : tensor<2x6x4xf64>
    %k = loom.get_param @k : tensor<2x9x4xf64>
    %v = loom.get_param @v : tensor<2x9x4xf64>
    %cot = loom.get_param @cotangent : tensor<2x6x4xf64>
    %qd = arith.constant dense<[3, 3, 5, 3, 8, 8]> : tensor<6xi32>
    %qp = arith.constant dense<[1, 4, 0, 2, 1, 0]> : tensor<6xi32>
    %kd = arith.constant dense<[3, 3, 3, 5, 9, 3, 8, 3, 8]> : tensor<9xi32>
    %kp = arith.constant dense<[0, 2, 1, 0, 0, 4, 0, 3, 1]> : tensor<9xi32>
    %o = loom.document_attention %q, %k, %v, %qd, %qp, %kd, %kp scale 0.5 : tensor<2x6x4xf64>, tensor<2x9x4xf64>, tensor<6xi32>, tensor<9xi32>
    %w = loom.mul %o, %cot : (tensor<2x6x4xf64>, tensor<2x6x4xf64>) -> tensor<2x6x4xf64>
    %l = loom.sum %w axes = [0, 1, 2] : tensor<2x6x4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
}
