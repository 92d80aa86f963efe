// RUN: loom-opt %s -split-input-file -verify-diagnostics --loom-bufferize-pipeline | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics --one-shot-bufferize | FileCheck %s --check-prefix=ONESHOT

// Tests that all_reduce bufferizes to one call of loom_rt_all_reduce(group,
// buffer, element count, dtype, op), declared once, on group 0; that the
// collective works in place on a copy of the read-only input buffer, which
// is then written to the destination; and that the pipeline drops the mesh
// (one-shot-bufferize alone keeps it).
// CHECK-LABEL: module @all_reduce
// CHECK-NOT: comm.
// CHECK: func.func private @loom_rt_all_reduce(i64, !llvm.ptr, i64, i32, i32){{$}}
// CHECK-NOT: comm.
// CHECK-LABEL: func.func @sum_f32(
// CHECK-SAME: %[[ARG:.+]]: memref<2x3xf32>)
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 6 : i64
// CHECK-DAG: %[[F32_SUM:.+]] = arith.constant 0 : i32
// CHECK: %[[BUF:.+]] = memref.alloca() {{.*}}: memref<2x3xf32>
// CHECK-NEXT: memref.copy %[[ARG]], %[[BUF]]
// CHECK-NEXT: %[[INT:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[INT]] : index to i64
// CHECK-NEXT: %[[PTR:.+]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_all_reduce(%[[GROUP]], %[[PTR]], %[[COUNT]], %[[F32_SUM]], %[[F32_SUM]]) : (i64, !llvm.ptr, i64, i32, i32) -> ()
// CHECK-NEXT: memref.copy %[[BUF]], %[[ARG]]
// CHECK-NEXT: return
// ONESHOT-LABEL: module @all_reduce
// ONESHOT: comm.mesh @world shape = [2] axes = ["dp"]
// ONESHOT: call @loom_rt_all_reduce(
// ONESHOT-NOT: comm.all_reduce
module @all_reduce {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @sum_f32(%m: memref<2x3xf32>) {
    %t = bufferization.to_tensor %m restrict : memref<2x3xf32> to tensor<2x3xf32>
    %r = comm.all_reduce %t over @world ["dp"] sum : tensor<2x3xf32>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<2x3xf32>, memref<2x3xf32>) -> ()
    return
  }
}

// -----

// Tests the dtype codes (f32 0, f64 1, i32 2, i64 3), the op codes (sum 0,
// mean 1, max 2) and the element counts passed to loom_rt_all_reduce, with
// one declaration shared by every call.
// CHECK-LABEL: module @codes
// CHECK-COUNT-1: func.func private @loom_rt_all_reduce(i64, !llvm.ptr, i64, i32, i32)
// CHECK-NOT: func.func private @loom_rt_all_reduce
// CHECK-LABEL: func.func @mean_f64(
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 4 : i64
// CHECK-DAG: %[[F64_MEAN:.+]] = arith.constant 1 : i32
// CHECK: call @loom_rt_all_reduce(%[[GROUP]], %{{.+}}, %[[COUNT]], %[[F64_MEAN]], %[[F64_MEAN]])
// CHECK-LABEL: func.func @max_i32(
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 24 : i64
// CHECK-DAG: %[[I32_MAX:.+]] = arith.constant 2 : i32
// CHECK: call @loom_rt_all_reduce(%[[GROUP]], %{{.+}}, %[[COUNT]], %[[I32_MAX]], %[[I32_MAX]])
// CHECK-LABEL: func.func @sum_i64(
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[I64:.+]] = arith.constant 3 : i32
// CHECK-DAG: %[[SUM:.+]] = arith.constant 0 : i32
// CHECK: call @loom_rt_all_reduce(%[[GROUP]], %{{.+}}, %[[COUNT]], %[[I64]], %[[SUM]])
// CHECK-LABEL: func.func @mean_f32(
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 8 : i64
// CHECK-DAG: %[[F32:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[MEAN:.+]] = arith.constant 1 : i32
// CHECK: call @loom_rt_all_reduce(%[[GROUP]], %{{.+}}, %[[COUNT]], %[[F32]], %[[MEAN]])
// CHECK-NOT: call
// CHECK: return
module @codes {
  comm.mesh @world shape = [4] axes = ["dp"]
  func.func @mean_f64(%m: memref<4xf64>) {
    %t = bufferization.to_tensor %m restrict : memref<4xf64> to tensor<4xf64>
    %r = comm.all_reduce %t over @world ["dp"] mean : tensor<4xf64>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<4xf64>, memref<4xf64>) -> ()
    return
  }
  func.func @max_i32(%m: memref<2x3x4xi32>) {
    %t = bufferization.to_tensor %m restrict : memref<2x3x4xi32> to tensor<2x3x4xi32>
    %r = comm.all_reduce %t over @world ["dp"] max : tensor<2x3x4xi32>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<2x3x4xi32>, memref<2x3x4xi32>) -> ()
    return
  }
  func.func @sum_i64(%m: memref<i64>) {
    %t = bufferization.to_tensor %m restrict : memref<i64> to tensor<i64>
    %r = comm.all_reduce %t over @world ["dp"] sum : tensor<i64>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<i64>, memref<i64>) -> ()
    return
  }
  func.func @mean_f32(%m: memref<8xf32>) {
    %t = bufferization.to_tensor %m restrict : memref<8xf32> to tensor<8xf32>
    %r = comm.all_reduce %t over @world ["dp"] mean : tensor<8xf32>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<8xf32>, memref<8xf32>) -> ()
    return
  }
}

