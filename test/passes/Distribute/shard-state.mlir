// RUN: split-file %s %t
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=4 zero=1" \
// RUN:   | FileCheck %s --check-prefix=STAGE1
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=4 zero=2 clip-norm=1" \
// RUN:   | FileCheck %s --check-prefix=STAGE2
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=4 zero=3" \
// RUN:   | FileCheck %s --check-prefix=STAGE3
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=4 zero=1 optimizer=sgd momentum=0.9" \
// RUN:   | FileCheck %s --check-prefix=SGD
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=4 zero=2 overlap=1" \
// RUN:   | FileCheck %s --check-prefix=OVERLAP
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=4 zero=2" \
// RUN:   --loom-lower-to-linalg-pipeline --loom-bufferize-pipeline \
// RUN:   | FileCheck %s --check-prefix=LOWERED
// RUN: loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel="ranks=4" \
// RUN:   --loom-add-optimizer --loom-shard-state="stage=3 bucket-mib=1" \
// RUN:   | FileCheck %s --check-prefix=BUCKET
// RUN: loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel="ranks=3" \
// RUN:   --loom-add-optimizer --loom-shard-state --mlir-pass-statistics 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STATS
// RUN: not loom-opt %t/model.mlir --loom-autodiff --loom-add-optimizer \
// RUN:   --loom-shard-state 2>&1 | FileCheck %s --check-prefix=NOMESH
// RUN: not loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel \
// RUN:   --loom-add-optimizer --loom-shard-state="stage=4" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADSTAGE
// RUN: not loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel \
// RUN:   --loom-shard-state 2>&1 | FileCheck %s --check-prefix=NOSTEP
// RUN: not loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel="ranks=1" \
// RUN:   --loom-add-optimizer --loom-shard-state 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ONERANK

// Tests stage 1: the gradients are still all-reduced whole, and each update
// is of this rank's slice (ceil(n/4) elements: 3 of w's 12; b's 3 and the
// scalar s padded with zeros to 4, one each), whose results are gathered
// back into the parameter. The norm is DDP's, on the whole gradients.
// STAGE1: module @tiny_model attributes {{{.*}}loom.zero = #loom.zero<stage = 1, mesh = @world, ranks = 4, params = ["w", "b", "s"]>
// STAGE1-LABEL: func.func @loss_and_grad(
// STAGE1-COUNT-4: comm.all_reduce {{.+}} mean
// STAGE1-LABEL: func.func @train_step(
// STAGE1: %[[RANK:.+]] = comm.group_rank @world ["dp"]
// STAGE1: %[[G:.+]]:4 = call @loss_and_grad(
// STAGE1-NOT: comm.all_reduce
// STAGE1: %[[OFF:.+]] = arith.muli %[[RANK]], %c3
// STAGE1: %[[GF:.+]] = loom.reshape %[[G]]#1 : tensor<3x4xf32> -> tensor<12xf32>
// STAGE1: %[[GS:.+]] = tensor.extract_slice %[[GF]][%[[OFF]]] [3] [1]
// STAGE1: %[[W:.+]] = loom.get_param @w : tensor<3x4xf32>
// STAGE1: %[[WF:.+]] = loom.reshape %[[W]] : tensor<3x4xf32> -> tensor<12xf32>
// STAGE1: %[[WS:.+]] = tensor.extract_slice %[[WF]][%[[OFF]]] [3] [1] : tensor<12xf32> to tensor<3xf32>
// STAGE1: %[[NEW:.+]] = loom.adamw @w slice %[[WS]], %[[GS]], {{.+}} -> tensor<3xf32>
// STAGE1: %[[ALL:.+]] = comm.all_gather %[[NEW]] over @world ["dp"] dim = 0 : tensor<3xf32> -> tensor<12xf32>
// STAGE1: %[[BACK:.+]] = loom.reshape %[[ALL]] : tensor<12xf32> -> tensor<3x4xf32>
// STAGE1: loom.set_param @w, %[[BACK]] : tensor<3x4xf32>
// STAGE1: loom.concat %[[G]]#2, %{{.+}} axis = 0 : (tensor<3xf32>, tensor<1xf32>) -> tensor<4xf32>
// STAGE1: %[[B:.+]] = loom.get_param @b : tensor<3xf32>
// STAGE1: %[[BP:.+]] = loom.concat %[[B]], %{{.+}} axis = 0 : (tensor<3xf32>, tensor<1xf32>) -> tensor<4xf32>
// STAGE1: tensor.extract_slice %[[BP]][%[[RANK]]] [1] [1] : tensor<4xf32> to tensor<1xf32>
// STAGE1: %[[NB:.+]] = loom.adamw @b slice {{.+}} -> tensor<1xf32>
// STAGE1: %[[AB:.+]] = comm.all_gather %[[NB]] over @world ["dp"] dim = 0 : tensor<1xf32> -> tensor<4xf32>
// STAGE1: %[[UB:.+]] = tensor.extract_slice %[[AB]][0] [3] [1] : tensor<4xf32> to tensor<3xf32>
// STAGE1: loom.set_param @b, %[[UB]] : tensor<3xf32>
// STAGE1: loom.get_param @s : tensor<f32>
// STAGE1: loom.reshape %{{.+}} : tensor<f32> -> tensor<1xf32>
// STAGE1: loom.adamw @s slice {{.+}} -> tensor<1xf32>
// STAGE1: loom.reshape %{{.+}} : tensor<1xf32> -> tensor<f32>
// STAGE1: loom.set_param @s
// STAGE1-NOT: loom.adamw

