// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s
// RUN: loom-opt %s --canonicalize --cse | FileCheck %s --check-prefix=EFFECTS

// Tests that every comm op prints in its custom form and parses back.

// Tests that 1-D and 2-D meshes keep their shape and axis names.
// CHECK: comm.mesh @world shape = [4] axes = ["dp"]{{$}}
// CHECK: comm.mesh @grid shape = [2, 3] axes = ["dp", "tp"]{{$}}
comm.mesh @world shape = [4] axes = ["dp"]
comm.mesh @grid shape = [2, 3] axes = ["dp", "tp"]

// Tests that all_reduce keeps each reduction kind and element type.
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[F:.+]]: tensor<8x6xf32>, %[[I:.+]]: tensor<6xi32>, %[[D:.+]]: tensor<f64>, %[[L:.+]]: tensor<2xi64>)
// CHECK: %[[SUM:.+]] = comm.all_reduce %[[F]] over @world ["dp"] sum : tensor<8x6xf32>
// CHECK: %[[MEAN:.+]] = comm.all_reduce %[[SUM]] over @world ["dp"] mean : tensor<8x6xf32>
// CHECK: %[[MAX:.+]] = comm.all_reduce %[[MEAN]] over @world ["dp"] max : tensor<8x6xf32>
// CHECK: %[[ISUM:.+]] = comm.all_reduce %[[I]] over @world ["dp"] sum : tensor<6xi32>
// CHECK: %[[IMAX:.+]] = comm.all_reduce %[[ISUM]] over @world ["dp"] max : tensor<6xi32>
// CHECK: comm.all_reduce %[[D]] over @world ["dp"] mean : tensor<f64>
// CHECK: comm.all_reduce %[[L]] over @world ["dp"] sum : tensor<2xi64>
// CHECK: return %[[MAX]], %[[IMAX]]
func.func @all_reduce(%f: tensor<8x6xf32>, %i: tensor<6xi32>, %d: tensor<f64>, %l: tensor<2xi64>) -> (tensor<8x6xf32>, tensor<6xi32>) {
  %0 = comm.all_reduce %f over @world ["dp"] sum : tensor<8x6xf32>
  %1 = comm.all_reduce %0 over @world ["dp"] mean : tensor<8x6xf32>
  %2 = comm.all_reduce %1 over @world ["dp"] max : tensor<8x6xf32>
  %3 = comm.all_reduce %i over @world ["dp"] sum : tensor<6xi32>
  %4 = comm.all_reduce %3 over @world ["dp"] max : tensor<6xi32>
  %5 = comm.all_reduce %d over @world ["dp"] mean : tensor<f64>
  %6 = comm.all_reduce %l over @world ["dp"] sum : tensor<2xi64>
  return %2, %4 : tensor<8x6xf32>, tensor<6xi32>
}

// Tests that a compressed all-reduce and its start keep their slot.
// CHECK-LABEL: func.func @compressed
// CHECK: %[[C:.+]] = comm.all_reduce %{{.+}} over @world ["dp"] mean {compress_slot = 3 : i64} : tensor<8x6xf32>
// CHECK: %[[T:.+]], %[[F:.+]] = comm.all_reduce_start %[[C]] over @world ["dp"] mean {compress_slot = 0 : i64} : tensor<8x6xf32>
func.func @compressed(%f: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = comm.all_reduce %f over @world ["dp"] mean {compress_slot = 3 : i64} : tensor<8x6xf32>
  %t, %1 = comm.all_reduce_start %0 over @world ["dp"] mean {compress_slot = 0 : i64} : tensor<8x6xf32>
  %2 = comm.wait %t, %1 : tensor<8x6xf32>
  return %2 : tensor<8x6xf32>
}

