// RUN: loom-opt %s -split-input-file -loom-lower-gemm-to-runtime | FileCheck %s

// Tests that a bufferized linalg.matmul becomes a call to loom_rt_gemm_f32
// with batch 1, no transposes, m/n/k, each operand's pointer (aligned base
// plus offset in bytes) and leading dimension, and beta = 1.
// CHECK-LABEL: module @plain
// CHECK: func.func private @loom_rt_gemm_f32(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK: func.func @plain(%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<8x16xf32>, %[[C:.+]]: memref<4x16xf32>)
// CHECK: %{{.+}}, %[[AOFF:.+]], %{{.+}}:2, %[[ASTR:.+]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[ABASE:.+]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK: %[[ABYTES:.+]] = arith.muli %[[AOFF]], %[[FOUR]] : index
// CHECK: %[[AADDR:.+]] = arith.addi %[[ABASE]], %[[ABYTES]] : index
// CHECK: %[[AI64:.+]] = arith.index_cast %[[AADDR]] : index to i64
// CHECK: %[[APTR:.+]] = llvm.inttoptr %[[AI64]] : i64 to !llvm.ptr
// CHECK: %[[ALD:.+]] = arith.index_cast %[[ASTR]]#0 : index to i64
// CHECK: %[[ABS:.+]] = arith.constant 0 : i64
// CHECK: memref.extract_strided_metadata %[[B]]
// CHECK: %[[BPTR:.+]] = llvm.inttoptr
// CHECK: %[[BLD:.+]] = arith.index_cast
// CHECK: %[[BBS:.+]] = arith.constant 0 : i64
// CHECK: memref.extract_strided_metadata %[[C]]
// CHECK: %[[CPTR:.+]] = llvm.inttoptr
// CHECK: %[[CLD:.+]] = arith.index_cast
// CHECK: %[[CBS:.+]] = arith.constant 0 : i64
// CHECK: %[[BETA:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BATCH:.+]] = arith.constant 1 : i64
// CHECK: %[[TA:.+]] = arith.constant 0 : i32
// CHECK: %[[TB:.+]] = arith.constant 0 : i32
// CHECK: %[[M:.+]] = arith.constant 4 : i64
// CHECK: %[[N:.+]] = arith.constant 16 : i64
// CHECK: %[[K:.+]] = arith.constant 8 : i64
// CHECK: call @loom_rt_gemm_f32(%[[BATCH]], %[[TA]], %[[TB]], %[[M]], %[[N]], %[[K]], %[[APTR]], %[[ALD]], %[[ABS]], %[[BPTR]], %[[BLD]], %[[BBS]], %[[BETA]], %[[CPTR]], %[[CLD]], %[[CBS]])
// CHECK-NOT: linalg.matmul
// CHECK: return
module @plain {
  func.func @plain(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
    linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
    return
  }
}

// -----