// -----

// Tests that all_reduce works in place on a writable buffer (no copy), and
// that it reduces a copy when its operand is still read afterwards.
// CHECK-LABEL: module @in_place
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[ARG:.+]]: memref<8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[INT:.+]] = memref.extract_aligned_pointer_as_index %[[ARG]]
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[INT]] : index to i64
// CHECK-NEXT: %[[PTR:.+]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_all_reduce(%{{.+}}, %[[PTR]], %{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NEXT: return
// CHECK-LABEL: func.func @dont_clobber_operand(
// CHECK-SAME: %[[ARG:.+]]: memref<8xf32>, %[[OUT:.+]]: memref<8xf32>)
// CHECK: %[[BUF:.+]] = memref.alloca() {{.*}}: memref<8xf32>
// CHECK-NEXT: memref.copy %[[ARG]], %[[BUF]]
// CHECK-NEXT: %[[INT:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[INT]] : index to i64
// CHECK-NEXT: %[[PTR:.+]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_all_reduce(%{{.+}}, %[[PTR]], %{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NEXT: memref.copy %[[BUF]], %[[OUT]]
// CHECK-NEXT: return
module @in_place {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @in_place(%m: memref<8xf32>) {
    %t = bufferization.to_tensor %m restrict writable : memref<8xf32> to tensor<8xf32>
    %r = comm.all_reduce %t over @world ["dp"] max : tensor<8xf32>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<8xf32>, memref<8xf32>) -> ()
    return
  }
  func.func @dont_clobber_operand(%m: memref<8xf32>, %o: memref<8xf32>) {
    %t = bufferization.to_tensor %m restrict writable : memref<8xf32> to tensor<8xf32>
    %r = comm.all_reduce %t over @world ["dp"] max : tensor<8xf32>
    bufferization.materialize_in_destination %r in restrict writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
    bufferization.materialize_in_destination %t in restrict writable %m : (tensor<8xf32>, memref<8xf32>) -> ()
    return
  }
}

// -----

// Tests that an operand that is a strided view is reduced in a dense copy,
// which is then written back into the view.
// CHECK-LABEL: module @strided
// CHECK-LABEL: func.func @column(
// CHECK-SAME: %[[ARG:.+]]: memref<4x4xf32>)
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 4 : i64
// CHECK: %[[VIEW:.+]] = memref.subview %[[ARG]][0, 1] [4, 1] [1, 1] : memref<4x4xf32> to memref<4x1xf32, strided<[4, 1], offset: 1>>
// CHECK: %[[BUF:.+]] = memref.alloca() {{.*}}: memref<4x1xf32>
// CHECK-NEXT: memref.copy %[[VIEW]], %[[BUF]]
// CHECK-NEXT: %[[INT:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]] : memref<4x1xf32>
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[INT]] : index to i64
// CHECK-NEXT: %[[PTR:.+]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_all_reduce(%{{.+}}, %[[PTR]], %[[COUNT]], %{{.+}}, %{{.+}})
// CHECK-NEXT: memref.copy %[[BUF]], %[[VIEW]]
// CHECK-NEXT: return
module @strided {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @column(%m: memref<4x4xf32>) {
    %t = bufferization.to_tensor %m restrict writable : memref<4x4xf32> to tensor<4x4xf32>
    %s = tensor.extract_slice %t[0, 1] [4, 1] [1, 1] : tensor<4x4xf32> to tensor<4x1xf32>
    %r = comm.all_reduce %s over @world ["dp"] sum : tensor<4x1xf32>
    %u = tensor.insert_slice %r into %t[0, 1] [4, 1] [1, 1] : tensor<4x1xf32> into tensor<4x4xf32>
    bufferization.materialize_in_destination %u in restrict writable %m : (tensor<4x4xf32>, memref<4x4xf32>) -> ()
    return
  }
}

