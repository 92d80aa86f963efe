//===- PipelineSchedule.cpp - One stage's micro-batches in 1F1B order -----===//
//
// After --loom-autodiff a stage's @loss_and_grad is one micro-batch's
// forward ops followed by its backward ops (autodiff appends the backward
// pass after a copy of @loss). This pass copies both halves once per
// micro-batch and lays the copies out in the 1F1B order, so the schedule is
// straight-line code fixed at compile time: every rank of a stage runs the
// same table, and neighbouring stages' transfers pair up in order.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"
#include "passes/Distribute/Pipeline.h"

#include "dialects/Loom/IR/LoomBuilder.h"
#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "loom-pipeline-schedule"

namespace mlir::loom {
#define GEN_PASS_DEF_PIPELINESCHEDULEPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

/// One slot of a stage's schedule: micro-batch `micro`'s forward or
/// backward half.
struct Slot {
  bool backward;
  int64_t micro;
};

/// PipeDream-Flush's one-forward-one-backward order for `stage` of
/// `stages` with `micro` micro-batches: warm-up forwards, alternation,
/// cool-down backwards. Backwards run in micro-batch order.
SmallVector<Slot> oneForwardOneBackward(int64_t stage, int64_t stages,
                                        int64_t micro) {
  int64_t warm = std::min(stages - 1 - stage, micro);
  SmallVector<Slot> order;
  for (int64_t m = 0; m < warm; ++m)
    order.push_back({false, m});
  for (int64_t m = 0; m + warm < micro; ++m) {
    order.push_back({false, m + warm});
    order.push_back({true, m});
  }
  for (int64_t m = micro - warm; m < micro; ++m)
    order.push_back({true, m});
  return order;
}

struct PipelineSchedulePass
    : impl::PipelineSchedulePassBase<PipelineSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<ModuleOp, PipelineStage>> stages;
    getOperation()->walk([&](ModuleOp m) {
      if (std::optional<PipelineStage> stage = getPipelineStage(m))
        stages.push_back({m, *stage});
    });
    for (auto &[module, stage] : stages)
      if (failed(scheduleStage(module, stage)))
        return signalPassFailure();
  }

  LogicalResult scheduleStage(ModuleOp module, const PipelineStage &stage) {
    auto loss = module.lookupSymbol<func::FuncOp>("loss");
    auto grad = module.lookupSymbol<func::FuncOp>("loss_and_grad");
    if (!loss || !grad)
      return module.emitError("a pipeline stage needs @loss and "
                              "@loss_and_grad (run --loom-autodiff first)");
    int64_t forward = loss.front().getOperations().size() - 1;
    SmallVector<Operation *> ops;
    for (Operation &op : grad.front().without_terminator())
      ops.push_back(&op);
    if (int64_t(ops.size()) < forward ||
        !llvm::all_of(llvm::zip(loss.front().without_terminator(), ops),
                      [](auto pair) {
                        return std::get<0>(pair).getName() ==
                               std::get<1>(pair)->getName();
                      }))
      return grad.emitError("@loss_and_grad does not start with @loss's ops "
                            "(--loom-pipeline-schedule must follow "
                            "--loom-autodiff directly)");
    ArrayRef<Operation *> fwd(ops.data(), forward);
    ArrayRef<Operation *> bwd(ops.data() + forward, ops.size() - forward);
    SmallVector<Slot> order =
        oneForwardOneBackward(stage.stage, stage.stages, stage.microBatches);
    if (failed(rebuild(module, grad, fwd, bwd, order, stage)))
      return failure();
    SmallVector<Operation *> lossOps;
    for (Operation &op : loss.front().without_terminator())
      lossOps.push_back(&op);
    SmallVector<Slot> forwards;
    for (int64_t m = 0; m < stage.microBatches; ++m)
      forwards.push_back({false, m});
    return rebuild(module, loss, lossOps, {}, forwards, stage);
  }

  /// Replaces `fn`'s body by its halves run per micro-batch in `order` on
  /// slices of inputs `micro_batches` times larger, the results summed and
  /// divided by the count.
  LogicalResult rebuild(ModuleOp module, func::FuncOp fn,
                        ArrayRef<Operation *> fwd, ArrayRef<Operation *> bwd,
                        ArrayRef<Slot> order, const PipelineStage &stage) {
    int64_t micro = stage.microBatches;
    Block &old = fn.front();
    Location loc = fn.getLoc();
    SmallVector<Type> inputs;
    for (BlockArgument arg : old.getArguments()) {
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || t.getRank() == 0 || ShapedType::isDynamic(t.getDimSize(0)))
        return fn.emitError("a pipelined model's inputs must be tensors "
                            "with a static batch dimension 0");
      SmallVector<int64_t> shape(t.getShape());
      shape[0] *= micro;
      inputs.push_back(t.clone(shape));
    }
    auto *body = new Block();
    fn.getBody().push_front(body);
    for (Type t : inputs)
      body->addArgument(t, loc);
    OpBuilder b = OpBuilder::atBlockBegin(body);
    LoomBuilder lb{b, loc};

    SmallVector<IRMapping> maps(micro);
    for (auto [i, arg] : llvm::enumerate(old.getArguments())) {
      auto t = cast<RankedTensorType>(arg.getType());
      for (int64_t m = 0; m < micro; ++m) {
        SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes,
            strides(t.getRank(), b.getIndexAttr(1));
        offsets[0] = b.getIndexAttr(m * t.getDimSize(0));
        for (int64_t d : t.getShape())
          sizes.push_back(b.getIndexAttr(d));
        maps[m].map(
            arg, tensor::ExtractSliceOp::create(b, loc, t, body->getArgument(i),
                                                offsets, sizes, strides));
      }
    }
    auto ret = cast<func::ReturnOp>(old.getTerminator());
    SmallVector<Value> totals(ret.getNumOperands());
    bool hasBackward = !bwd.empty();
    for (const Slot &slot : order) {
      for (Operation *op : slot.backward ? bwd : fwd)
        b.clone(*op, maps[slot.micro]);
      if (slot.backward == hasBackward)
        for (auto [total, v] : llvm::zip(totals, ret.getOperands())) {
          Value mine = maps[slot.micro].lookup(v);
          total = total ? lb.add(total, mine) : mine;
        }
    }
    if (micro > 1)
      for (Value &total : totals)
        total = lb.mul(
            total,
            lb.scalar(cast<RankedTensorType>(total.getType()).getElementType(),
                      1.0 / double(micro)));
    // Every stage reports the loss: the last one's, the others' zeros added.
    comm::MeshOp mesh = *module.getOps<comm::MeshOp>().begin();
    StringAttr meshName = mesh.getSymNameAttr();
    ArrayAttr axis = b.getStrArrayAttr({kPipelineAxis});
    totals[0] = comm::AllReduceOp::create(b, loc, totals[0].getType(),
                                          totals[0], meshName.getValue(), axis,
                                          comm::ReduceKind::sum);
    if (hasBackward &&
        failed(exchangeSharedGradients(module, fn, b, totals, stage, meshName)))
      return failure();
    func::ReturnOp::create(b, loc, totals);
    old.dropAllReferences();
    old.erase();
    fn.setType(FunctionType::get(fn.getContext(), inputs,
                                 fn.getFunctionType().getResults()));
    return success();
  }

  /// A parameter two stages read (a tied embedding) gets the sum of their
  /// gradients on both, added as one rank's backward pass adds them: the
  /// later stage's (used later in the forward pass) first.
  LogicalResult exchangeSharedGradients(ModuleOp module, func::FuncOp fn,
                                        OpBuilder &b,
                                        MutableArrayRef<Value> totals,
                                        const PipelineStage &stage,
                                        StringAttr meshName) {
    LoomBuilder lb{b, fn.getLoc()};
    ArrayAttr axis = b.getStrArrayAttr({kPipelineAxis});
    for (unsigned i = 1; i < totals.size(); ++i) {
      auto of = fn.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradOfAttr);
      auto param = of ? module.lookupSymbol<ParamOp>(of.getAttr()) : ParamOp();
      auto readers =
          param ? param->getAttrOfType<DenseI64ArrayAttr>(kPipelineStagesAttr)
                : DenseI64ArrayAttr();
      if (!readers || readers.size() < 2)
        continue;
      int64_t first = readers[0], last = readers[1];
      Location loc = fn.getLoc();
      // Marked as once per step (loomc --plan counts the others per
      // micro-batch).
      auto shared = [&](Operation *op) {
        op->setAttr(kPipelineSharedAttr, b.getUnitAttr());
        return op;
      };
      if (stage.stage == last) {
        shared(comm::SendOp::create(b, loc, totals[i], meshName.getValue(),
                                    axis, first - last));
        totals[i] = shared(comm::RecvOp::create(b, loc, totals[i].getType(),
                                                meshName.getValue(), axis,
                                                first - last))
                        ->getResult(0);
      } else {
        Value other = shared(comm::RecvOp::create(b, loc, totals[i].getType(),
                                                  meshName.getValue(), axis,
                                                  last - first))
                          ->getResult(0);
        totals[i] = lb.add(other, totals[i]);
        shared(comm::SendOp::create(b, loc, totals[i], meshName.getValue(),
                                    axis, last - first));
      }
    }
    return success();
  }
};

} // namespace
} // namespace mlir::loom
