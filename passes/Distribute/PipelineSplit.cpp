//===- PipelineSplit.cpp - The model cut into pipeline stages -------------===//
//
// A stage boundary is a place in @loss's op list where one value is all
// that flows from the ops before it to the ops after it (parameters, inputs
// and constants are read again by whichever stage needs them). Between two
// transformer blocks that is the residual stream; inside a block, several
// values cross. The boundaries that minimise the costliest stage's FLOPs
// are chosen by a small dynamic program, and each stage becomes a nested
// module of its own, so that autodiff, the optimizer and data parallelism
// run on it as on any model.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"
#include "passes/Distribute/Pipeline.h"

#include "dialects/Loom/IR/LoomBuilder.h"
#include "passes/Analysis/CostModel.h"
#include "passes/Train/LossFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "loom-pipeline-split"

namespace mlir::loom {
#define GEN_PASS_DEF_PIPELINESPLITPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

/// Ops read again by every stage that uses them rather than passed along.
bool isRereadable(Operation *op) {
  return isa<GetParamOp>(op) || op->getNumOperands() == 0;
}

/// The compute ops of @loss in order, and the places between them where a
/// single value crosses: boundary b lies before compute op b.
struct Boundaries {
  SmallVector<Operation *> ops;
  /// Boundary index -> the one value that crosses it.
  llvm::MapVector<int64_t, Value> single;
  /// FLOPs of ops [0, i) for i in [0, ops.size()].
  SmallVector<double> prefixCost;
};

Boundaries findBoundaries(func::FuncOp loss) {
  Boundaries result;
  llvm::DenseMap<Operation *, int64_t> index;
  for (Operation &op : loss.front().without_terminator())
    if (!isRereadable(&op)) {
      index[&op] = result.ops.size();
      result.ops.push_back(&op);
    }
  int64_t n = result.ops.size();
  result.prefixCost.assign(n + 1, 0.0);
  // Each value computed here and used later is live across boundaries
  // (def, last]; a boundary with one live value is a place to cut.
  struct Range {
    int64_t def, last;
    Value value;
  };
  SmallVector<Range> ranges;
  SmallVector<int64_t> delta(n + 2, 0);
  for (auto [i, op] : llvm::enumerate(result.ops)) {
    result.prefixCost[i + 1] = result.prefixCost[i] + estimateFlops(op);
    for (Value v : op->getResults()) {
      int64_t last = -1;
      for (Operation *user : v.getUsers()) {
        auto it = index.find(user);
        last = std::max(last, it == index.end() ? n : it->second);
      }
      if (last <= int64_t(i))
        continue;
      ranges.push_back({int64_t(i), last, v});
      ++delta[i + 1];
      --delta[last + 1];
    }
  }
  int64_t crossing = 0;
  for (int64_t b = 1; b < n; ++b) {
    crossing += delta[b];
    if (crossing != 1)
      continue;
    for (const Range &r : ranges)
      if (r.def < b && b <= r.last)
        result.single[b] = r.value;
  }
  return result;
}

/// The `stages - 1` boundaries that minimise the costliest stage (ties: the
/// earliest), by a dynamic program over the candidates.
SmallVector<int64_t> chooseCuts(const Boundaries &bounds, int64_t stages) {
  SmallVector<int64_t> cand{0};
  for (auto &entry : bounds.single)
    cand.push_back(entry.first);
  int64_t n = bounds.ops.size();
  cand.push_back(n);
  int64_t k = cand.size();
  auto cost = [&](int64_t a, int64_t b) {
    return bounds.prefixCost[cand[b]] - bounds.prefixCost[cand[a]];
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][j]: the least max cost of s stages covering [0, cand[j]).
  std::vector<std::vector<double>> best(stages + 1,
                                        std::vector<double>(k, inf));
  std::vector<std::vector<int64_t>> from(stages + 1,
                                         std::vector<int64_t>(k, -1));
  best[0][0] = 0;
  for (int64_t s = 1; s <= stages; ++s)
    for (int64_t j = 1; j < k; ++j)
      for (int64_t i = 0; i < j; ++i) {
        double value = std::max(best[s - 1][i], cost(i, j));
        if (value < best[s][j]) {
          best[s][j] = value;
          from[s][j] = i;
        }
      }
  SmallVector<int64_t> cuts;
  for (int64_t s = stages, j = k - 1; s > 1; --s) {
    j = from[s][j];
    cuts.push_back(cand[j]);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

struct PipelineSplitPass : impl::PipelineSplitPassBase<PipelineSplitPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stages < 2 || microBatches < 1 || dp < 1) {
      module.emitError("--loom-pipeline-split needs stages >= 2, "
                       "micro-batches >= 1 and dp >= 1");
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> found = lookupLossFunction(module, "loss");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp loss = *found;
    Boundaries bounds = findBoundaries(loss);
    if (int64_t(bounds.single.size()) < stages - 1) {
      loss.emitError("cannot cut this model into ")
          << int64_t(stages) << " pipeline stages: it has "
          << bounds.single.size()
          << " places where a single activation flows from one part to the "
             "next (a transformer has one between each two of its blocks), "
             "fewer than the "
          << int64_t(stages) - 1 << " cuts needed; use fewer stages";
      return signalPassFailure();
    }
    SmallVector<int64_t> cuts = chooseCuts(bounds, stages);
    SmallVector<int64_t> edges{0};
    edges.append(cuts);
    edges.push_back(bounds.ops.size());

    // The stages that read each parameter (two for a tied embedding).
    llvm::DenseMap<StringAttr, SmallVector<int64_t>> readers;
    for (int64_t s = 0; s < stages; ++s)
      for (int64_t i = edges[s]; i < edges[s + 1]; ++i)
        for (Value operand : bounds.ops[i]->getOperands())
          if (auto get = operand.getDefiningOp<GetParamOp>()) {
            auto &list = readers[get.getParamAttr().getAttr()];
            if (list.empty() || list.back() != s)
              list.push_back(s);
          }
    for (auto &[name, list] : readers)
      if (list.size() > 2)
        return (void)(loss.emitError("parameter @")
                      << name.getValue() << " is read by " << list.size()
                      << " pipeline stages; at most two (a tied embedding "
                         "of the first and last) may share one"),
               signalPassFailure();
    FailureOr<SmallVector<int64_t>> meshShape = stageMeshShape(module);
    if (failed(meshShape))
      return signalPassFailure();
    // The step's batch is micro-batches times the model's.
    if (auto task = module->getAttrOfType<DictionaryAttr>("loom.task"))
      if (auto batch = task.getAs<IntegerAttr>("batch")) {
        NamedAttrList fields(task);
        fields.set("batch", IntegerAttr::get(batch.getType(),
                                             batch.getInt() * microBatches));
        module->setAttr("loom.task", fields.getDictionary(module.getContext()));
      }
    for (int64_t s = 0; s < stages; ++s)
      if (failed(
              buildStage(module, loss, bounds, edges, s, *meshShape, readers)))
        return signalPassFailure();
    // The stages hold everything now.
    for (Operation &op : llvm::make_early_inc_range(module.getOps()))
      if (!isa<ModuleOp>(op))
        op.erase();
  }

  /// [dp, stages] or, after --loom-tensor-parallel, [dp, stages, tp].
  FailureOr<SmallVector<int64_t>> stageMeshShape(ModuleOp module) {
    SmallVector<int64_t> shape{dp, stages};
    if (auto mesh = module.lookupSymbol<comm::MeshOp>(meshName)) {
      auto axes = mesh.getAxes();
      if (axes.size() != 2 || cast<StringAttr>(axes[0]).getValue() != "dp" ||
          cast<StringAttr>(axes[1]).getValue() != "tp" ||
          mesh.getShape()[0] != dp)
        return mesh.emitError("pipeline stages compose with a mesh [dp, tp] "
                              "of --loom-tensor-parallel (dp = ")
               << int64_t(dp) << ") only";
      shape.push_back(mesh.getShape()[1]);
    }
    return shape;
  }

  LogicalResult
  buildStage(ModuleOp module, func::FuncOp loss, const Boundaries &bounds,
             ArrayRef<int64_t> edges, int64_t s, ArrayRef<int64_t> meshShape,
             const llvm::DenseMap<StringAttr, SmallVector<int64_t>> &readers) {
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    Location loc = loss.getLoc();
    auto stage = ModuleOp::create(b, loc, stageModuleName(s));
    for (NamedAttribute attr : module->getDiscardableAttrs())
      stage->setAttr(attr.getName(), attr.getValue());
    setPipelineStage(stage, {s, stages, microBatches});

    b.setInsertionPointToStart(stage.getBody());
    SmallVector<Attribute> axes{b.getStringAttr("dp"),
                                b.getStringAttr(kPipelineAxis)};
    if (meshShape.size() == 3)
      axes.push_back(b.getStringAttr("tp"));
    comm::MeshOp::create(b, loc, meshName, meshShape, b.getArrayAttr(axes));

    // The stage's @loss: a copy, its ops outside [lo, hi) removed.
    auto fn = cast<func::FuncOp>(b.clone(*loss));
    Block &body = fn.front();
    IRMapping map;
    for (auto [from, to] :
         llvm::zip(loss.front().getOperations(), body.getOperations()))
      for (auto [r, c] : llvm::zip(from.getResults(), to.getResults()))
        map.map(r, c);
    int64_t lo = edges[s], hi = edges[s + 1];
    llvm::DenseSet<Operation *> keep;
    for (int64_t i = lo; i < hi; ++i)
      keep.insert(map.lookup(bounds.ops[i]->getResult(0)).getDefiningOp());
    ArrayAttr axis = b.getStrArrayAttr({kPipelineAxis});
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    if (s > 0) {
      Value in = map.lookup(bounds.single.lookup(lo));
      b.setInsertionPointToStart(&body);
      Value received =
          comm::RecvOp::create(b, loc, in.getType(), meshName, axis, -1);
      in.replaceUsesWithIf(received, [&](OpOperand &use) {
        return keep.contains(use.getOwner()) || use.getOwner() == ret;
      });
    }
    if (s < stages - 1) {
      Value out = map.lookup(bounds.single.lookup(hi));
      b.setInsertionPoint(ret);
      comm::SendOp::create(b, loc, out, meshName, axis, 1);
      LoomBuilder lb{b, loc};
      auto lossType = cast<RankedTensorType>(ret.getOperand(0).getType());
      ret->setOperand(0, lb.scalar(lossType.getElementType(), 0.0));
    }
    // Everything else goes, last first; then the reads no stage op needs.
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      if (keep.contains(op) || isa<comm::SendOp, comm::RecvOp>(op))
        continue;
      if (!isRereadable(op) && !op->use_empty())
        return op->emitError("internal error: a pipeline stage still uses "
                             "an op of another stage");
      if (op->use_empty())
        op->erase();
    }
    // The parameters this stage reads.
    llvm::SetVector<StringAttr> read;
    fn.walk([&](GetParamOp get) { read.insert(get.getParamAttr().getAttr()); });
    b.setInsertionPoint(fn);
    for (auto param : module.getOps<ParamOp>())
      if (read.contains(param.getSymNameAttr()))
        b.clone(*param)->setAttr(
            kPipelineStagesAttr,
            b.getDenseI64ArrayAttr(readers.lookup(param.getSymNameAttr())));
    return success();
  }
};

} // namespace
} // namespace mlir::loom
