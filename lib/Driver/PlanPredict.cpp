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

GroupPlacement mlir::loom::driver::placeGroups(const Layout &layout,
                                               MeshAxis axis,
                                               const ClusterSpec &cluster) {
  const int64_t shape[] = {layout.dp, layout.pp, layout.tp};
  const int a = static_cast<int>(axis);
  // Rank r's coordinate along `axis` is (r / stride) % size: rank 0's
  // group is 0, stride, 2 stride, ...; every group is placed alike.
  int64_t stride = 1;
  for (int i = 2; i > a; --i)
    stride *= shape[i];
  llvm::SmallSetVector<int64_t, 8> nodes;
  for (int64_t i = 0; i < shape[a]; ++i)
    nodes.insert(i * stride / cluster.ranksPerNode);
  const int64_t spanned = static_cast<int64_t>(nodes.size());
  return {spanned, std::max<int64_t>(1, shape[a] / spanned)};
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
  return layout.pp > 1 ? pipelineSymbol(name, stage) : name.str();
}

/// The functions a stage's @train_step runs: itself and what it calls.
static SmallVector<func::FuncOp>
stepFunctions(ModuleOp module, const Layout &layout, int64_t stage) {
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
                          int64_t compiledMicro, Prediction &p) {
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
    const double elementBytes =
        double(type.getElementType().getIntOrFloatBitWidth()) / 8;
    if (layout.zero >= 2) {
      // A pipeline sums its micro-batches' gradients whole before they are
      // reduce-scattered: the sums are temporaries of the step.
      if (layout.pp > 1)
        p.activationBytes += elements * elementBytes;
      elements = std::ceil(elements / double(layout.dp));
    }
    p.gradBytes += elements * elementBytes;
  }
  if (auto step = module.lookupSymbol<func::FuncOp>(
          stageSymbol("train_step", layout, stage)))
    step.walk([&](OptimizerOpInterface opt) {
      p.stateBytes +=
          double(opt.getStateSuffixes().size()) * bytesOf(opt.getStateType());
    });
  // A pipelined @loss holds the forward values of each micro-batch it was
  // compiled with. 1F1B needs those of at most P - s micro-batches at once
  // on stage s, but Loom's compiled step keeps every micro-batch's until
  // the step ends (the step's temporaries peak at 106 and 202 MiB with 4
  // and 8 micro-batches of a 25 M GPT at P = 4; bench/RESULTS.md): what
  // it keeps is what a rank must hold.
  double kept =
      layout.pp > 1 ? double(layout.micro) / double(compiledMicro) : 1.0;
  if (auto loss =
          module.lookupSymbol<func::FuncOp>(stageSymbol("loss", layout, stage)))
    loss.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        p.activationBytes += kept * bytesOf(t);
    });
}

/// What one stage's step costs: per micro-batch (its forward and backward
/// pass: compute, tensor-parallel all-reduces, transfers to and from the
/// neighbouring stages) and once per step (the optimizer, the exchange of
/// shared gradients, the data-parallel collectives).
struct StageTime {
  double microCompute = 0, microTp = 0, microTransfers = 0;
  double stepCompute = 0, stepTp = 0, stepTransfers = 0, dp = 0;
};

/// What collective `op` of a group along `axis` takes. Inside a node, a
/// ring of its ranks on the within-node link. Between nodes, what bounds
/// it is the nodes' links: the bytes of a ring over the nodes (the ranks
/// of a node combine over the fast link, as hierarchical MPI and NCCL
/// algorithms do), on a link shared by the groups of the axis that have
/// ranks of one pipeline stage on the node (they run the same collective
/// at once). Measured on
/// 2 emulated hosts of 2 ranks (bench/RESULTS.md): an all-reduce of 4
/// ranks took 0.85x the time of 2 ranks' (one per host) of the same
/// bytes, where a ring of ranks predicts 1.5x; two groups of 2 crossing
/// at once took twice one group's time.
static double collectiveSeconds(Operation *op, MeshAxis axis,
                                const Layout &layout,
                                const ClusterSpec &cluster) {
  const GroupPlacement placed = placeGroups(layout, axis, cluster);
  if (placed.nodes == 1)
    return estimateCollectiveSeconds(op, cluster.intra);
  double bytes = estimateCollectiveBytes(op);
  const double n = double(placed.nodes * placed.ranksPerNode);
  const double k = double(placed.nodes);
  if (!isa<comm::SendOp>(op))
    bytes *= ((k - 1) / k) / ((n - 1) / n);
  // The groups on a node that communicate at once: those of one pipeline
  // stage (the stages reach their collectives at different times).
  int64_t sameStage = 0;
  for (int64_t r = 0; r < cluster.ranksPerNode; ++r)
    sameStage += (r / layout.tp) % layout.pp == 0;
  const double sharing =
      std::max(1.0, double(sameStage) / double(placed.ranksPerNode));
  return cluster.inter.linkLatencySeconds +
         sharing * bytes / cluster.inter.linkBytesPerSecond;
}

