// RUN: loom-opt %s --loom-describe-machine | FileCheck %s --check-prefix=DEFAULT
// RUN: loom-opt %s --loom-describe-machine="link-gbps=0.93456789123 link-latency-us=20 gflops=38 comm-cpu=0.25" \
// RUN:   | FileCheck %s --check-prefix=GIVEN
// RUN: not loom-opt %s --loom-describe-machine="gflops=0" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that the machine the cost model assumes is recorded once on the
// module: the defaults of MachineOptions.def, or the values given, exactly
// (loomc hands a calibrated link over with all its bits).
// DEFAULT: module attributes {loom.machine = #loom.machine<link_gbps = 1.000000e+01 : f64, link_latency_us = 5.000000e+01 : f64, gflops = 5.000000e+01 : f64, comm_cpu = 2.000000e-01 : f64>}
// GIVEN: loom.machine = #loom.machine<link_gbps = 0.93456789122999994 : f64, link_latency_us = 2.000000e+01 : f64, gflops = 3.800000e+01 : f64, comm_cpu = 2.500000e-01 : f64>

// Tests that a value the cost model cannot use is an error at the module.
// BAD: describe-machine.mlir:[[@LINE+1]]:1: error: --loom-describe-machine: link_gbps and gflops must be positive
module {
}