// -----

// Tests that broadcast bufferizes to loom_rt_broadcast(group, buffer, count,
// dtype, root).
// CHECK-LABEL: module @broadcast
// CHECK: func.func private @loom_rt_broadcast(i64, !llvm.ptr, i64, i32, i32){{$}}
// CHECK-NOT: comm.
// CHECK-LABEL: func.func @root_3(
// CHECK-SAME: %[[ARG:.+]]: memref<3x2xf32>)
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 6 : i64
// CHECK-DAG: %[[F32:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[ROOT:.+]] = arith.constant 3 : i32
// CHECK: %[[BUF:.+]] = memref.alloca() {{.*}}: memref<3x2xf32>
// CHECK-NEXT: memref.copy %[[ARG]], %[[BUF]]
// CHECK-NEXT: %[[INT:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[INT]] : index to i64
// CHECK-NEXT: %[[PTR:.+]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_broadcast(%[[GROUP]], %[[PTR]], %[[COUNT]], %[[F32]], %[[ROOT]]) : (i64, !llvm.ptr, i64, i32, i32) -> ()
// CHECK-NEXT: memref.copy %[[BUF]], %[[ARG]]
// CHECK-NEXT: return
module @broadcast {
  comm.mesh @world shape = [4] axes = ["dp"]
  func.func @root_3(%m: memref<3x2xf32>) {
    %t = bufferization.to_tensor %m restrict : memref<3x2xf32> to tensor<3x2xf32>
    %r = comm.broadcast %t over @world ["dp"] root = 3 : tensor<3x2xf32>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<3x2xf32>, memref<3x2xf32>) -> ()
    return
  }
}

// -----

// Tests that reduce_scatter reads its operand's buffer in place and writes a
// new buffer: loom_rt_reduce_scatter(group, in, out, result element count,
// dtype, op).
// CHECK-LABEL: module @reduce_scatter
// CHECK: func.func private @loom_rt_reduce_scatter(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32){{$}}
// CHECK-NOT: comm.
// CHECK-LABEL: func.func @sum_i32(
// CHECK-SAME: %[[IN:.+]]: memref<4x3xi32>, %[[OUT:.+]]: memref<2x3xi32>)
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 6 : i64
// CHECK-DAG: %[[I32:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[SUM:.+]] = arith.constant 0 : i32
// CHECK: %[[BUF:.+]] = memref.alloca() {{.*}}: memref<2x3xi32>
// CHECK-NOT: memref.copy
// CHECK: %[[IN_INT:.+]] = memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK-NEXT: %[[IN_I64:.+]] = arith.index_cast %[[IN_INT]] : index to i64
// CHECK-NEXT: %[[IN_PTR:.+]] = llvm.inttoptr %[[IN_I64]] : i64 to !llvm.ptr
// CHECK-NEXT: %[[OUT_INT:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK-NEXT: %[[OUT_I64:.+]] = arith.index_cast %[[OUT_INT]] : index to i64
// CHECK-NEXT: %[[OUT_PTR:.+]] = llvm.inttoptr %[[OUT_I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_reduce_scatter(%[[GROUP]], %[[IN_PTR]], %[[OUT_PTR]], %[[COUNT]], %[[I32]], %[[SUM]]) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> ()
// CHECK-NEXT: memref.copy %[[BUF]], %[[OUT]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @mean_f64(
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[F64_MEAN:.+]] = arith.constant 1 : i32
// CHECK: call @loom_rt_reduce_scatter(%[[GROUP]], %{{.+}}, %{{.+}}, %[[COUNT]], %[[F64_MEAN]], %[[F64_MEAN]])
module @reduce_scatter {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @sum_i32(%m: memref<4x3xi32>, %o: memref<2x3xi32>) {
    %t = bufferization.to_tensor %m restrict : memref<4x3xi32> to tensor<4x3xi32>
    %r = comm.reduce_scatter %t over @world ["dp"] sum dim = 0 : tensor<4x3xi32> -> tensor<2x3xi32>
    bufferization.materialize_in_destination %r in restrict writable %o : (tensor<2x3xi32>, memref<2x3xi32>) -> ()
    return
  }
  func.func @mean_f64(%m: memref<4xf64>, %o: memref<2xf64>) {
    %t = bufferization.to_tensor %m restrict : memref<4xf64> to tensor<4xf64>
    %r = comm.reduce_scatter %t over @world ["dp"] mean dim = 0 : tensor<4xf64> -> tensor<2xf64>
    bufferization.materialize_in_destination %r in restrict writable %o : (tensor<2xf64>, memref<2xf64>) -> ()
    return
  }
}