// Tests that reduce_scatter keeps its reduction and dim, along dim 0 and 1.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[X:.+]]: tensor<8x12xf32>)
// CHECK: %[[R0:.+]] = comm.reduce_scatter %[[X]] over @world ["dp"] sum dim = 0 : tensor<8x12xf32> -> tensor<2x12xf32>
// CHECK: %[[R1:.+]] = comm.reduce_scatter %[[R0]] over @world ["dp"] mean dim = 1 : tensor<2x12xf32> -> tensor<2x3xf32>
// CHECK: return %[[R1]]
func.func @reduce_scatter(%x: tensor<8x12xf32>) -> tensor<2x3xf32> {
  %0 = comm.reduce_scatter %x over @world ["dp"] sum dim = 0 : tensor<8x12xf32> -> tensor<2x12xf32>
  %1 = comm.reduce_scatter %0 over @world ["dp"] mean dim = 1 : tensor<2x12xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// Tests that all_gather keeps its dim, along dim 0 and 1.
// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xi64>)
// CHECK: %[[G0:.+]] = comm.all_gather %[[X]] over @world ["dp"] dim = 0 : tensor<2x3xi64> -> tensor<8x3xi64>
// CHECK: %[[G1:.+]] = comm.all_gather %[[G0]] over @world ["dp"] dim = 1 : tensor<8x3xi64> -> tensor<8x12xi64>
// CHECK: return %[[G1]]
func.func @all_gather(%x: tensor<2x3xi64>) -> tensor<8x12xi64> {
  %0 = comm.all_gather %x over @world ["dp"] dim = 0 : tensor<2x3xi64> -> tensor<8x3xi64>
  %1 = comm.all_gather %0 over @world ["dp"] dim = 1 : tensor<8x3xi64> -> tensor<8x12xi64>
  return %1 : tensor<8x12xi64>
}

// Tests that broadcast keeps its root, including the last rank of the group.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<4xf64>)
// CHECK: %[[B0:.+]] = comm.broadcast %[[X]] over @world ["dp"] root = 0 : tensor<4xf64>
// CHECK: %[[B3:.+]] = comm.broadcast %[[B0]] over @world ["dp"] root = 3 : tensor<4xf64>
// CHECK: return %[[B3]]
func.func @broadcast(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = comm.broadcast %x over @world ["dp"] root = 0 : tensor<4xf64>
  %1 = comm.broadcast %0 over @world ["dp"] root = 3 : tensor<4xf64>
  return %1 : tensor<4xf64>
}

// Tests that collectives over one axis of a 2-D mesh use that axis's size
// as the group size (2 along "dp", 3 along "tp", 6 along both), and that
// the axis order of a collective is kept.
// CHECK-LABEL: func.func @one_axis_of_grid
// CHECK-SAME: (%[[X:.+]]: tensor<12x6xf32>)
// CHECK: %[[AR:.+]] = comm.all_reduce %[[X]] over @grid ["tp"] sum : tensor<12x6xf32>
// CHECK: %[[RS:.+]] = comm.reduce_scatter %[[AR]] over @grid ["tp"] sum dim = 0 : tensor<12x6xf32> -> tensor<4x6xf32>
// CHECK: %[[AG:.+]] = comm.all_gather %[[RS]] over @grid ["dp"] dim = 1 : tensor<4x6xf32> -> tensor<4x12xf32>
// CHECK: %[[AG2:.+]] = comm.all_gather %[[AG]] over @grid ["tp", "dp"] dim = 0 : tensor<4x12xf32> -> tensor<24x12xf32>
// CHECK: %[[BC:.+]] = comm.broadcast %[[AG2]] over @grid ["tp"] root = 2 : tensor<24x12xf32>
// CHECK: %[[ARB:.+]] = comm.all_reduce %[[BC]] over @grid ["dp", "tp"] max : tensor<24x12xf32>
// CHECK: return %[[ARB]]
func.func @one_axis_of_grid(%x: tensor<12x6xf32>) -> tensor<24x12xf32> {
  %0 = comm.all_reduce %x over @grid ["tp"] sum : tensor<12x6xf32>
  %1 = comm.reduce_scatter %0 over @grid ["tp"] sum dim = 0 : tensor<12x6xf32> -> tensor<4x6xf32>
  %2 = comm.all_gather %1 over @grid ["dp"] dim = 1 : tensor<4x6xf32> -> tensor<4x12xf32>
  %3 = comm.all_gather %2 over @grid ["tp", "dp"] dim = 0 : tensor<4x12xf32> -> tensor<24x12xf32>
  %4 = comm.broadcast %3 over @grid ["tp"] root = 2 : tensor<24x12xf32>
  %5 = comm.all_reduce %4 over @grid ["dp", "tp"] max : tensor<24x12xf32>
  return %5 : tensor<24x12xf32>
}

// Tests that canonicalize and cse neither drop a collective whose result is
// unused nor merge two identical collectives: they talk to the other ranks,
// so every rank must issue each of them.
// CHECK-LABEL: func.func @unused_result
// CHECK: comm.all_reduce %{{.+}} over @world ["dp"] sum : tensor<4xf32>
// CHECK-NEXT: comm.all_reduce %{{.+}} over @world ["dp"] sum : tensor<4xf32>
// CHECK-NEXT: return
// EFFECTS-LABEL: func.func @unused_result
// EFFECTS-COUNT-2: comm.all_reduce %{{.+}} over @world ["dp"] sum : tensor<4xf32>
// EFFECTS-NEXT: return
func.func @unused_result(%x: tensor<4xf32>) {
  %0 = comm.all_reduce %x over @world ["dp"] sum : tensor<4xf32>
  %1 = comm.all_reduce %x over @world ["dp"] sum : tensor<4xf32>
  return
}

// Tests that the asynchronous forms round-trip: each start returns a token
// and the tensor in flight, consumed together by one comm.wait.
// CHECK-LABEL: func.func @async_forms
// CHECK: %[[T0:.+]], %[[F0:.+]] = comm.all_reduce_start %{{.+}} over @pair ["dp"] mean : tensor<8xf32>
// CHECK: %[[T1:.+]], %[[F1:.+]] = comm.reduce_scatter_start %{{.+}} over @pair ["dp"] sum dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: %[[T2:.+]], %[[F2:.+]] = comm.all_gather_start %{{.+}} over @pair ["dp"] dim = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: %[[T3:.+]], %[[F3:.+]] = comm.broadcast_start %{{.+}} over @pair ["dp"] root = 1 : tensor<8xf32>
// CHECK: comm.wait %[[T0]], %[[F0]] : tensor<8xf32>
// CHECK: comm.wait %[[T1]], %[[F1]] : tensor<2x2xf32>
// CHECK: comm.wait %[[T2]], %[[F2]] : tensor<4x2xf32>
// CHECK: comm.wait %[[T3]], %[[F3]] : tensor<8xf32>
comm.mesh @pair shape = [2] axes = ["dp"]
func.func @async_forms(%a: tensor<8xf32>, %b: tensor<4x2xf32>, %c: tensor<2x2xf32>) {
  %t0, %f0 = comm.all_reduce_start %a over @pair ["dp"] mean : tensor<8xf32>
  %t1, %f1 = comm.reduce_scatter_start %b over @pair ["dp"] sum dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
  %t2, %f2 = comm.all_gather_start %c over @pair ["dp"] dim = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
  %t3, %f3 = comm.broadcast_start %a over @pair ["dp"] root = 1 : tensor<8xf32>
  %r0 = comm.wait %t0, %f0 : tensor<8xf32>
  %r1 = comm.wait %t1, %f1 : tensor<2x2xf32>
  %r2 = comm.wait %t2, %f2 : tensor<4x2xf32>
  %r3 = comm.wait %t3, %f3 : tensor<8xf32>
  return
}

// Tests that group_rank round-trips and, being pure, is merged by CSE.
// CHECK-LABEL: func.func @group_rank
// CHECK: %[[R:.+]] = comm.group_rank @grid ["tp"]
// CHECK: return %[[R]]
// EFFECTS-LABEL: func.func @group_rank
// EFFECTS: %[[R:.+]] = comm.group_rank @grid ["tp"]
// EFFECTS-NEXT: return %[[R]], %[[R]]
func.func @group_rank() -> (index, index) {
  %r = comm.group_rank @grid ["tp"]
  %s = comm.group_rank @grid ["tp"]
  return %r, %s : index, index
}

// Tests that a transfer and its wait round-trip.
// CHECK-LABEL: func.func @transfer
// CHECK: %[[T:.+]], %[[F:.+]] = comm.transfer_start %{{.+}} into %{{.+}} "upload" : tensor<8xf32>
// CHECK: comm.wait %[[T]], %[[F]] : tensor<8xf32>
func.func @transfer(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %t, %f = comm.transfer_start %a into %e "upload" : tensor<8xf32>
  %r = comm.wait %t, %f : tensor<8xf32>
  return %r : tensor<8xf32>
}

// Tests that fan_out round-trips and, moving no data, is pure: CSE merges
// two of the same operand and removes an unused one.
// CHECK-LABEL: func.func @fan_out
// CHECK: %[[F:.+]] = comm.fan_out %{{.+}} over @grid ["tp"] : tensor<4x6xf32>
// EFFECTS-LABEL: func.func @fan_out
// EFFECTS: %[[F:.+]] = comm.fan_out
// EFFECTS-NEXT: return %[[F]], %[[F]]
func.func @fan_out(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %f = comm.fan_out %x over @grid ["tp"] : tensor<4x6xf32>
  %g = comm.fan_out %x over @grid ["tp"] : tensor<4x6xf32>
  %unused = comm.fan_out %f over @grid ["dp"] : tensor<4x6xf32>
  return %f, %g : tensor<4x6xf32>, tensor<4x6xf32>
}

// Tests that send and recv round-trip and, talking to another rank, are
// never removed or merged: CSE keeps both receives and the unused one.
// CHECK-LABEL: func.func @send_recv
// CHECK: comm.send %{{.+}} over @grid ["dp"] peer = 1 : tensor<4x6xf32>
// CHECK: comm.recv over @grid ["dp"] peer = -1 : tensor<4x6xf32>
// EFFECTS-LABEL: func.func @send_recv
// EFFECTS: comm.send
// EFFECTS-NEXT: comm.recv
// EFFECTS-NEXT: comm.recv
// EFFECTS-NEXT: comm.recv
func.func @send_recv(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  comm.send %x over @grid ["dp"] peer = 1 : tensor<4x6xf32>
  %a = comm.recv over @grid ["dp"] peer = -1 : tensor<4x6xf32>
  %b = comm.recv over @grid ["dp"] peer = -1 : tensor<4x6xf32>
  %unused = comm.recv over @grid ["dp"] peer = -1 : tensor<4x6xf32>
  return %a, %b : tensor<4x6xf32>, tensor<4x6xf32>
}

// Tests that shard round-trips and, moving no data, is pure: CSE merges
// two of the same operand.
// CHECK-LABEL: func.func @shard
// CHECK: comm.shard %{{.+}} over @grid ["tp"] dim = 0 : tensor<6x4xf32> -> tensor<2x4xf32>
// EFFECTS-LABEL: func.func @shard
// EFFECTS: %[[S:.+]] = comm.shard
// EFFECTS-NEXT: return %[[S]], %[[S]]
func.func @shard(%x: tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %a = comm.shard %x over @grid ["tp"] dim = 0 : tensor<6x4xf32> -> tensor<2x4xf32>
  %b = comm.shard %x over @grid ["tp"] dim = 0 : tensor<6x4xf32> -> tensor<2x4xf32>
  return %a, %b : tensor<2x4xf32>, tensor<2x4xf32>
}

// Tests that unshard round-trips and, talking to the other ranks, is never
// removed: CSE keeps the unused one.
// CHECK-LABEL: func.func @unshard
// CHECK: comm.unshard %{{.+}} over @grid ["tp"] dim = 0 : tensor<2x4xf32> -> tensor<6x4xf32>
// EFFECTS-LABEL: func.func @unshard
// EFFECTS: comm.unshard
// EFFECTS-NEXT: comm.unshard
func.func @unshard(%x: tensor<2x4xf32>) -> tensor<6x4xf32> {
  %a = comm.unshard %x over @grid ["tp"] dim = 0 : tensor<2x4xf32> -> tensor<6x4xf32>
  %unused = comm.unshard %x over @grid ["tp"] dim = 0 : tensor<2x4xf32> -> tensor<6x4xf32>
  return %a : tensor<6x4xf32>
}
