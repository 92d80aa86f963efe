//===- PlanPredict.cpp - What a layout's training step will cost ----------===//
#include "PlanPredict.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomDialect.h"
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
  if (pp > 1)
    text += " x pp=" + std::to_string(pp);
  if (tp > 1)
    text += " x tp=" + std::to_string(tp);
  if (pp > 1)
    text += " m=" + std::to_string(micro);
  if (zero)
    text += " zero=" + std::to_string(zero);
  if (overlap)
    text += " overlap";
  return text;
}

bool mlir::loom::driver::groupSpansNodes(const Layout &layout, MeshAxis axis,
                                         const ClusterSpec &cluster) {
  const int64_t shape[] = {layout.dp, layout.pp, layout.tp};
  const int a = static_cast<int>(axis);
  auto node = [&](int64_t rank) { return rank / cluster.ranksPerNode; };
  // Rank r's coordinate along `axis` is (r / stride) % size; the group's
  // first member has it 0.
  int64_t stride = 1;
  for (int i = 2; i > a; --i)
    stride *= shape[i];
  const int64_t ranks = layout.dp * layout.pp * layout.tp;
  for (int64_t r = 0; r < ranks; ++r) {
    int64_t first = r - ((r / stride) % shape[a]) * stride;
    if (node(r) != node(first))
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

/// `name` of pipeline stage `stage` (the merged module's `name_pp<s>`), or
/// `name` itself without a pipeline.
static std::string stageSymbol(StringRef name, const Layout &layout,
                               int64_t stage) {
  return layout.pp > 1 ? (name + "_pp" + std::to_string(stage)).str()
                       : name.str();
}

/// The functions a stage's @train_step runs: itself and what it calls.
static SmallVector<func::FuncOp> stepFunctions(ModuleOp module,
                                               const Layout &layout,
                                               int64_t stage) {
  llvm::SetVector<func::FuncOp> found;
  if (auto step = module.lookupSymbol<func::FuncOp>(
          stageSymbol("train_step", layout, stage)))
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

/// Whether pipeline stage `stage` holds `param` (every param without one).
static bool holds(ParamOp param, int64_t stage) {
  auto held = param->getAttrOfType<DenseI64ArrayAttr>(kPipelineStagesAttr);
  return !held || llvm::is_contained(held.asArrayRef(), stage);
}

/// Params, gradients and optimizer state on a rank of `stage`, as the
/// runtime counts them (Trainer.cpp: gradientBytes; the artifact's params
/// and state), and a bound on the activations it keeps.
static void predictMemory(ModuleOp module, const Layout &layout, int64_t stage,
                          Prediction &p) {
  for (ParamOp param : module.getOps<ParamOp>()) {
    if (!holds(param, stage))
      continue;
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
  if (auto step = module.lookupSymbol<func::FuncOp>(
          stageSymbol("train_step", layout, stage)))
    step.walk([&](OptimizerOpInterface opt) {
      p.stateBytes +=
          double(opt.getStateSuffixes().size()) * bytesOf(opt.getStateType());
    });
  // A pipelined @loss holds every micro-batch's forward values; 1F1B keeps
  // those of at most P - s micro-batches at once on stage s.
  double kept = layout.pp > 1 ? double(std::min(layout.pp - stage,
                                                layout.micro)) /
                                    double(layout.micro)
                              : 1.0;
  if (auto loss = module.lookupSymbol<func::FuncOp>(
          stageSymbol("loss", layout, stage)))
    loss.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        p.activationBytes += kept * bytesOf(t);
    });
}

/// A stage's compute and each axis's collectives, with data-parallel
/// communication hidden behind the backward pass when overlapped (about
/// two thirds of the compute), less the share of the cores the
/// communication takes. `transferSeconds`: its pipeline transfers.
static void predictTime(ModuleOp module, const Layout &layout,
                        const ClusterSpec &cluster, int64_t stage,
                        Prediction &p, double &transferSeconds) {
  auto linkOf = [&](MeshAxis axis) -> const MachineModel & {
    return groupSpansNodes(layout, axis, cluster) ? cluster.inter
                                                  : cluster.intra;
  };
  double flops = 0;
  for (func::FuncOp fn : stepFunctions(module, layout, stage))
    fn.walk([&](Operation *op) {
      flops += estimateFlops(op);
      auto axes = op->getAttrOfType<ArrayAttr>("axes");
      if (!axes || estimateCollectiveBytes(op) == 0)
        return;
      auto spans = [&](StringRef name) {
        return llvm::any_of(axes, [&](Attribute a) {
          return cast<StringAttr>(a).getValue() == name;
        });
      };
      if (isa<comm::SendOp>(op))
        transferSeconds += estimateCollectiveSeconds(op, linkOf(MeshAxis::PP));
      else if (spans("tp"))
        p.tpSeconds += estimateCollectiveSeconds(op, linkOf(MeshAxis::TP));
      else if (spans("dp"))
        p.dpSeconds += estimateCollectiveSeconds(op, linkOf(MeshAxis::DP));
    });
  p.computeSeconds = flops / cluster.intra.flopsPerSecond;
  p.dpExposedSeconds = p.dpSeconds;
  if (layout.overlap) {
    double hidden = std::min(p.dpSeconds, 2.0 / 3 * p.computeSeconds);
    p.dpExposedSeconds =
        p.dpSeconds - hidden + cluster.inter.commCpuFraction * hidden;
  }
}

Prediction mlir::loom::driver::predict(ModuleOp module, const Layout &layout,
                                       const ClusterSpec &cluster) {
  // Each stage on its own; a rank's memory is its stage's (the largest is
  // reported), the step the pipeline's: M + P - 1 slots of the slowest
  // stage's micro-batch and its two transfers (1F1B's bubble).
  Prediction result;
  result.layout = layout;
  double slot = 0, mostBytes = -1;
  for (int64_t stage = 0; stage < layout.pp; ++stage) {
    Prediction p;
    double transfers = 0;
    predictMemory(module, layout, stage, p);
    predictTime(module, layout, cluster, stage, p, transfers);
    slot = std::max(slot, (p.computeSeconds + p.tpSeconds + transfers) /
                              double(layout.micro));
    if (p.totalBytes() > mostBytes) {
      mostBytes = p.totalBytes();
      result.paramBytes = p.paramBytes;
      result.gradBytes = p.gradBytes;
      result.stateBytes = p.stateBytes;
      result.activationBytes = p.activationBytes;
    }
    result.computeSeconds = std::max(result.computeSeconds, p.computeSeconds);
    result.tpSeconds = std::max(result.tpSeconds, p.tpSeconds);
    result.dpSeconds = std::max(result.dpSeconds, p.dpSeconds);
    result.dpExposedSeconds =
        std::max(result.dpExposedSeconds, p.dpExposedSeconds);
  }
  double busy = result.computeSeconds + result.tpSeconds;
  double pipeline =
      layout.pp > 1 ? double(layout.micro + layout.pp - 1) * slot : busy;
  result.ppSeconds = pipeline - busy;
  result.stepSeconds = pipeline + result.dpExposedSeconds;
  return result;
}

std::string Prediction::reason(const ClusterSpec &cluster) const {
  auto level = [&](MeshAxis axis) {
    return groupSpansNodes(layout, axis, cluster) ? "between-node"
                                                  : "within-node";
  };
  std::string text = llvm::formatv("the shortest predicted step, {0:f2} ms: "
                                   "compute {1:f2} ms",
                                   stepSeconds * 1e3, computeSeconds * 1e3);
  if (layout.tp > 1)
    text += llvm::formatv(", tensor-parallel all-reduces {0:f2} ms on the "
                          "{1} link",
                          tpSeconds * 1e3, level(MeshAxis::TP));
  if (layout.pp > 1)
    text += llvm::formatv(", pipeline bubble and transfers {0:f2} ms ({1} "
                          "stages, {2} micro-batches, {3} link)",
                          ppSeconds * 1e3, layout.pp, layout.micro,
                          level(MeshAxis::PP));
  if (layout.dp > 1)
    text +=
        llvm::formatv(", data-parallel collectives {0:f2} ms on the {1} "
                      "link, {2:f2} ms of it not hidden",
                      dpSeconds * 1e3, level(MeshAxis::DP),
                      dpExposedSeconds * 1e3);
  return text +
         llvm::formatv("; {0:f1} MiB per rank with activations{1}",
                       totalBytes() / (1024.0 * 1024),
                       cluster.memoryBytes > 0 ? ", within the limit" : "")
             .str();
}
