// RUN: loom-opt %s -split-input-file --loom-schedule-overlap | FileCheck %s
// RUN: loom-opt %s -split-input-file --loom-schedule-overlap="max-inflight-mib=0.00003" | FileCheck %s --check-prefix=CAP
// RUN: loom-opt %s -split-input-file --loom-schedule-overlap="emit-remarks=1" 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -split-input-file --loom-describe-machine="link-gbps=0.001" \
// RUN:   --loom-schedule-overlap="emit-remarks=1" 2>&1 | FileCheck %s --check-prefix=SLOW

// Tests that each start moves up to just after its operand is produced and
// each wait down to just before the first use, so the independent compute
// in between runs while the collectives are in flight; the starts keep
// their program order (identical on every rank).
// CHECK-LABEL: func.func @overlap
// CHECK: %[[G1:.+]] = loom.mul %arg0, %arg0
// CHECK-NEXT: %[[T1:.+]], %[[F1:.+]] = comm.all_reduce_start %[[G1]]
// CHECK-NEXT: %[[G2:.+]] = loom.add %arg0, %arg0
// CHECK-NEXT: %[[T2:.+]], %[[F2:.+]] = comm.all_reduce_start %[[G2]]
// CHECK-NEXT: loom.matmul
// CHECK-NEXT: loom.exp
// CHECK-NEXT: %[[R1:.+]] = comm.wait %[[T1]], %[[F1]]
// CHECK-NEXT: loom.add %[[R1]]
// CHECK-NEXT: %[[R2:.+]] = comm.wait %[[T2]], %[[F2]]
// CHECK-NEXT: return
// With a cap of ~31 bytes in flight, the first collective (16 bytes) is
// waited before the second one starts.
// CAP-LABEL: func.func @overlap
// CAP: comm.all_reduce_start
// CAP: comm.wait
// CAP: comm.all_reduce_start
// CAP: loom.matmul
// REMARK: remark: collective ~{{[0-9.]+}} ms overlaps ~{{[0-9.]+}} ms of compute (hidden {{[0-9]+}}%)
// The cost model reads the machine from the module's loom.machine: 16 bytes
// at 10 Gbit/s (the default) are the 50 us latency; at 1 Mbit/s, 0.178 ms.
// REMARK: collective ~0.050 ms
// SLOW: collective ~0.178 ms
comm.mesh @world shape = [2] axes = ["dp"]
func.func @overlap(%x: tensor<4xf32>, %m: tensor<16x16xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<16x16xf32>) {
  %g1 = loom.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g2 = loom.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %mm = loom.matmul %m, %m : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %e = loom.exp %mm : tensor<16x16xf32>
  %t1, %f1 = comm.all_reduce_start %g1 over @world ["dp"] mean : tensor<4xf32>
  %r1 = comm.wait %t1, %f1 : tensor<4xf32>
  %t2, %f2 = comm.all_reduce_start %g2 over @world ["dp"] mean : tensor<4xf32>
  %r2 = comm.wait %t2, %f2 : tensor<4xf32>
  %u = loom.add %r1, %r1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u, %r2, %e : tensor<4xf32>, tensor<4xf32>, tensor<16x16xf32>
}

// -----

// Tests that a later collective never starts before an earlier one, even
// when its operand is ready first (the collective order is program order).
// CHECK-LABEL: func.func @keep_collective_order
// CHECK: %[[LATE:.+]] = loom.exp %arg1
// CHECK: %[[EARLY:.+]] = loom.exp %arg0
// CHECK-NEXT: comm.all_reduce_start %[[EARLY]]
// CHECK-NEXT: comm.all_reduce_start %[[LATE]]
comm.mesh @world shape = [2] axes = ["dp"]
func.func @keep_collective_order(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %late = loom.exp %b : tensor<4xf32>
  %early = loom.exp %a : tensor<4xf32>
  %t1, %f1 = comm.all_reduce_start %early over @world ["dp"] mean : tensor<4xf32>
  %r1 = comm.wait %t1, %f1 : tensor<4xf32>
  %t2, %f2 = comm.all_reduce_start %late over @world ["dp"] mean : tensor<4xf32>
  %r2 = comm.wait %t2, %f2 : tensor<4xf32>
  return %r1, %r2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a bucket's packing (the reshapes and the concat the bucketing
// placed where its last collective was) moves up with its start: the
// bucket starts as soon as its last gradient exists, before the matmul,
// instead of after it.
// CHECK-LABEL: func.func @hoist_packing
// CHECK: %[[G1:.+]] = loom.mul %arg0, %arg0
// CHECK-NEXT: %[[G2:.+]] = loom.exp %arg1
// CHECK-NEXT: %[[FLAT:.+]] = loom.reshape %[[G2]]
// CHECK-NEXT: %[[PACK:.+]] = loom.concat %[[G1]], %[[FLAT]]
// CHECK-NEXT: comm.all_reduce_start %[[PACK]]
// CHECK-NEXT: loom.matmul
comm.mesh @world shape = [2] axes = ["dp"]
func.func @hoist_packing(%x: tensor<4xf32>, %y: tensor<2x2xf32>, %m: tensor<16x16xf32>) -> (tensor<8xf32>, tensor<16x16xf32>) {
  %g1 = loom.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g2 = loom.exp %y : tensor<2x2xf32>
  %mm = loom.matmul %m, %m : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %flat = loom.reshape %g2 : tensor<2x2xf32> -> tensor<4xf32>
  %pack = loom.concat %g1, %flat axis = 0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %t, %f = comm.all_reduce_start %pack over @world ["dp"] mean : tensor<8xf32>
  %r = comm.wait %t, %f : tensor<8xf32>
  return %r, %mm : tensor<8xf32>, tensor<16x16xf32>
}
