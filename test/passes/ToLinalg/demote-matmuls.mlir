// RUN: loom-opt %s -split-input-file -loom-demote-matmuls | FileCheck %s

// Tests that an f32 matmul gets both operands rounded to bf16 by one
// elementwise linalg.generic each (arith.truncf), keeps its transposed
// operand maps and its f32 init, and multiplies bf16 into f32.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[A:.+]]: tensor<8x4xf32>, %[[B:.+]]: tensor<8x16xf32>, %[[C:.+]]: tensor<4x16xf32>)
// CHECK: %[[AE:.+]] = tensor.empty() : tensor<8x4xbf16>
// CHECK: %[[A16:.+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8x4xf32>) outs(%[[AE]] : tensor<8x4xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[B16:.+]] = linalg.generic {{.*}} ins(%[[B]] : tensor<8x16xf32>)
// CHECK: arith.truncf
// CHECK: %[[R:.+]] = linalg.matmul indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}] ins(%[[A16]], %[[B16]] : tensor<8x4xbf16>, tensor<8x16xbf16>) outs(%[[C]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: return %[[R]]
#ta = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @plain(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.matmul indexing_maps = [#ta, #b, #c]
      ins(%a, %b : tensor<8x4xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Tests that batch_matmul is demoted the same way.
// CHECK-LABEL: func.func @batched
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%{{.+}} : tensor<2x4x16xf32>)
func.func @batched(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// Tests that f64 matmuls (gradient checks) and matmuls on buffers are left
// alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: bf16
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf64>, tensor<8x16xf64>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xf32>, memref<8x16xf32>)
func.func @untouched(%a: tensor<4x8xf64>, %b: tensor<8x16xf64>, %c: tensor<4x16xf64>,
                     %ma: memref<4x8xf32>, %mb: memref<8x16xf32>, %mc: memref<4x16xf32>) -> tensor<4x16xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf64>, tensor<8x16xf64>) outs(%c : tensor<4x16xf64>) -> tensor<4x16xf64>
  linalg.matmul ins(%ma, %mb : memref<4x8xf32>, memref<8x16xf32>) outs(%mc : memref<4x16xf32>)
  return %r : tensor<4x16xf64>
}

// -----

// Tests that the rounding looks through a slice, a collapse and a transpose
// to the tensor they start from, and redoes them on bf16, so that
// elementwise fusion can merge the rounding into that tensor's producer.
// CHECK-LABEL: func.func @through_views
// CHECK-SAME: (%[[X:.+]]: tensor<4x2x8xf32>, %[[W:.+]]: tensor<4x16xf32>
// CHECK: %[[X16:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x2x8xf32>) outs(%{{.+}} : tensor<4x2x8xbf16>)
// CHECK: %[[T16:.+]] = linalg.transpose ins(%[[X16]] : tensor<4x2x8xbf16>) outs(%{{.+}} : tensor<2x4x8xbf16>) permutation = [1, 0, 2]
// CHECK: %[[C16:.+]] = tensor.collapse_shape %[[T16]] {{\[\[}}0, 1], [2]] : tensor<2x4x8xbf16> into tensor<8x8xbf16>
// CHECK: %[[S16:.+]] = tensor.extract_slice %[[C16]][0, 2] [8, 4] [1, 1] : tensor<8x8xbf16> to tensor<8x4xbf16>
// CHECK: %[[W16:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x16xf32>)
// CHECK: linalg.matmul ins(%[[S16]], %[[W16]] : tensor<8x4xbf16>, tensor<4x16xbf16>)
func.func @through_views(%x: tensor<4x2x8xf32>, %w: tensor<4x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %t = linalg.transpose ins(%x : tensor<4x2x8xf32>) outs(%e : tensor<2x4x8xf32>) permutation = [1, 0, 2]
  %cs = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %s = tensor.extract_slice %cs[0, 2] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %r = linalg.matmul ins(%s, %w : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
