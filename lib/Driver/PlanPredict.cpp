//===- PlanPredict.cpp - What a layout's training step will cost ----------===//
#include "PlanPredict.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomOps.h"
#include "passes/Analysis/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

std::string Layout::describe() const {
  std::string text = "dp=" + std::to_string(dp);
  if (tp > 1)
    text += " x tp=" + std::to_string(tp);
  if (zero)
    text += " zero=" + std::to_string(zero);
  if (overlap)
    text += " overlap";
  return text;
}

bool mlir::loom::driver::groupSpansNodes(int64_t dp, int64_t tp,
                                         const ClusterSpec &cluster,
                                         bool tpGroup) {
  auto node = [&](int64_t rank) { return rank / cluster.ranksPerNode; };
  for (int64_t d = 0; d < dp; ++d)
    for (int64_t t = 0; t < tp; ++t) {
      // The group's first member: t = 0 (a tp group) or d = 0 (a dp one).
      int64_t first = tpGroup ? d * tp : t;
      if (node(d * tp + t) != node(first))
        return true;
    }
  return false;
}

static double bytesOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t)
    return 0;
  return double(t.getNumElements()) *
         double(t.getElementType().getIntOrFloatBitWidth()) / 8;
}

/// The functions @train_step runs: itself and what it calls.
static SmallVector<func::FuncOp> stepFunctions(ModuleOp module) {
  llvm::SetVector<func::FuncOp> found;
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
    found.insert(step);
  for (size_t i = 0; i < found.size(); ++i) {
    func::FuncOp fn = found[i];
    fn.walk([&](func::CallOp call) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        found.insert(callee);
    });
  }
  return SmallVector<func::FuncOp>(found.begin(), found.end());
}

/// Params, gradients and optimizer state per rank, as the runtime counts
/// them (Trainer.cpp: gradientBytes; the artifact's params and state).
static void predictMemory(ModuleOp module, const Layout &layout,
                          Prediction &p) {
  for (ParamOp param : module.getOps<ParamOp>()) {
    RankedTensorType type = param.getTensorType();
    p.paramBytes += bytesOf(type);
    // The gradient of a tensor-parallel part is the part's; ZeRO-2 and 3
    // keep ceil(n / dp) elements of a whole one.
    double elements = double(type.getNumElements());
    if (auto full = param->getAttrOfType<TypeAttr>(kFullTypeAttr))
      elements =
          double(cast<RankedTensorType>(full.getValue()).getNumElements());
    if (layout.zero >= 2)
      elements = std::ceil(elements / double(layout.dp));
    p.gradBytes +=
        elements * double(type.getElementType().getIntOrFloatBitWidth()) / 8;
  }
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
    step.walk([&](OptimizerOpInterface opt) {
      p.stateBytes +=
          double(opt.getStateSuffixes().size()) * bytesOf(opt.getStateType());
    });
  if (auto loss = module.lookupSymbol<func::FuncOp>("loss"))
    loss.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        p.activationBytes += bytesOf(t);
    });
}

/// Compute and each axis's collectives, with data-parallel communication
/// hidden behind the backward pass when overlapped (about two thirds of
/// the compute), less the share of the cores the communication takes.
static void predictTime(ModuleOp module, const Layout &layout,
                        const ClusterSpec &cluster, Prediction &p) {
  auto linkOf = [&](bool tpGroup) -> const MachineModel & {
    return groupSpansNodes(layout.dp, layout.tp, cluster, tpGroup)
               ? cluster.inter
               : cluster.intra;
  };
  double flops = 0;
  for (func::FuncOp fn : stepFunctions(module))
    fn.walk([&](Operation *op) {
      flops += estimateFlops(op);
      auto axes = op->getAttrOfType<ArrayAttr>("axes");
      if (!axes || estimateCollectiveBytes(op) == 0)
        return;
      bool tp = llvm::any_of(axes, [](Attribute a) {
        return cast<StringAttr>(a).getValue() == "tp";
      });
      (tp ? p.tpSeconds : p.dpSeconds) +=
          estimateCollectiveSeconds(op, linkOf(tp));
    });
  p.computeSeconds = flops / cluster.intra.flopsPerSecond;
  p.dpExposedSeconds = p.dpSeconds;
  if (layout.overlap) {
    double hidden = std::min(p.dpSeconds, 2.0 / 3 * p.computeSeconds);
    p.dpExposedSeconds =
        p.dpSeconds - hidden + cluster.inter.commCpuFraction * hidden;
  }
  p.stepSeconds = p.computeSeconds + p.tpSeconds + p.dpExposedSeconds;
}

Prediction mlir::loom::driver::predict(ModuleOp module, const Layout &layout,
                                       const ClusterSpec &cluster) {
  Prediction p;
  p.layout = layout;
  predictMemory(module, layout, p);
  predictTime(module, layout, cluster, p);
  return p;
}

std::string Prediction::reason(const ClusterSpec &cluster) const {
  auto level = [&](bool tpGroup) {
    return groupSpansNodes(layout.dp, layout.tp, cluster, tpGroup)
               ? "between-node"
               : "within-node";
  };
  std::string text = llvm::formatv("the shortest predicted step, {0:f2} ms: "
                                   "compute {1:f2} ms",
                                   stepSeconds * 1e3, computeSeconds * 1e3);
  if (layout.tp > 1)
    text += llvm::formatv(", tensor-parallel all-reduces {0:f2} ms on the "
                          "{1} link",
                          tpSeconds * 1e3, level(true));
  if (layout.dp > 1)
    text +=
        llvm::formatv(", data-parallel collectives {0:f2} ms on the {1} "
                      "link, {2:f2} ms of it not hidden",
                      dpSeconds * 1e3, level(false), dpExposedSeconds * 1e3);
  return text +
         llvm::formatv("; {0:f1} MiB per rank with activations{1}",
                       totalBytes() / (1024.0 * 1024),
                       cluster.memoryBytes > 0 ? ", within the limit" : "")
             .str();
}
