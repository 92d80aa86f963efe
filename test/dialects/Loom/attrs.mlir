// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s

// Tests that #loom.machine, #loom.co2, #loom.zero and #loom.compression print and parse back with every
// field, the floats exactly, the sharded layout included (and
// #loom.compression's error_measure, not printed at its default relative).

// CHECK: loom.co2 = #loom.co2<local_steps = 3, outer_lr = 0.69999999999999996 : f64, outer_momentum = 5.000000e-01 : f64, gap_penalty = 2.000000e+00 : f64, clip = 1.000000e+00 : f64, mesh = @world, ranks = 3, local_steps_reason = "why", sharded = true, params = ["w", "b"], shard_elements = 5, shard_offsets = [0, 5, 10], shard_sizes = [5, 5, 3]>
// CHECK-SAME: loom.compression = #loom.compression<method = "lgreco", rank = 4, bits = 8, density = 1.000000e-02 : f64, warmup_steps = 20, resolve_every = 100, objective = "bytes", params = ["w", "v"], rows = [64, 8], cols = [32, 16], error_measure = "absolute">
// CHECK-SAME: loom.machine = #loom.machine<link_gbps = 0.93456789122999994 : f64, link_latency_us = 5.000000e+01 : f64, gflops = 3.800000e+01 : f64, comm_cpu = 2.000000e-01 : f64>
// CHECK-SAME: loom.zero = #loom.zero<stage = 2, mesh = @world, ranks = 4, params = ["w", "b"]>
module attributes {
  loom.co2 = #loom.co2<local_steps = 3, outer_lr = 0.7 : f64,
      outer_momentum = 0.5 : f64, gap_penalty = 2.0 : f64, clip = 1.0 : f64,
      mesh = @world, ranks = 3, local_steps_reason = "why", sharded = true,
      params = ["w", "b"], shard_elements = 5, shard_offsets = [0, 5, 10],
      shard_sizes = [5, 5, 3]>,
  loom.compression = #loom.compression<method = "lgreco", rank = 4, bits = 8,
      density = 0.01 : f64, warmup_steps = 20, resolve_every = 100,
      objective = "bytes", params = ["w", "v"], rows = [64, 8],
      cols = [32, 16], error_measure = "absolute">,
  loom.machine = #loom.machine<link_gbps = 0.93456789123 : f64,
      link_latency_us = 50.0 : f64, gflops = 38.0 : f64, comm_cpu = 0.2 : f64>,
  loom.zero = #loom.zero<stage = 2, mesh = @world, ranks = 4,
      params = ["w", "b"]>
} {
}

// Tests that #loom.tensor_split on a loom.param prints and parses back.
// CHECK: loom.param @attn.w : tensor<12x8xf32> init normal scale 2.000000e-02 {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 3, ranks = 2, mesh = @world, axis = "tp">}
module {
  loom.param @attn.w : tensor<12x8xf32> init normal scale 0.02
      {loom.tensor_split = #loom.tensor_split<dim = 0, blocks = 3, ranks = 2,
       mesh = @world, axis = "tp">}
}
