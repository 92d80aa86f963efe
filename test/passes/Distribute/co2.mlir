// RUN: split-file %s %t
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2" \
// RUN:   --loom-co2="local-steps=4 outer-lr=0.8 outer-momentum=0.5 gap-penalty=0.7 clip=0.25" \
// RUN:   | FileCheck %s
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 link-gbps=0.001 link-latency-us=100 gflops=1" \
// RUN:   --loom-co2="local-steps=0 max-local-steps=1000000" | FileCheck %s --check-prefix=AUTO
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 link-gbps=0.001 link-latency-us=100 gflops=1" \
// RUN:   --loom-co2="local-steps=0" | FileCheck %s --check-prefix=CAPPED
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2" --loom-co2="max-local-steps=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADCAP
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 link-gbps=100 link-latency-us=0 gflops=1" \
// RUN:   --loom-co2="local-steps=0" | FileCheck %s --check-prefix=FAST
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 link-gbps=0.001 link-latency-us=100 gflops=1 comm-cpu=0" \
// RUN:   --loom-co2="local-steps=0 max-local-steps=1000000" | FileCheck %s --check-prefix=FREE
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 comm-cpu=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADCPU
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2" --loom-co2="max-overhead=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOVERHEAD
// RUN: loom-opt %t/model.mlir --loom-autodiff --loom-data-parallel \
// RUN:   --loom-describe-machine="link-gbps=0.001 link-latency-us=100 gflops=1" \
// RUN:   --loom-add-optimizer --loom-co2="local-steps=0 max-local-steps=1000000" | FileCheck %s --check-prefix=AUTO
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 co2=1 co2-local-steps=3" \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2" --loom-co2="local-steps=4 sharded=1" \
// RUN:   | FileCheck %s --check-prefix=SHARD
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2 link-gbps=100 link-latency-us=0 gflops=1" \
// RUN:   --loom-co2="local-steps=0 sharded=1" | FileCheck %s --check-prefix=SHARDAUTO
// RUN: loom-opt %t/model.mlir --loom-train-pipeline="dp=2" --loom-co2="sharded=1" \
// RUN:   --loom-cpu-pipeline | FileCheck %s --check-prefix=SHARDABI
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline --loom-co2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NODP
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2 overlap=1" --loom-co2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ASYNC
// RUN: not loom-opt %t/model.mlir --loom-train-pipeline="dp=2" --loom-co2="outer-momentum=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT

// Tests that the inner step no longer communicates (the data-parallel
// all-reduces are gone, gradients and loss are local), that @outer_step
// takes the round and one stale mean per trained parameter and applies
// loom.co2_outer to each with the options, and that the schedule the
// runtime runs is recorded on the module.
// CHECK: module @tiny_model attributes {loom.co2 = #loom.co2<local_steps = 4, outer_lr = 8.000000e-01 : f64, outer_momentum = 5.000000e-01 : f64, gap_penalty = 0.69999999999999996 : f64, clip = 2.500000e-01 : f64, mesh = @world, ranks = 2, local_steps_reason = "">
// CHECK: comm.mesh @world shape = [2] axes = ["dp"]
// CHECK-NOT: comm.all_reduce
// CHECK-LABEL: func.func @train_step(
// CHECK: loom.adamw @w
// CHECK: loom.adamw @b
// CHECK-LABEL: func.func @outer_step(
// CHECK-SAME: %[[R:.+]]: tensor<i64> {loom.input = "co2.round"}, %[[MW:.+]]: tensor<3x4xf32> {loom.input = "co2.mean:w"}, %[[MB:.+]]: tensor<3xf32> {loom.input = "co2.mean:b"})
// CHECK-SAME: attributes {loom.entry = "outer_step"}
// CHECK-NEXT: loom.co2_outer @w, %[[MW]], %[[R]] {clip = 2.500000e-01 : f64, gap_penalty = 0.69999999999999996 : f64, outer_lr = 8.000000e-01 : f64, outer_momentum = 5.000000e-01 : f64}
// CHECK-NEXT: loom.co2_outer @b, %[[MB]], %[[R]]
// CHECK-NEXT: return
// CHECK-NOT: comm.

