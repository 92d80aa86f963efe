// RUN: loom-opt %s -split-input-file --loom-bufferize-pipeline | FileCheck %s

// Tests that loom.document_attention (kept for the CPU runtime by
// --loom-decompose keep-runtime-kernels) bufferizes to one call of
// loom_rt_document_attention(dtype, heads, nq, nk, dh, scale, q, k, v, qdoc,
// qpos, kdoc, kpos, out) on dense buffers, writing a new buffer.
// CHECK: func.func private @loom_rt_document_attention(i32, i64, i64, i64, i64, f64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr){{$}}
// CHECK-LABEL: func.func @attend(
// CHECK-NOT: loom.
// CHECK-DAG: %[[F32:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[H:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[NQ:.+]] = arith.constant 4 : i64
// CHECK-DAG: %[[NK:.+]] = arith.constant 6 : i64
// CHECK-DAG: %[[DH:.+]] = arith.constant 8 : i64
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f64
// CHECK: call @loom_rt_document_attention(%[[F32]], %[[H]], %[[NQ]], %[[NK]], %[[DH]], %[[SCALE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NOT: loom.
func.func @attend(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %qd: tensor<4xi32>, %kd: tensor<6xi32>) -> tensor<2x4x8xf32> {
  %o = loom.document_attention %q, %k, %k, %qd, %qd, %kd, %kd scale 0.5 : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<4xi32>, tensor<6xi32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Tests that the gradient calls loom_rt_document_attention_grad with the
// output gradient after the values and three new buffers (dq, dk, dv) last.
// CHECK: func.func private @loom_rt_document_attention_grad(i32, i64, i64, i64, i64, f64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr){{$}}
// CHECK-LABEL: func.func @attend_grad(
// CHECK: call @loom_rt_document_attention_grad(
// CHECK-NOT: loom.
func.func @attend_grad(%q: tensor<2x4x8xf64>, %k: tensor<2x6x8xf64>, %qd: tensor<4xi32>, %kd: tensor<6xi32>) -> tensor<2x6x8xf64> {
  %dq, %dk, %dv = loom.document_attention_grad %q, %k, %k, %q, %qd, %qd, %kd, %kd scale 0.5 : tensor<2x4x8xf64>, tensor<2x6x8xf64>, tensor<4xi32>, tensor<6xi32>
  return %dk : tensor<2x6x8xf64>
}
