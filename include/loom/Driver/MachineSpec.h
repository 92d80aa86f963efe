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

/// A cluster the layout planner (loomc --plan) predicts for: `nodes` nodes
/// of `ranksPerNode` ranks, the links within a node and between nodes (the
/// compute rate and communication share of both from the same machine),
/// and the memory of a rank (0: no limit).
struct ClusterSpec {
  int64_t nodes = 1, ranksPerNode = 1;
  MachineModel intra, inter;
  double memoryBytes = 0;
  int64_t ranks() const { return nodes * ranksPerNode; }
};

/// Parses a `--cluster` spec, comma-separated keys in any order:
///   nodes=N, ranks-per-node=R (default 1 each)
///   intra-bw=<rate>, intra-lat=<time>, inter-bw=<rate>, inter-lat=<time>
///     (as --link's bw and lat; defaults from `base`; inter-bw is a node's
///     link, all its NICs, which the groups communicating at once share)
///   intra-calibration=FILE, inter-calibration=FILE (a `loom-run --calibrate`
///     file measured on two ranks of one node, or of two nodes: the link,
///     the compute rate and the communication share; keys after it
///     override it)
///   memory=<bytes> (16GiB, 512MiB; default no limit)
///   gflops=<rate> (default `base`'s)
///   comm-cpu=<share> (the compute a collective running in the background
///     takes, 0 to 1; `loom-run --calibrate`'s comm_cpu_fraction; default
///     `base`'s)
llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef spec,
                                             const MachineModel &base);

/// "link 1.00 Gbit/s, latency 50 us, compute 38.0 GFLOP/s", for messages.
std::string describe(const MachineModel &machine);

} // namespace mlir::loom

#endif // LOOM_DRIVER_MACHINESPEC_H