// -----

// Tests that all_gather reads its operand's buffer in place and writes a new
// buffer: loom_rt_all_gather(group, in, out, operand element count, dtype).
// CHECK-LABEL: module @all_gather
// CHECK: func.func private @loom_rt_all_gather(i64, !llvm.ptr, !llvm.ptr, i64, i32){{$}}
// CHECK-NOT: comm.
// CHECK-LABEL: func.func @gather_i64(
// CHECK-SAME: %[[IN:.+]]: memref<5x2xi64>, %[[OUT:.+]]: memref<10x2xi64>)
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 10 : i64
// CHECK-DAG: %[[I64:.+]] = arith.constant 3 : i32
// CHECK: %[[BUF:.+]] = memref.alloca() {{.*}}: memref<10x2xi64>
// CHECK-NOT: memref.copy
// CHECK: %[[IN_INT:.+]] = memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK-NEXT: %[[IN_I64:.+]] = arith.index_cast %[[IN_INT]] : index to i64
// CHECK-NEXT: %[[IN_PTR:.+]] = llvm.inttoptr %[[IN_I64]] : i64 to !llvm.ptr
// CHECK-NEXT: %[[OUT_INT:.+]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK-NEXT: %[[OUT_I64:.+]] = arith.index_cast %[[OUT_INT]] : index to i64
// CHECK-NEXT: %[[OUT_PTR:.+]] = llvm.inttoptr %[[OUT_I64]] : i64 to !llvm.ptr
// CHECK-NEXT: call @loom_rt_all_gather(%[[GROUP]], %[[IN_PTR]], %[[OUT_PTR]], %[[COUNT]], %[[I64]]) : (i64, !llvm.ptr, !llvm.ptr, i64, i32) -> ()
// CHECK-NEXT: memref.copy %[[BUF]], %[[OUT]]
// CHECK-NEXT: return
module @all_gather {
  comm.mesh @world shape = [2] axes = ["dp"]
  func.func @gather_i64(%m: memref<5x2xi64>, %o: memref<10x2xi64>) {
    %t = bufferization.to_tensor %m restrict : memref<5x2xi64> to tensor<5x2xi64>
    %r = comm.all_gather %t over @world ["dp"] dim = 0 : tensor<5x2xi64> -> tensor<10x2xi64>
    bufferization.materialize_in_destination %r in restrict writable %o : (tensor<10x2xi64>, memref<10x2xi64>) -> ()
    return
  }
}

// -----

comm.mesh @world shape = [2] axes = ["dp"]

// Tests that reduce_scatter along a dimension other than 0 (non-contiguous
// slices) is rejected by the CPU lowering.
func.func @no_reduce_scatter_dim_1(%m: memref<4x6xf32>, %o: memref<4x3xf32>) {
  %t = bufferization.to_tensor %m restrict : memref<4x6xf32> to tensor<4x6xf32>
  // expected-error@+2 {{the CPU lowering supports collectives along dimension 0 only (contiguous slices)}}
  // expected-error@+1 {{failed to bufferize op}}
  %r = comm.reduce_scatter %t over @world ["dp"] sum dim = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<4x3xf32>, memref<4x3xf32>) -> ()
  return
}

// -----

comm.mesh @world shape = [2] axes = ["dp"]

