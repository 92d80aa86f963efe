// RUN: loom-opt %s -split-input-file -loom-fuse-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// Tests that a chain of elementwise generics becomes one generic whose body
// computes both steps.
// CHECK-LABEL: func.func @fuse_chain
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: %[[S:.+]] = arith.addf
// CHECK-NEXT: %[[E:.+]] = math.exp %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @fuse_chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s = arith.addf %in, %in_0 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that generics around a linalg.matmul are not fused into it: the
// matmul stays a named op for the runtime GEMM, with its fill.
// CHECK-LABEL: func.func @dont_fuse_into_matmul
// CHECK: %[[RELU:.+]] = linalg.generic
// CHECK: arith.maximumf
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[RELU]], %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[MM]] : tensor<4x16xf32>)
// CHECK: arith.negf
func.func @dont_fuse_into_matmul(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = linalg.matmul ins(%0, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that an elementwise producer of a linalg.reduce is not fused into it.
// CHECK-LABEL: func.func @dont_fuse_into_reduce
// CHECK: %[[EXP:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.reduce ins(%[[EXP]] : tensor<4x8xf32>)
func.func @dont_fuse_into_reduce(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %2 = linalg.reduce ins(%0 : tensor<4x8xf32>) outs(%1 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %2 : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Tests that a generic a matmul also uses (the attention probabilities) is
// not fused into a generic consumer: it is materialised for the matmul
// anyway, and fused, the consumer would recompute it from the producer's
// operand, keeping that alive too. The consumer reads the producer's result.
// CHECK-LABEL: func.func @dont_recompute_materialised
// CHECK: %[[P:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.matmul ins(%[[P]],
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.mulf
func.func @dont_recompute_materialised(%s: tensor<4x8xf32>, %v: tensor<8x16xf32>, %dp: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%cst : f32) outs(%e1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%p, %v : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %ds = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %dp : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %y, %ds : tensor<4x16xf32>, tensor<4x8xf32>
}

// -----

// Tests that a fusion that would have more than max-operands operands is
// not made: with at most 4, a chain of three 0-d sums (the shape of the
// gradient norm's) fuses two of its adds (three inputs and an output) and
// not the third, which would take a fifth operand; the partial sum a + b
// is its own op's result, read by the fused op, so the order of the
// additions stays ((a + b) + c) + d.
// RUN: loom-opt %s -split-input-file -loom-fuse-elementwise="max-operands=4" | FileCheck %s --check-prefix=BOUND
// BOUND-LABEL: func.func @bounded_chain
// BOUND-SAME: (%[[A:[^:]+]]: tensor<f32>, %[[B:[^:]+]]: tensor<f32>, %[[C:[^:]+]]: tensor<f32>, %[[D:[^:]+]]: tensor<f32>)
// BOUND: %[[P:.+]] = linalg.generic
// BOUND-SAME: ins(%[[A]], %[[B]] : tensor<f32>, tensor<f32>)
// BOUND: arith.addf
// BOUND: %[[R:.+]] = linalg.generic
// BOUND-SAME: ins(%[[P]], %[[C]], %[[D]] : tensor<f32>, tensor<f32>, tensor<f32>)
// BOUND: ^bb0(%[[IP:[^:]+]]: f32, %[[IC:[^:]+]]: f32, %[[ID:[^:]+]]: f32,
// BOUND: %[[S:.+]] = arith.addf %[[IP]], %[[IC]]
// BOUND-NEXT: %[[T:.+]] = arith.addf %[[S]], %[[ID]]
// BOUND-NEXT: linalg.yield %[[T]]
// BOUND: return %[[R]]
// CHECK-LABEL: func.func @bounded_chain
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{[^:]+}}, %{{[^:]+}}, %{{[^:]+}}, %{{[^:]+}} : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
// CHECK-NOT: linalg.generic
#s = affine_map<() -> ()>
func.func @bounded_chain(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>) -> tensor<f32> {
  %e0 = tensor.empty() : tensor<f32>
  %0 = linalg.generic {indexing_maps = [#s, #s, #s], iterator_types = []} ins(%a, %b : tensor<f32>, tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<f32>
  %1 = linalg.generic {indexing_maps = [#s, #s, #s], iterator_types = []} ins(%0, %c : tensor<f32>, tensor<f32>) outs(%e1 : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<f32>
  %2 = linalg.generic {indexing_maps = [#s, #s, #s], iterator_types = []} ins(%1, %d : tensor<f32>, tensor<f32>) outs(%e2 : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %2 : tensor<f32>
}