// Tests stage 2: @train_step calls a copy of @loss_and_grad that
// reduce-scatters each (flattened, padded) gradient; the norm sums the
// slices' squares, then the ranks'; the clip scales the slices.
// STAGE2-LABEL: func.func @loss_and_grad(
// STAGE2: comm.all_reduce {{.+}} mean : tensor<3x4xf32>
// STAGE2-LABEL: func.func private @loss_and_grad_shards(
// STAGE2-SAME: -> (tensor<f32> {{.+}}, tensor<3xf32> {loom.grad_of = @w{{.+}}, tensor<1xf32> {loom.grad_of = @b{{.+}}, tensor<1xf32> {loom.grad_of = @s
// STAGE2-NOT: comm.all_reduce {{.+}} : tensor<3x4xf32>
// STAGE2-DAG: comm.reduce_scatter %{{.+}} over @world ["dp"] mean dim = 0 : tensor<12xf32> -> tensor<3xf32>
// STAGE2-DAG: comm.reduce_scatter %{{.+}} over @world ["dp"] mean dim = 0 : tensor<4xf32> -> tensor<1xf32>
// STAGE2-LABEL: func.func @train_step(
// STAGE2: %[[G:.+]]:4 = call @loss_and_grad_shards(
// STAGE2: loom.mul %[[G]]#1, %[[G]]#1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// STAGE2: %[[SQ:.+]] = loom.add
// STAGE2: %[[SQ2:.+]] = loom.add
// STAGE2-NEXT: %[[TOTAL:.+]] = comm.all_reduce %[[SQ2]] over @world ["dp"] sum : tensor<f32>
// STAGE2: %[[NORM:.+]] = loom.sqrt %[[TOTAL]]
// STAGE2: %[[CLIPPED:.+]] = loom.mul %[[G]]#1, %{{.+}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// STAGE2: loom.adamw @w slice %{{.+}}, %[[CLIPPED]],
// STAGE2: return %[[G]]#0, %{{.+}}, %[[NORM]]

// Tests stage 3: each rank stores its slice of every parameter (the param
// takes the slice's type, its own kept as loom.full_type); every read is an
// all_gather just before the value's first use; in the copy train_step
// calls, the backward pass gathers a parameter it reads again (@s: w's
// backward reads only x) instead of keeping the forward's copy; the
// updates are the ordinary in-place ones, of the slices.
// STAGE3: loom.param @w : tensor<3xf32> init normal scale 5.000000e-01 {loom.full_type = tensor<3x4xf32>}
// STAGE3: loom.param @b : tensor<1xf32> init zeros {loom.full_type = tensor<3xf32>, no_weight_decay}
// STAGE3: loom.param @s : tensor<1xf32> init normal scale 1.000000e+00 {loom.full_type = tensor<f32>}
// STAGE3-LABEL: func.func @loss(
// STAGE3: %[[W:.+]] = loom.get_param @w : tensor<3xf32>
// STAGE3: %[[WA:.+]] = comm.all_gather %[[W]] over @world ["dp"] dim = 0 : tensor<3xf32> -> tensor<12xf32>
// STAGE3: %[[WF:.+]] = loom.reshape %[[WA]] : tensor<12xf32> -> tensor<3x4xf32>
// STAGE3: loom.linear %{{.+}}, %[[WF]],
// STAGE3-LABEL: func.func private @loss_and_grad_shards(
// STAGE3: comm.all_gather {{.+}} : tensor<3xf32> -> tensor<12xf32>
// STAGE3: loom.get_param @s
// STAGE3-NEXT: comm.all_gather
// STAGE3: loom.cross_entropy
// STAGE3: loom.get_param @s
// STAGE3-NEXT: comm.all_gather
// STAGE3-NOT: loom.get_param
// STAGE3: comm.reduce_scatter
// STAGE3-LABEL: func.func @train_step(
// STAGE3-NOT: comm.all_gather
// STAGE3: loom.adamw @w, %{{.+}}#1, {{.+}} : tensor<3xf32>, tensor<f32>, tensor<i64>
// STAGE3-NOT: loom.set_param

