// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   -loom-zo="eps=0.01 lr=0.1 weight-decay=0.5 seed=7 offload=true prefetch-bytes=32" \
// RUN:   | FileCheck %s
// RUN: loom-opt %s -split-input-file \
// RUN:   -loom-zo="offload=true perturbation-ranks=2" \
// RUN:   | FileCheck %s --check-prefix=PAIR
// RUN: loom-opt %s -split-input-file \
// RUN:   -loom-zo="offload=true ranks=2 directions=rank" \
// RUN:   | FileCheck %s --check-prefix=MULTI
// RUN: not loom-opt %s -split-input-file \
// RUN:   -loom-zo="offload=true prefetch-bytes=-1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BYTES

// Tests --loom-zo{offload} (ZO2's schedule, docs/zo.md). The step applies
// the previous step's update (the state zo.pending: g and a flag that
// makes the update the identity when nothing is pending) to each parameter
// as it uploads it, along the previous step's direction (step - 1), writes
// the result back, and runs both forward passes interleaved op by op on
// the updated copy, each through its own perturbed copy; a parameter read
// again later (@w, tied) has its copies made again there (loom.remat keeps
// CSE from merging them). Uploads run ahead by at most prefetch-bytes (32:
// @b, 16 bytes, waits until @w, 32 bytes, is used); a write-back is waited
// for after its parameter's last use, oldest first, once more than half
// that would be in flight. The update of this step is deferred; @zo_flush
// applies a pending update to every parameter and clears it.
// The evaluation entry @loss reads the parameters from uploaded copies too.
// CHECK-LABEL: module @tied
// CHECK-SAME: offload = true
// CHECK: func.func @loss(%[[LX:.+]]: tensor<4x8xf32> {loom.input = "x"})
// CHECK: %[[LT:.+]], %[[LF:.+]] = comm.transfer_start %{{.+}} into %{{.+}} "upload" : tensor<8xf32>
// CHECK-NEXT: %[[LW:.+]] = comm.wait %[[LT]], %[[LF]]
// CHECK: loom.mul %[[LX]], %[[LW]]
// CHECK-NOT: loom.set_param
// CHECK: return
// CHECK: func.func @train_step(%[[STEP:.+]]: tensor<i64> {loom.input = "step"}, %[[X:.+]]: tensor<4x8xf32>
// CHECK: %[[PREV:.+]] = arith.subi
// CHECK-NEXT: %[[PSTEP:.+]] = tensor.from_elements %[[PREV]] : tensor<i64>
// CHECK-NEXT: %[[PENDING:.+]] = loom.get_state "zo.pending" : tensor<2xf32>
// CHECK: %[[WH:.+]] = loom.get_param @w
// CHECK-NEXT: %[[WT:.+]], %[[WF:.+]] = comm.transfer_start %[[WH]] into %{{.+}} "upload" : tensor<8xf32>
// CHECK-NEXT: %[[WD:.+]] = comm.wait %[[WT]], %[[WF]]
// CHECK: %[[WN:.+]] = loom.perturb %[[WD]], %[[PSTEP]], %{{.+}}, %{{.+}} {seed = 7 : i64}
// CHECK-NEXT: %[[WH2:.+]] = loom.get_param @w
// CHECK-NEXT: %[[WOT:.+]], %[[WOF:.+]] = comm.transfer_start %[[WN]] into %[[WH2]] "offload"
// CHECK: comm.transfer_start %{{.+}} into %{{.+}} "upload" : tensor<4x1xf32>
// CHECK: %[[WP:.+]] = loom.perturb %[[WN]], %[[STEP]], %{{.+}}, %{{.+}} {seed = 7 : i64}
// CHECK-NEXT: %[[M1:.+]] = loom.mul %[[X]], %[[WP]]
// CHECK: %[[WM:.+]] = loom.perturb %[[WN]], %[[STEP]], %{{.+}}, %{{.+}} {seed = 7 : i64}
// CHECK-NEXT: %[[M2:.+]] = loom.mul %[[X]], %[[WM]]
// CHECK: loom.perturb %[[WN]], %[[STEP]], %{{.+}}, %{{.+}} {loom.remat = 4 : i64, seed = 7 : i64}
// CHECK: loom.perturb %[[WN]], %[[STEP]], %{{.+}}, %{{.+}} {loom.remat = 4 : i64, seed = 7 : i64}
// CHECK: loom.set_param @b
// CHECK: %[[WB:.+]] = comm.wait %[[WOT]], %[[WOF]]
// CHECK-NEXT: loom.set_param @w, %[[WB]]
// CHECK: "upload" : tensor<2xf32>
// CHECK: loom.set_param @unused
// CHECK: %[[NEXT:.+]] = tensor.from_elements %{{.+}}, %{{.+}} : tensor<2xf32>
// CHECK-NEXT: loom.set_state "zo.pending", %[[NEXT]]
// CHECK-NOT: loom.set_param
// CHECK: return
// CHECK: func.func @zo_flush(%[[FSTEP:.+]]: tensor<i64> {loom.input = "step"}) attributes {loom.entry = "zo_flush"}
// CHECK: loom.get_state "zo.pending"
// CHECK: loom.perturb %{{.+}}, %[[FSTEP]], %{{.+}}, %{{.+}} {seed = 7 : i64}
// CHECK: loom.set_param @w
// CHECK: loom.set_param @b
// CHECK: loom.set_param @unused
// CHECK: %[[ZERO:.+]] = tensor.from_elements %{{.+}}, %{{.+}} : tensor<2xf32>
// CHECK-NEXT: loom.set_state "zo.pending", %[[ZERO]]