// local-steps=0: the cost model picks the fewest local steps whose compute
// covers the outer all-reduce and keeps the compute the all-reduce takes
// from the cores (comm-cpu of its time) under max-overhead of a round, and
// says why. On a 1 Mbit/s link that is many
// steps of this tiny model; on a 100 Gbit/s link without latency one step
// suffices.
// AUTO: local_steps = [[TAU:[0-9]+]], {{.*}}local_steps_reason = "one inner step computes ~{{[0-9.]+}} ms ({{[0-9.]+}} GFLOP at 1.0 GFLOP/s); the outer all-reduce of 0.00 MiB over 2 ranks takes ~{{[0-9.]+}} ms (0.001 Gbit/s, 100 us latency), hidden by [[HIDE:[0-9]+]] local steps, and takes ~{{[0-9.]+}} ms of compute from the cores while it runs (0.20 of its time), which [[TAU]] local steps keep under 10% of a round; local-steps=[[TAU]]"
// FAST: local_steps = 1,
// Hiding the round would take thousands of steps: the choice stops at
// max-local-steps (48 by default), and says what that costs.
// CAPPED: local_steps = 48, {{.*}}which {{[0-9]+}} local steps keep under 10% of a round; capped at max-local-steps=48 (beyond it CO2 has no convergence evidence): a round of 48 steps computes ~{{[0-9.]+}} ms, so each waits ~{{[0-9.]+}} ms for its outer all-reduce; expect ~{{[0-9]+}}% of the throughput without communication (compress the outer round, raise max-local-steps, or use a faster link)"
// BADCAP: error: --loom-co2: max-local-steps must be at least 1
// Communication that costs the cores nothing needs only hiding.
// FREE: hidden by [[H:[0-9]+]] local steps, and takes ~0.000 ms of compute {{.*}}; local-steps=[[H]]"
// The machine's values are checked where they are recorded.
// BADCPU: error: --loom-describe-machine: comm_cpu must be in [0, 1]
// BADOVERHEAD: error: --loom-co2: max-overhead must be in (0, 1)

// The train pipeline runs the pass with co2=1.
// PIPELINE: loom.co2 = #loom.co2<local_steps = 3,
// PIPELINE: func.func @outer_step(

// sharded=1: the outer step updates this rank's slice of the 16 trained
// elements (12 + 3 + the loss slot, over 2 ranks: 8 each), with its state
// named after the slice, and the module records the flat order.
// and each rank's slice (8 of the 15 parameter elements, then 7 and the
// loss slot).
// SHARD: loom.co2 = #loom.co2<local_steps = 4, {{.*}}ranks = 2, local_steps_reason = "", sharded = true, params = ["w", "b"], shard_elements = 8, shard_offsets = [0, 8], shard_sizes = [8, 7]>
// SHARD-NOT: func.func @outer_step
// SHARD-LABEL: func.func @outer_shard(
// SHARD-SAME: %[[R:.+]]: tensor<i64> {loom.input = "co2.round"}, %[[M:.+]]: tensor<8xf32> {loom.input = "co2.shard_mean"}) -> (tensor<8xf32> {loom.output = "co2.shard_out"})
// SHARD-NEXT: %[[A:.+]] = loom.co2_outer_shard "co2.shard", %[[M]], %[[R]] {clip = 1.000000e+00 : f64, gap_penalty = 2.000000e+00 : f64, outer_lr = 8.000000e-01 : f64, outer_momentum = 0.000000e+00 : f64} : tensor<8xf32>, tensor<i64>
// SHARD-NEXT: return %[[A]]
// The sharded round needs one step more than the replicated one would.
// SHARDAUTO: local_steps = 2,
// SHARDAUTO-SAME: hidden by 2 local steps (one more than the reduce-scatter and all-gather need: the sharded update runs between steps){{.*}}; local-steps=2"
// Lowered, the slice's outer state is state of the entry, updated in place
// by one fused kernel.
// SHARDABI: llvm.func @loom_outer_shard(
// SHARDABI: loom.abi = [{{.*}}{name = "co2.shard.co2_anchor", role = "state"}, {name = "co2.shard.co2_prev_anchor", role = "state"}, {name = "co2.shard.co2_momentum", role = "state"}, {name = "co2.round", role = "input"}, {name = "co2.shard_mean", role = "input"}, {name = "co2.shard_out", role = "output"}]

// NODP: error: --loom-co2 needs a data-parallel module: run --loom-data-parallel first
// ASYNC: error: --loom-co2 expects the synchronous all-reduces of --loom-data-parallel (compile without --overlap)
// BADOPT: error: --loom-co2: outer-momentum must be in [0, 1)

//--- model.mlir
module @tiny_model {
  loom.param @w : tensor<3x4xf32> init normal scale 0.5
  loom.param @b : tensor<3xf32> init zeros {no_weight_decay}
  func.func @loss(%x: tensor<2x4xf32> {loom.input = "x"}, %y: tensor<2xi32> {loom.input = "y"}) -> tensor<f32> {
    %w = loom.get_param @w : tensor<3x4xf32>
    %b = loom.get_param @b : tensor<3xf32>
    %h = loom.linear %x, %w, %b : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %l = loom.cross_entropy %h, %y : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