/// `stage`'s costs in `module`, compiled with `compiledMicro` micro-batches
/// per step (the per-micro-batch costs are a compiled step's divided by
/// it), each collective at the link its group spans.
static StageTime stageTime(ModuleOp module, const Layout &layout,
                           const ClusterSpec &cluster, int64_t stage,
                           int64_t compiledMicro) {
  StageTime t;
  const double rate = cluster.intra.flopsPerSecond;
  for (func::FuncOp fn : stepFunctions(module, layout, stage)) {
    // @loss_and_grad runs the micro-batches; @train_step updates once.
    const bool micro = fn.getSymName().starts_with("loss_and_grad");
    fn.walk([&](Operation *op) {
      (micro ? t.microCompute : t.stepCompute) += estimateFlops(op) / rate;
      auto axes = op->getAttrOfType<ArrayAttr>("axes");
      if (!axes || estimateCollectiveBytes(op) == 0)
        return;
      auto spans = [&](StringRef name) {
        return llvm::any_of(axes, [&](Attribute a) {
          return cast<StringAttr>(a).getValue() == name;
        });
      };
      if (isa<comm::SendOp>(op))
        (op->hasAttr(kPipelineSharedAttr) ? t.stepTransfers
                                          : t.microTransfers) +=
            collectiveSeconds(op, MeshAxis::PP, layout, cluster);
      else if (spans("tp"))
        (micro ? t.microTp : t.stepTp) +=
            collectiveSeconds(op, MeshAxis::TP, layout, cluster);
      else if (spans("dp"))
        t.dp += collectiveSeconds(op, MeshAxis::DP, layout, cluster);
    });
  }
  for (double *perMicro : {&t.microCompute, &t.microTp, &t.microTransfers})
    *perMicro /= double(compiledMicro);
  return t;
}

Prediction mlir::loom::driver::predict(ModuleOp module, const Layout &layout,
                                       const ClusterSpec &cluster) {
  // Each stage on its own; a rank's memory is its stage's (the most of
  // each quantity over the stages is reported), the step the pipeline's:
  // M + P - 1 slots of the slowest stage's micro-batch with its transfers
  // (1F1B's bubble), then the slowest stage's once-per-step work.
  int64_t compiledMicro = 1;
  if (auto pipeline = module->getAttrOfType<DictionaryAttr>(kPipelineAttr))
    if (auto m = pipeline.getAs<IntegerAttr>("micro_batches"))
      compiledMicro = m.getInt();
  const double micro = double(layout.micro);
  Prediction result;
  result.layout = layout;
  double slot = 0, once = 0;
  for (int64_t stage = 0; stage < layout.pp; ++stage) {
    // Each quantity the most any stage holds, as loom-run's "memory per
    // rank" reports it (their sum bounds any rank's).
    Prediction p;
    predictMemory(module, layout, stage, compiledMicro, p);
    result.paramBytes = std::max(result.paramBytes, p.paramBytes);
    result.gradBytes = std::max(result.gradBytes, p.gradBytes);
    result.stateBytes = std::max(result.stateBytes, p.stateBytes);
    result.activationBytes =
        std::max(result.activationBytes, p.activationBytes);
    StageTime t = stageTime(module, layout, cluster, stage, compiledMicro);
    slot = std::max(slot, t.microCompute + t.microTp + t.microTransfers);
    once = std::max(once, t.stepCompute + t.stepTp + t.stepTransfers);
    result.computeSeconds =
        std::max(result.computeSeconds, micro * t.microCompute + t.stepCompute);
    result.tpSeconds = std::max(result.tpSeconds, micro * t.microTp + t.stepTp);
    result.dpSeconds = std::max(result.dpSeconds, t.dp);
  }
  result.dpExposedSeconds = result.dpSeconds;
  if (layout.overlap) {
    // Hidden behind the backward pass (about two thirds of the compute),
    // less the share of the cores the communication takes. A pipeline's
    // gradients are whole only in its last micro-batch's backward pass,
    // the only one their all-reduces can hide behind.
    double hidden =
        std::min(result.dpSeconds, 2.0 / 3 * result.computeSeconds / micro);
    result.dpExposedSeconds =
        result.dpSeconds - hidden + cluster.inter.commCpuFraction * hidden;
  }
  double pipeline = double(layout.micro + layout.pp - 1) * slot + once;
  result.ppSeconds =
      std::max(0.0, pipeline - result.computeSeconds - result.tpSeconds);
  result.stepSeconds = result.computeSeconds + result.tpSeconds +
                       result.ppSeconds + result.dpExposedSeconds;
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
    text += llvm::formatv(", data-parallel collectives {0:f2} ms on the {1} "
                          "link, {2:f2} ms of it not hidden",
                          dpSeconds * 1e3, level(MeshAxis::DP),
                          dpExposedSeconds * 1e3);
  return text +
         llvm::formatv("; {0:f1} MiB per rank with activations{1}",
                       totalBytes() / (1024.0 * 1024),
                       cluster.memoryBytes > 0 ? ", within the limit" : "")
             .str();
}
