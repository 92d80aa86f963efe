// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   -loom-zo="eps=0.01 lr=0.1 weight-decay=0.5 seed=7" | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-zo="ranks=4" \
// RUN:   | FileCheck %s --check-prefix=DP
// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   -loom-zo="perturbation-ranks=2" | FileCheck %s --check-prefix=PAIR
// RUN: loom-opt %s -split-input-file -verify-diagnostics \
// RUN:   -loom-zo="ranks=2 directions=rank lr=0.1" | FileCheck %s --check-prefix=MULTI
// RUN: not loom-opt %s -split-input-file -loom-zo="directions=rank" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MULTI1
// RUN: not loom-opt %s -split-input-file -loom-zo="directions=all" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIRS
// RUN: not loom-opt %s -split-input-file -loom-zo="eps=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EPS
// RUN: not loom-opt %s -split-input-file -loom-zo="lr=-1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LR

// Tests that --loom-zo builds @train_step from @loss alone: two copies of
// the forward pass, the first reading every parameter moved by +eps z, the
// second by -eps z, each copy made just before the parameter's first use;
// the projected gradient (l+ - l-) / (2 eps); and one update of each
// parameter along the same z (stream = the parameter's index), with weight
// decay except where the parameter is marked no_weight_decay. @loss stays
// the evaluation entry; there is no @loss_and_grad.
// CHECK-LABEL: module @two_params
// CHECK-SAME: loom.optimizer = {directions = "shared", eps = 1.000000e-02 : f64, kind = "zo", lr = 1.000000e-01 : f64, offload = false, perturbation_ranks = 1 : i64, seed = 7 : i64, weight_decay = 5.000000e-01 : f64}
// CHECK: func.func @loss(%{{.+}}: tensor<4x8xf32> {loom.input = "x"}) -> (tensor<f32> {loom.output = "loss"}) attributes {loom.entry = "loss"}
// CHECK: func.func @train_step(%[[STEP:.+]]: tensor<i64> {loom.input = "step"}, %[[X:.+]]: tensor<4x8xf32> {loom.input = "x"})
// CHECK-SAME: -> (tensor<f32> {loom.output = "loss"}, tensor<f32> {loom.output = "lr"}, tensor<f32> {loom.output = "grad_norm"})
// CHECK-SAME: attributes {loom.entry = "train_step"}
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[W1:.+]] = loom.get_param @w : tensor<8xf32>
// CHECK-NEXT: %[[EPSV:.+]] = arith.constant dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[WP:.+]] = loom.perturb %[[W1]], %[[STEP]], %[[ONE]], %[[EPSV]] {seed = 7 : i64} : tensor<8xf32>, tensor<i64>, tensor<f32>
// CHECK-NEXT: %[[M1:.+]] = loom.mul %[[X]], %[[WP]]
// CHECK-NEXT: %[[B1:.+]] = loom.get_param @b : tensor<4x1xf32>
// CHECK-NEXT: arith.constant dense<0.00999999977> : tensor<f32>
// CHECK-NEXT: %[[BP:.+]] = loom.perturb %[[B1]], %[[STEP]], %[[ONE]], %{{.+}} {seed = 7 : i64, stream = 1 : i64}
// CHECK-NEXT: %[[A1:.+]] = loom.add %[[M1]], %[[BP]]
// CHECK-NEXT: %[[LP:.+]] = loom.sum %[[A1]]
// CHECK: %[[NEPS:.+]] = arith.constant dense<-0.00999999977> : tensor<f32>
// CHECK-NEXT: loom.perturb %{{.+}}, %[[STEP]], %[[ONE]], %[[NEPS]] {seed = 7 : i64} : tensor<8xf32>
// CHECK: loom.perturb %{{.+}}, %[[STEP]], %[[ONE]], %{{.+}} {seed = 7 : i64, stream = 1 : i64}
// CHECK: %[[LM:.+]] = loom.sum
// CHECK-NEXT: %[[D:.+]] = loom.sub %[[LP]], %[[LM]]
// CHECK-NEXT: %[[S:.+]] = loom.add %[[LP]], %[[LM]]
// CHECK-NEXT: %[[INV:.+]] = arith.constant dense<5.000000e+01> : tensor<f32>
// CHECK-NEXT: %[[G:.+]] = loom.mul %[[D]], %[[INV]]
// CHECK-NEXT: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[MEAN:.+]] = loom.mul %[[S]], %[[HALF]]
// CHECK-NEXT: %[[NLR:.+]] = arith.constant dense<-1.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[COEF:.+]] = loom.mul %[[G]], %[[NLR]]
// CHECK-NEXT: %[[W2:.+]] = loom.get_param @w : tensor<8xf32>
// CHECK-NEXT: %[[DECAY:.+]] = arith.constant dense<0.949999988> : tensor<f32>
// CHECK-NEXT: %[[WN:.+]] = loom.perturb %[[W2]], %[[STEP]], %[[DECAY]], %[[COEF]] {seed = 7 : i64}
// CHECK-NEXT: loom.set_param @w, %[[WN]] : tensor<8xf32>
// CHECK-NEXT: %[[B2:.+]] = loom.get_param @b : tensor<4x1xf32>
// CHECK-NEXT: %[[NODECAY:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[BN:.+]] = loom.perturb %[[B2]], %[[STEP]], %[[NODECAY]], %[[COEF]] {seed = 7 : i64, stream = 1 : i64}
// CHECK-NEXT: loom.set_param @b, %[[BN]] : tensor<4x1xf32>
// CHECK-NEXT: %[[SQ:.+]] = loom.mul %[[G]], %[[G]]
// CHECK-NEXT: %[[NORM:.+]] = loom.sqrt %[[SQ]]
// CHECK-NEXT: %[[LRV:.+]] = arith.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: return %[[MEAN]], %[[LRV]], %[[NORM]]
// CHECK-NOT: loss_and_grad