// With perturbation pairs (DistZO2 with offloading), each rank runs one
// forward pass, at sign * eps, offloaded as above.
// PAIR: func.func @train_step
// PAIR: %[[SIGN:.+]] = tensor.from_elements %{{.+}} : tensor<f32>
// PAIR: %[[SCALE:.+]] = loom.mul %[[SIGN]], %{{.+}}
// PAIR: "upload"
// PAIR: loom.perturb %{{.+}}, %{{.+}}, %{{.+}}, %[[SCALE]]
// PAIR-NOT: loom.perturb %{{.+}}, %{{.+}}, %{{.+}}, %[[SCALE]] {seed
// PAIR: comm.all_reduce %{{.+}} over @world ["dp", "pert"] sum
// PAIR: loom.set_state "zo.pending"
// With directions=rank the state carries each rank's g; the deferred
// update applies the decay and then the directions in rank order, and the
// forward passes move along this rank's direction (the offset).
// MULTI: func.func @train_step
// MULTI: loom.get_state "zo.pending" : tensor<3xf32>
// MULTI: %[[U0:.+]] = loom.perturb %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<8xf32>
// MULTI-NEXT: %[[U1:.+]] = loom.perturb %[[U0]], %{{.+}}, %{{.+}}, %{{.+}} {direction = 1 : i64} : tensor<8xf32>
// MULTI: loom.perturb %[[U1]], %{{.+}}, %{{.+}}, %{{.+}} offset %{{.+}} : tensor<i64> : tensor<8xf32>
// MULTI: comm.all_gather
// MULTI: %[[GS:.+]] = tensor.from_elements %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xf32>
// MULTI-NEXT: loom.set_state "zo.pending", %[[GS]] : tensor<3xf32>
// MULTI: func.func @zo_flush
// MULTI: loom.get_state "zo.pending" : tensor<3xf32>
// BYTES: prefetch-bytes must be non-negative, got -1
module @tied {
  loom.param @w : tensor<8xf32> init normal scale 1.0
  loom.param @b : tensor<4x1xf32> init zeros {no_weight_decay}
  loom.param @unused : tensor<2xf32> init zeros
  func.func @loss(%x: tensor<4x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<8xf32>
    %b = loom.get_param @b : tensor<4x1xf32>
    %0 = loom.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = loom.add %0, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %2 = loom.mul %1, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %3 = loom.sum %2 axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %3 : tensor<f32>
  }
}

