//===- MachineSpec.h - Where the cost model's numbers come from -*- C++ -*-===//
//
// The cost model (CostModel.h) needs a link bandwidth and latency and a
// compute rate. Users give them as `loomc --link=bw=1gbit,lat=50us` or as
// the calibration file `loom-run --calibrate FILE` measured on the ranks the
// job will run on; both land in one MachineModel here, so every pass that
// reasons about time (overlap scheduling, CO2's local steps, layouts) reads
// the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DRIVER_MACHINESPEC_H
#define LOOM_DRIVER_MACHINESPEC_H

#include "passes/Analysis/CostModel.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlir::loom {

/// Applies a `--link` spec, comma-separated keys in any order:
///   bw=<rate>   10gbit, 100mbit, 500kbit, or a bare number in Gbit/s
///   lat=<time>  50us, 2ms, 0.1s, or a bare number in microseconds
/// to `machine`. Keys not given keep their values.
llvm::Error applyLinkSpec(llvm::StringRef spec, MachineModel &machine);

/// Applies a calibration file written by `loom-run --calibrate`: its GEMM
/// rate, and its link bandwidth and latency when it was measured on more than
/// one rank. `ranks` is set to the file's rank count.
llvm::Error applyCalibrationFile(llvm::StringRef path, MachineModel &machine,
                                 int64_t &ranks);

/// "link 1.00 Gbit/s, latency 50 us, compute 38.0 GFLOP/s", for messages.
std::string describe(const MachineModel &machine);

} // namespace mlir::loom

#endif // LOOM_DRIVER_MACHINESPEC_H