// With ranks = 4, l+ - l- and l+ + l- are summed over a data-parallel mesh
// in one collective of two elements (one latency per step, whatever the
// model's size) and divided by the ranks: the mean projected gradient and
// loss.
// DP-LABEL: module @two_params
// DP: comm.mesh @world shape = [4] axes = ["dp"]
// DP: func.func @train_step
// DP: %[[D:.+]] = loom.sub
// DP-NEXT: %[[S:.+]] = loom.add
// DP-NEXT: %[[DE:.+]] = tensor.extract %[[D]][]
// DP-NEXT: %[[SE:.+]] = tensor.extract %[[S]][]
// DP-NEXT: %[[BOTH:.+]] = tensor.from_elements %[[DE]], %[[SE]] : tensor<2xf32>
// DP-NEXT: %[[SUMS:.+]] = comm.all_reduce %[[BOTH]] over @world ["dp"] sum : tensor<2xf32>
// DP: tensor.extract %[[SUMS]]
// DP: %[[SD:.+]] = tensor.from_elements
// DP: tensor.extract %[[SUMS]]
// DP: %[[SS:.+]] = tensor.from_elements
// DP-NEXT: %[[C:.+]] = arith.constant dense<1.250000e+02> : tensor<f32>
// DP-NEXT: %[[G:.+]] = loom.mul %[[SD]], %[[C]]
// DP-NEXT: %[[H:.+]] = arith.constant dense<1.250000e-01> : tensor<f32>
// DP-NEXT: %[[MEAN:.+]] = loom.mul %[[SS]], %[[H]]
// DP-NOT: comm.all_reduce
// DP: return %[[MEAN]]

