// RUN: loom-opt %s -split-input-file -loom-emit-entry-wrappers -verify-diagnostics | FileCheck %s

// Tests that each llvm.func with loom.entry gets an exported
// `void loom_<entry>(ptr)` that loads one pointer per argument from the
// array and calls it, that the entry itself becomes internal, and that
// functions without loom.entry are left alone.
// CHECK-LABEL: module @wrappers
// CHECK: llvm.func internal @train_step(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) attributes {loom.entry = "train_step"}
// CHECK: llvm.func @loom_train_step(%[[ARGS:.+]]: !llvm.ptr) {
// CHECK-NEXT: %[[S0:.+]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S1:.+]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P1:.+]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S2:.+]] = llvm.getelementptr %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P2:.+]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @train_step(%[[P0]], %[[P1]], %[[P2]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @helper(%{{.+}}: !llvm.ptr) {
// CHECK-NOT: llvm.func @loom_helper
// CHECK: llvm.func internal @no_args() attributes {loom.entry = "loss"}
// CHECK: llvm.func @loom_loss(%{{.+}}: !llvm.ptr) {
// CHECK-NEXT: llvm.call @no_args() : () -> ()
// CHECK-NEXT: llvm.return
module @wrappers {
  llvm.func @train_step(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr) attributes {loom.entry = "train_step"} {
    llvm.return
  }
  llvm.func @helper(%a: !llvm.ptr) {
    llvm.return
  }
  llvm.func @no_args() attributes {loom.entry = "loss"} {
    llvm.return
  }
}

// -----

// Tests that entries whose arguments are not bare pointers are rejected.
module @no_bare_pointers {
  // expected-error@+1 {{entry argument of type 'i64' is not a bare pointer (convert functions with use-bare-ptr-memref-call-conv)}}
  llvm.func @f(%a: !llvm.ptr, %n: i64) attributes {loom.entry = "f"} {
    llvm.return
  }
}

// -----

// Tests that an existing symbol with the wrapper's name is not overwritten.
module @dont_overwrite_wrapper {
  llvm.func @loom_f() {
    llvm.return
  }
  // expected-error@+1 {{symbol @loom_f already exists}}
  llvm.func @f(%a: !llvm.ptr) attributes {loom.entry = "f"} {
    llvm.return
  }
}

// -----

// Tests that a loom.entry that is not the entry's name is an error, not a
// crash.
module @entry_not_a_name {
  // expected-error@+1 {{'loom.entry' must be the entry's name (a string)}}
  llvm.func @f(%a: !llvm.ptr) attributes {loom.entry} {
    llvm.return
  }
}
