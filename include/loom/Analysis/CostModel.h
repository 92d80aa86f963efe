//===- CostModel.h - Compute and communication time estimates ---*- C++ -*-===//
//
// The one cost model of the compiler: FLOPs per op, bytes per collective and
// a link (bandwidth, latency) and compute rate. The overlap scheduler uses it
// to estimate hidden communication; CO2's choice of local steps and the
// parallel-layout planner are meant to use the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_ANALYSIS_COSTMODEL_H
#define LOOM_ANALYSIS_COSTMODEL_H

#include "mlir/IR/Operation.h"

namespace mlir::loom {

struct MachineModel {
  double linkBytesPerSecond = 10e9 / 8; ///< per rank, one direction
  double linkLatencySeconds = 50e-6;    ///< per collective
  double flopsPerSecond = 50e9;         ///< sustained compute rate
  /// Compute time lost per second of a collective running in the background:
  /// the communication thread's polls and the network stack share the
  /// cores with compute. Measured by `loom-run --calibrate`; the default is
  /// what it measured on 2 emulated hosts on 2 cores (0.15-0.25).
  double commCpuFraction = 0.2;
};

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

#endif // LOOM_ANALYSIS_COSTMODEL_H