// Tests that all_gather along a dimension other than 0 is rejected by the
// CPU lowering.
func.func @no_all_gather_dim_1(%m: memref<4x3xf32>, %o: memref<4x6xf32>) {
  %t = bufferization.to_tensor %m restrict : memref<4x3xf32> to tensor<4x3xf32>
  // expected-error@+2 {{the CPU lowering supports collectives along dimension 0 only (contiguous slices)}}
  // expected-error@+1 {{failed to bufferize op}}
  %r = comm.all_gather %t over @world ["dp"] dim = 1 : tensor<4x3xf32> -> tensor<4x6xf32>
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<4x6xf32>, memref<4x6xf32>) -> ()
  return
}

// -----

// Tests the asynchronous forms: all_reduce_start works in place and returns
// the runtime's handle, which the wait passes to loom_rt_wait; the resizing
// starts write a fresh buffer (the in-flight tensor) and read their operand
// only during the call (the runtime copies it), so the wait is the only
// thing between the start and the first read of the result.
// CHECK-LABEL: module @async
// CHECK-DAG: func.func private @loom_rt_all_reduce_start(i64, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-DAG: func.func private @loom_rt_reduce_scatter_start(i64, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-DAG: func.func private @loom_rt_all_gather_start(i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
// CHECK-DAG: func.func private @loom_rt_wait(i64)
// CHECK-LABEL: func.func @all_reduce_start(
// CHECK: %[[H:.+]] = call @loom_rt_all_reduce_start(
// CHECK: call @loom_rt_wait(%[[H]])
// CHECK-LABEL: func.func @reduce_scatter_start(
// CHECK-SAME: %[[IN:.+]]: memref<8x3xf32>, %[[OUT:.+]]: memref<2x3xf32>)
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 6 : i64
// CHECK: %[[H:.+]] = call @loom_rt_reduce_scatter_start(%{{.+}}, %{{.+}}, %{{.+}}, %[[COUNT]], %{{.+}}, %{{.+}}) : (i64, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> i64
// CHECK-NEXT: call @loom_rt_wait(%[[H]])
// CHECK-NEXT: memref.copy %{{.+}}, %[[OUT]]
// CHECK-LABEL: func.func @all_gather_start(
// CHECK-DAG: %[[COUNT:.+]] = arith.constant 6 : i64
// CHECK: %[[H:.+]] = call @loom_rt_all_gather_start(%{{.+}}, %{{.+}}, %{{.+}}, %[[COUNT]], %{{.+}}) : (i64, !llvm.ptr, !llvm.ptr, i64, i32) -> i64
// CHECK-NEXT: call @loom_rt_wait(%[[H]])
// CHECK-NOT: comm.
module @async {
  comm.mesh @world shape = [4] axes = ["dp"]
  func.func @all_reduce_start(%m: memref<4xf32>) {
    %t = bufferization.to_tensor %m restrict : memref<4xf32> to tensor<4xf32>
    %tok, %f = comm.all_reduce_start %t over @world ["dp"] mean : tensor<4xf32>
    %r = comm.wait %tok, %f : tensor<4xf32>
    bufferization.materialize_in_destination %r in restrict writable %m : (tensor<4xf32>, memref<4xf32>) -> ()
    return
  }
  func.func @reduce_scatter_start(%in: memref<8x3xf32>, %out: memref<2x3xf32>) {
    %t = bufferization.to_tensor %in restrict : memref<8x3xf32> to tensor<8x3xf32>
    %tok, %f = comm.reduce_scatter_start %t over @world ["dp"] sum dim = 0 : tensor<8x3xf32> -> tensor<2x3xf32>
    %r = comm.wait %tok, %f : tensor<2x3xf32>
    bufferization.materialize_in_destination %r in restrict writable %out : (tensor<2x3xf32>, memref<2x3xf32>) -> ()
    return
  }
  func.func @all_gather_start(%in: memref<6xf32>, %out: memref<24xf32>) {
    %t = bufferization.to_tensor %in restrict : memref<6xf32> to tensor<6xf32>
    %tok, %f = comm.all_gather_start %t over @world ["dp"] dim = 0 : tensor<6xf32> -> tensor<24xf32>
    %r = comm.wait %tok, %f : tensor<24xf32>
    bufferization.materialize_in_destination %r in restrict writable %out : (tensor<24xf32>, memref<24xf32>) -> ()
    return
  }
}
