// RUN: loom-opt %s -split-input-file -loom-load-entry-arguments -verify-diagnostics | FileCheck %s

// Tests that an entry becomes the exported loom_<entry> taking the array
// of addresses, each buffer's address loaded from its slot once, just
// before the first op that uses it (before a loop that uses it, not inside
// it), and that functions without loom.entry are left alone.
// CHECK-LABEL: module @entries
// CHECK: func.func private @nest(
// CHECK: func.func @loom_train_step(%[[ARGS:.+]]: !llvm.ptr) {
// CHECK-NEXT: %[[S0:.+]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[W:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK-NEXT: %[[S1:.+]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P1:.+]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[G:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<2x2xf32>
// CHECK-NEXT: call @nest(%[[W]], %[[G]])
// CHECK-NOT: llvm.load
// CHECK: scf.for
// CHECK-NEXT: memref.store %{{.+}}, %[[W]]
// CHECK: %[[S2:.+]] = llvm.getelementptr %[[ARGS]][2]
// CHECK-NEXT: llvm.load %[[S2]]
// CHECK: %[[U:.+]] = builtin.unrealized_conversion_cast %{{.+}} to memref<8xf32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.store %{{.+}}, %[[U]]
// CHECK: return
// CHECK-NOT: @train_step
module @entries {
  func.func private @nest(%a: memref<4xf32>, %b: memref<2x2xf32>)
  func.func @train_step(%w: memref<4xf32>, %g: memref<2x2xf32>, %u: memref<8xf32>) attributes {loom.entry = "train_step"} {
    call @nest(%w, %g) : (memref<4xf32>, memref<2x2xf32>) -> ()
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %f = arith.constant 1.0 : f32
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %f, %w[%i] : memref<4xf32>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %f, %u[%i] : memref<8xf32>
    }
    return
  }
}

// -----

// Tests that an entry without arguments still takes the array.
// CHECK-LABEL: module @no_args
// CHECK: func.func @loom_loss(%{{.+}}: !llvm.ptr) {
// CHECK-NEXT: return
module @no_args {
  func.func @loss() attributes {loom.entry = "loss"} {
    return
  }
}

// -----

// Tests that an argument that is not a buffer of static shape is refused.
module @not_static {
  // expected-error@+1 {{entry argument of type 'memref<?xf32>' is not a buffer of static shape and identity layout}}
  func.func @f(%a: memref<?xf32>) attributes {loom.entry = "f"} {
    return
  }
}

// -----

// Tests that an existing symbol with the export's name is not overwritten.
module @dont_overwrite {
  func.func @loom_f() {
    return
  }
  // expected-error@+1 {{symbol @loom_f already exists}}
  func.func @f(%a: memref<4xf32>) attributes {loom.entry = "f"} {
    return
  }
}

// -----

// Tests that a loom.entry that is not the entry's name is an error, not a
// crash.
module @entry_not_a_name {
  // expected-error@+1 {{'loom.entry' must be the entry's name (a string)}}
  func.func @f(%a: memref<4xf32>) attributes {loom.entry} {
    return
  }
}