// Tests that transposed operand maps set the transpose flags, and that k is
// read from the transposed lhs.
// CHECK-LABEL: module @transposed
// CHECK: func.func @transposed
// CHECK: %[[TA:.+]] = arith.constant 1 : i32
// CHECK: %[[TB:.+]] = arith.constant 1 : i32
// CHECK: %[[M:.+]] = arith.constant 4 : i64
// CHECK: %[[N:.+]] = arith.constant 16 : i64
// CHECK: %[[K:.+]] = arith.constant 8 : i64
// CHECK: call @loom_rt_gemm_f32(%{{.+}}, %[[TA]], %[[TB]], %[[M]], %[[N]], %[[K]],
// CHECK-NOT: linalg.matmul
#AT = affine_map<(d0, d1, d2) -> (d2, d0)>
#BT = affine_map<(d0, d1, d2) -> (d1, d2)>
#C = affine_map<(d0, d1, d2) -> (d0, d1)>
module @transposed {
  func.func @transposed(%a: memref<8x4xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
    linalg.matmul indexing_maps = [#AT, #BT, #C] ins(%a, %b : memref<8x4xf32>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
    return
  }
}

// -----

// Tests that only the rhs transpose flag is set for a transpose_b map.
// CHECK-LABEL: module @transposed_b
// CHECK: %[[TA:.+]] = arith.constant 0 : i32
// CHECK: %[[TB:.+]] = arith.constant 1 : i32
// CHECK: call @loom_rt_gemm_f32(%{{.+}}, %[[TA]], %[[TB]],
#A = affine_map<(d0, d1, d2) -> (d0, d2)>
#BT = affine_map<(d0, d1, d2) -> (d1, d2)>
#C = affine_map<(d0, d1, d2) -> (d0, d1)>
module @transposed_b {
  func.func @transposed_b(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
    linalg.matmul indexing_maps = [#A, #BT, #C] ins(%a, %b : memref<4x8xf32>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
    return
  }
}

// -----

// Tests that an f64 matmul calls loom_rt_gemm_f64 with an f64 beta and
// 8-byte element offsets.
// CHECK-LABEL: module @f64
// CHECK: func.func private @loom_rt_gemm_f64(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f64, !llvm.ptr, i64, i64)
// CHECK-NOT: loom_rt_gemm_f32
// CHECK: arith.constant 8 : index
// CHECK: %[[BETA:.+]] = arith.constant 1.000000e+00 : f64
// CHECK: call @loom_rt_gemm_f64({{.*}}, %[[BETA]], {{.*}}) : (i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f64, !llvm.ptr, i64, i64) -> ()
// CHECK-NOT: linalg.matmul
module @f64 {
  func.func @f64(%a: memref<4x8xf64>, %b: memref<8x16xf64>, %c: memref<4x16xf64>) {
    linalg.matmul ins(%a, %b : memref<4x8xf64>, memref<8x16xf64>) outs(%c : memref<4x16xf64>)
    return
  }
}

// -----

// Tests that a batch_matmul passes the batch count and each operand's batch
// stride (stride of dimension 0) and leading dimension (stride of dim 1).
// CHECK-LABEL: module @batched
// CHECK: %{{.+}}, %{{.+}}, %{{.+}}:3, %[[ASTR:.+]]:3 = memref.extract_strided_metadata %{{.+}} : memref<2x4x8xf32>
// CHECK: %[[APTR:.+]] = llvm.inttoptr
// CHECK: %[[ALD:.+]] = arith.index_cast %[[ASTR]]#1 : index to i64
// CHECK: %[[ABS:.+]] = arith.index_cast %[[ASTR]]#0 : index to i64
// CHECK: %[[BATCH:.+]] = arith.constant 2 : i64
// CHECK: call @loom_rt_gemm_f32(%[[BATCH]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[APTR]], %[[ALD]], %[[ABS]],
// CHECK-NOT: linalg.batch_matmul
module @batched {
  func.func @batched(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
    linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
    return
  }
}

// -----

// Tests that a row-contiguous view with an offset and a larger row stride
// (a subview) is still lowered.
// CHECK-LABEL: module @subview
// CHECK: memref.extract_strided_metadata %{{.+}} : memref<4x8xf32, strided<[16, 1], offset: 2>>
// CHECK: call @loom_rt_gemm_f32
// CHECK-NOT: linalg.matmul
module @subview {
  func.func @subview(%a: memref<4x8xf32, strided<[16, 1], offset: 2>>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
    linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[16, 1], offset: 2>>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
    return
  }
}

// -----

// Tests that a matmul whose operand has a non-unit inner stride is left
// alone, with no runtime call and no IR added.
// CHECK-LABEL: module @dont_lower_strided
// CHECK-NOT: loom_rt_gemm
// CHECK: func.func @dont_lower_strided(%[[A:.+]]: memref<4x8xf32, strided<[1, 4]>>, %[[B:.+]]: memref<8x16xf32>, %[[C:.+]]: memref<4x16xf32>) {
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[B]] : memref<4x8xf32, strided<[1, 4]>>, memref<8x16xf32>) outs(%[[C]] : memref<4x16xf32>)
// CHECK-NEXT: return
module @dont_lower_strided {
  func.func @dont_lower_strided(%a: memref<4x8xf32, strided<[1, 4]>>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
    linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[1, 4]>>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
    return
  }
}

// -----

// Tests that matmuls on tensors (not bufferized) and on integers are left
// alone and declare no runtime function.
// CHECK-LABEL: module @dont_lower_tensor_or_int
// CHECK-NOT: loom_rt_gemm
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xi32>, memref<8x16xi32>)
// CHECK-NOT: loom_rt_gemm
module @dont_lower_tensor_or_int {
  func.func @tensor(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
  func.func @ints(%a: memref<4x8xi32>, %b: memref<8x16xi32>, %c: memref<4x16xi32>) {
    linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x16xi32>) outs(%c : memref<4x16xi32>)
    return
  }
}

// -----

// Tests that bf16 operands into an f32 result (--loom-demote-matmuls) call
// loom_rt_gemm_bf16 with an f32 beta, batched and transposed alike, and
// that bf16 into bf16 and mixed f32/bf16 operands are left for the loops.
// CHECK-LABEL: module @bf16
// CHECK: func.func private @loom_rt_gemm_bf16(i64, i32, i32, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64)
// CHECK: func.func @mixed
// CHECK: %[[BETA:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BATCH:.+]] = arith.constant 2 : i64
// CHECK: %[[TA:.+]] = arith.constant 1 : i32
// CHECK: call @loom_rt_gemm_bf16(%[[BATCH]], %[[TA]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[BETA]],
// CHECK: func.func @not_gemm_shaped
// CHECK-NOT: call
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xbf16>, memref<8x16xbf16>) outs(%{{.+}} : memref<4x16xbf16>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xf32>, memref<8x16xbf16>) outs(%{{.+}} : memref<4x16xf32>)
module @bf16 {
  func.func @mixed(%a: memref<2x8x4xbf16>, %b: memref<2x8x16xbf16>, %c: memref<2x4x16xf32>) {
    linalg.batch_matmul
        indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>,
                         affine_map<(b, m, n, k) -> (b, k, n)>,
                         affine_map<(b, m, n, k) -> (b, m, n)>]
        ins(%a, %b : memref<2x8x4xbf16>, memref<2x8x16xbf16>) outs(%c : memref<2x4x16xf32>)
    return
  }
  func.func @not_gemm_shaped(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>,
                             %fa: memref<4x8xf32>, %fc: memref<4x16xf32>) {
    linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
    linalg.matmul ins(%fa, %b : memref<4x8xf32>, memref<8x16xbf16>) outs(%fc : memref<4x16xf32>)
    return
  }
}