// Tests that SGD's update is sharded alike, its momentum buffer with it.
// SGD: loom.sgd @w slice {{.+}} {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64} : tensor<3xf32>, tensor<f32>, tensor<i64> -> tensor<3xf32>

// Tests that the overlap passes make ZeRO's collectives asynchronous.
// OVERLAP-LABEL: func.func private @loss_and_grad_shards(
// OVERLAP: comm.reduce_scatter_start
// OVERLAP-LABEL: func.func @train_step(
// OVERLAP: comm.all_gather_start
// OVERLAP: comm.wait

// Tests that the slice is the runtime's group rank times the slice size,
// and that the optimizer state has the slice's size.
// LOWERED: func.func private @loom_rt_group_rank(i64) -> i64
// LOWERED-LABEL: func.func @train_step(
// LOWERED-SAME: %{{.+}}: memref<3x4xf32>, %{{.+}}: memref<3xf32>, %{{.+}}: memref<f32>, %{{.+}}: memref<3xf32>, %{{.+}}: memref<3xf32>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf32>, %{{.+}}: memref<1xf32>,
// LOWERED-DAG: call @loom_rt_group_rank(%{{.+}}) : (i64) -> i64
// LOWERED-DAG: call @loom_rt_reduce_scatter(
// LOWERED-DAG: call @loom_rt_all_gather(

// Tests the statistics: 3 parameters sharded at stage 1, no reduce-scatter.
// STATS: ShardStatePass
// STATS-NEXT: (S) 0 num-gather-buckets
// STATS-NEXT: (S) 0 num-param-gathers
// STATS-NEXT: (S) 0 num-reduce-scatters
// STATS-NEXT: (S) 3 num-sharded-params

// NOMESH: error: --loom-shard-state needs a comm.mesh @world with axis 'dp': run --loom-data-parallel first
// BADSTAGE: error: --loom-shard-state: stage must be 1, 2 or 3, got 4
// NOSTEP: error: --loom-shard-state needs @loss_and_grad and @train_step: run --loom-data-parallel and --loom-add-optimizer first
// ONERANK: error: --loom-shard-state needs at least 2 ranks to shard over, got 1

// Tests stage 3 with bucket-mib: the parameters a bucket holds share one
// all_gather of their slices side by side (3 + 1 + 1 elements per rank),
// whose N x 5 result is split by columns into each parameter's slices of
// every rank.
// BUCKET-LABEL: func.func @loss(
// BUCKET: %[[W:.+]] = loom.get_param @w : tensor<3xf32>
// BUCKET: %[[B:.+]] = loom.get_param @b : tensor<1xf32>
// BUCKET: %[[S:.+]] = loom.get_param @s : tensor<1xf32>
// BUCKET: %[[CAT:.+]] = loom.concat %[[W]], %[[B]], %[[S]] axis = 0 : (tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<5xf32>
// BUCKET: %[[ALL:.+]] = comm.all_gather %[[CAT]] over @world ["dp"] dim = 0 : tensor<5xf32> -> tensor<20xf32>
// BUCKET: %[[GRID:.+]] = loom.reshape %[[ALL]] : tensor<20xf32> -> tensor<4x5xf32>
// BUCKET: %[[COLS:.+]]:3 = loom.split %[[GRID]] axis = 1 : tensor<4x5xf32> -> tensor<4x3xf32>, tensor<4x1xf32>, tensor<4x1xf32>
// BUCKET: %[[WP:.+]] = loom.reshape %[[COLS]]#0 : tensor<4x3xf32> -> tensor<12xf32>
// BUCKET: loom.reshape %[[WP]] : tensor<12xf32> -> tensor<3x4xf32>
// BUCKET-NOT: comm.all_gather
// BUCKET: loom.cross_entropy
// BUCKET-LABEL: func.func private @loss_and_grad_shards(

//--- model.mlir
module @tiny_model {
  loom.param @w : tensor<3x4xf32> init normal scale 0.5
  loom.param @b : tensor<3xf32> init zeros {no_weight_decay}
  loom.param @s : tensor<f32> init normal scale 1.0
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}, %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<3x4xf32>
    %b = loom.get_param @b : tensor<3xf32>
    %s = loom.get_param @s : tensor<f32>
    %h = loom.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %hs = loom.mul %h, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %l = loom.cross_entropy %hs, %y : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