// With perturbation pairs, one forward pass per rank at sign * eps, the
// sign from the rank's index in its pair; sums over the whole [ranks, 2]
// mesh.
// PAIR-LABEL: module @two_params
// PAIR: comm.mesh @world shape = [1, 2] axes = ["dp", "pert"]
// PAIR: func.func @train_step
// PAIR: %[[R:.+]] = comm.group_rank @world ["dp", "pert"]
// PAIR: arith.remui %[[R]]
// PAIR: %[[SIGN:.+]] = tensor.from_elements
// PAIR: loom.mul %[[SIGN]]
// PAIR: loom.perturb
// PAIR: loom.perturb
// PAIR: %[[L:.+]] = loom.sum
// PAIR-NOT: loom.perturb
// PAIR: %[[SL:.+]] = loom.mul %[[SIGN]], %[[L]]
// PAIR: tensor.from_elements {{.+}} : tensor<2xf32>
// PAIR-NEXT: comm.all_reduce %{{.+}} over @world ["dp", "pert"] sum : tensor<2xf32>
// PAIR-COUNT-2: loom.perturb
// PAIR-NOT: comm.all_reduce

// With directions=rank (the multi-direction variant), each rank's forward
// passes move along the direction of its own index (the perturb's run-time
// offset); one all-gather brings every rank's (l+ - l-, l+ + l-), and every
// rank applies both ranks' updates, in rank order, the first with the
// weight decay: directions 0 and 1, coefficients -lr g_r / 2.
// MULTI-LABEL: module @two_params
// MULTI-SAME: directions = "rank"
// MULTI: comm.mesh @world shape = [2] axes = ["dp"]
// MULTI: func.func @train_step(%[[STEP:[^:]+]]
// MULTI: %[[R:.+]] = comm.group_rank @world ["dp"]
// MULTI-NEXT: %[[RI:.+]] = arith.index_cast %[[R]] : index to i64
// MULTI-NEXT: %[[OWN:.+]] = tensor.from_elements %[[RI]] : tensor<i64>
// MULTI: loom.perturb %{{.+}}, %[[STEP]], %{{.+}}, %{{.+}} offset %[[OWN]] : tensor<i64> : tensor<8xf32>
// MULTI: loom.perturb {{.+}} offset %[[OWN]] : tensor<i64> {stream = 1 : i64}
// MULTI: %[[GP:.+]] = tensor.from_elements {{.+}} : tensor<2xf32>
// MULTI-NEXT: %[[ALL:.+]] = comm.all_gather %[[GP]] over @world ["dp"] dim = 0 : tensor<2xf32> -> tensor<4xf32>
// MULTI: %[[W:.+]] = loom.get_param @w
// MULTI: %[[W0:.+]] = loom.perturb %[[W]], %[[STEP]], %{{.+}}, %{{.+}} : tensor<8xf32>
// MULTI-NEXT: %[[W1:.+]] = loom.perturb %[[W0]], %[[STEP]], %{{.+}}, %{{.+}} {direction = 1 : i64} : tensor<8xf32>
// MULTI-NEXT: loom.set_param @w, %[[W1]]
// MULTI-NOT: comm.
// MULTI1: error: directions=rank needs data-parallel ranks (ranks > 1) and perturbation-ranks=1
// DIRS: error: directions must be shared or rank, got all
// EPS: error: eps must be positive, got 0.000000e+00
// LR: error: lr must be positive, got -1.000000e+00
module @two_params {
  loom.param @w : tensor<8xf32> init normal scale 1.0
  loom.param @b : tensor<4x1xf32> init zeros {no_weight_decay}
  func.func @loss(%x: tensor<4x8xf32> {loom.input = "x"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<8xf32>
    %b = loom.get_param @b : tensor<4x1xf32>
    %0 = loom.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = loom.add %0, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %2 = loom.sum %1 axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %2 : tensor<f32>
  }
}

// -----

// Tests that a module whose step is already built is refused.
// expected-error@+1 {{the module already has a @train_step function: --loom-zo builds the step from @loss alone}}
module @has_step {
  loom.param @w : tensor<2xf32> init zeros
  func.func @loss() -> tensor<f32> {
    %0 = arith.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// Tests that a model without parameters is refused.
// expected-error@+1 {{the model has no loom.param to train}}
module @no_params {
  func.func @loss() -> tensor<f32> {
    %0 = arith.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

// Tests that a module without @loss is refused.
// expected-error@+1 {{no function @loss to train: a model defines func.func @loss(inputs...) -> tensor<f32>}}
module @no_loss {
  loom.param @w : tensor<2xf32> init zeros
}
