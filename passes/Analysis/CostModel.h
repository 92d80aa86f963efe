//===- CostModel.h - Compute and communication time estimates ---*- C++ -*-===//
//
// The one cost model of the compiler: FLOPs per op, bytes per collective and
// a link (bandwidth, latency) and compute rate. The overlap scheduler uses it
// to estimate hidden communication; CO2's choice of local steps and the
// parallel-layout planner are meant to use the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_ANALYSIS_COSTMODEL_H
#define LOOM_PASSES_ANALYSIS_COSTMODEL_H

#include "passes/Analysis/MachineOptions.h"

#include "mlir/IR/Operation.h"

namespace mlir::loom {

/// The machine in the units the estimates compute in; MachineOptions.def
/// defines each field, its default and its help once.
struct MachineModel {
  /// Per rank, one direction.
  double linkBytesPerSecond = MachineOptions().linkGbps * 1e9 / 8;
  /// Per collective.
  double linkLatencySeconds = MachineOptions().linkLatencyUs / 1e6;
  /// Sustained compute rate.
  double flopsPerSecond = MachineOptions().gflops * 1e9;
  /// Compute time lost per second of a collective running in the background:
  /// the communication thread's polls and the network stack share the
  /// cores with compute. Measured by `loom-run --calibrate`; the default is
  /// what it measured on 2 emulated hosts on 2 cores (0.15-0.25).
  double commCpuFraction = MachineOptions().commCpu;
};

/// The two unit conversions between what users give (Gbit/s, us, GFLOP/s)
/// and the model; every hand-over goes through these, so a model handed
/// from loomc to the passes and back arrives with the same bits.
MachineOptions toMachineOptions(const MachineModel &machine);
MachineModel toMachineModel(const MachineOptions &options);

/// What `module`'s loom.machine says (--loom-describe-machine), or the
/// defaults when it has none; and that as a model.
MachineOptions getMachineOptions(Operation *module);
MachineModel getMachineModel(Operation *module);

/// Floating-point operations of one op (0 for ops that only move data).
double estimateFlops(Operation *op);

/// Bytes each rank sends for a collective (ring algorithms): an all-reduce
/// of S bytes over n ranks sends 2 S (n-1)/n.
double estimateCollectiveBytes(Operation *collective);

/// Seconds for a collective on `machine`.
double estimateCollectiveSeconds(Operation *collective,
                                 const MachineModel &machine);

/// Seconds of compute for `op` on `machine`.
double estimateComputeSeconds(Operation *op, const MachineModel &machine);

/// The bucket size for overlapped gradient all-reduces on `machine`: large
/// enough that the per-collective latency costs at most ~1/8 of a bucket's
/// transfer, small enough that the first bucket starts early in the
/// backward pass; clamped to [32 KiB, 25 MiB] (25 MiB: PyTorch DDP's
/// default cap).
double chooseBucketBytes(const MachineModel &machine);

} // namespace mlir::loom

#endif // LOOM_PASSES_ANALYSIS_COSTMODEL_H
