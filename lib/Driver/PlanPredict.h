//===- PlanPredict.h - What a layout's training step will cost --*- C++ -*-===//
//
// Internal to the driver: loomc --plan's prediction of one layout, read off
// its train-stage IR. Memory per rank is what loom-run's "memory per rank"
// line reports (params, gradients, optimizer state), computed the way the
// runtime computes it; the step time is the cost model's compute plus the
// collectives on the links their groups span.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DRIVER_PLANPREDICT_H
#define LOOM_LIB_DRIVER_PLANPREDICT_H

#include "loom/Driver/MachineSpec.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::loom::driver {

/// One way to lay the model out on the ranks.
struct Layout {
  int64_t dp = 1, tp = 1, zero = 0;
  bool overlap = false;
  /// Pipeline stages and micro-batches per step (1, 1: not pipelined).
  int64_t pp = 1, micro = 1;
  /// "dp=2 x tp=2", "dp=4 zero=3 overlap", "dp=1 x pp=2 m=4".
  std::string describe() const;
};

/// The mesh axes of a layout, in the order ranks are numbered (row-major:
/// tp groups consecutive ranks, then the stages of a pipeline).
enum class MeshAxis { DP, PP, TP };

/// Where the groups of `axis` lie when the layout's dp x pp x tp ranks are
/// numbered row-major and nodes hold consecutive ranks: the nodes a group
/// spans and how many of its ranks share a node.
struct GroupPlacement {
  int64_t nodes = 1, ranksPerNode = 1;
};
GroupPlacement placeGroups(const Layout &layout, MeshAxis axis,
                           const ClusterSpec &cluster);

/// Whether the groups of `axis` span more than one node of `cluster`.
inline bool groupSpansNodes(const Layout &layout, MeshAxis axis,
                            const ClusterSpec &cluster) {
  return placeGroups(layout, axis, cluster).nodes > 1;
}

struct Prediction {
  Layout layout;
  double paramBytes = 0, gradBytes = 0, stateBytes = 0;
  /// The forward pass's values: a bound on what the step keeps for the
  /// backward pass (the step's temporaries are planned later, at the
  /// lowered stage; not part of loom-run's "memory per rank").
  double activationBytes = 0;
  double computeSeconds = 0, tpSeconds = 0, dpSeconds = 0;
  double dpExposedSeconds = 0, stepSeconds = 0;
  /// A pipeline's bubble and transfers: its step less its costliest
  /// stage's compute and tensor-parallel time.
  double ppSeconds = 0;

  double totalBytes() const {
    return paramBytes + gradBytes + stateBytes + activationBytes;
  }
  bool fits(const ClusterSpec &cluster) const {
    return cluster.memoryBytes <= 0 || totalBytes() <= cluster.memoryBytes;
  }
  /// Why it is first: its time and where the time goes.
  std::string reason(const ClusterSpec &cluster) const;
};

/// The prediction for `module`, `layout` compiled to the train stage.
Prediction predict(ModuleOp module, const Layout &layout,
                   const ClusterSpec &cluster);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_PLANPREDICT_H
