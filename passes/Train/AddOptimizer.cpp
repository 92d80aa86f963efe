//===- AddOptimizer.cpp - Builds @train_step ------------------------------===//
#include "passes/Train/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"
#include "passes/Train/LossFunction.h"

#define DEBUG_TYPE "loom-add-optimizer"

namespace mlir::loom {
#define GEN_PASS_DEF_ADDOPTIMIZERPASS
#include "passes/Train/Passes.h.inc"

namespace {

/// The stage `module` is of a pipelined model (--loom-pipeline-split), if
/// it is one.
std::optional<int64_t> pipelineStage(ModuleOp module) {
  auto dict = module->getAttrOfType<DictionaryAttr>(kPipelineStageAttr);
  auto stage = dict ? dict.getAs<IntegerAttr>("stage") : IntegerAttr();
  return stage ? std::optional<int64_t>(stage.getInt()) : std::nullopt;
}

/// Whether `param`'s gradient counts towards the global norm here: a
/// parameter two pipeline stages hold (a tied embedding) counts on the
/// first.
bool countedHere(ModuleOp module, ParamOp param) {
  std::optional<int64_t> stage = pipelineStage(module);
  auto held = param->getAttrOfType<DenseI64ArrayAttr>(kPipelineStagesAttr);
  return !stage || !held || held.empty() || held[0] == *stage;
}

/// A pipeline stage's sum of squares, summed over the stages.
/// Every stage takes part, with 0 if it counts no gradient.
Value sumOverStages(ModuleOp module, OpBuilder &b, Location loc, Value sq,
                    Type et) {
  if (!pipelineStage(module))
    return sq;
  if (!sq)
    sq = LoomBuilder{b, loc}.scalar(et, 0.0);
  auto mesh = *module.getOps<comm::MeshOp>().begin();
  return comm::AllReduceOp::create(b, loc, sq.getType(), sq, mesh.getSymName(),
                                   b.getStrArrayAttr({kPipelineAxis}),
                                   comm::ReduceKind::sum);
}

struct AddOptimizerPass : impl::AddOptimizerPassBase<AddOptimizerPass> {
  // The options, one per line of OptimizerOptions.def.
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Train/OptimizerOptions.def"

  AddOptimizerPass() = default;
  AddOptimizerPass(const AddOptimizerPass &other) : Base(other) {}
  explicit AddOptimizerPass(const OptimizerOptions &options) {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) NAME = options.NAME;
#include "passes/Train/OptimizerOptions.def"
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (optimizer != "adamw" && optimizer != "sgd") {
      module.emitError("unknown optimizer '")
          << optimizer << "' (expected adamw or sgd)";
      return signalPassFailure();
    }
    auto grad = module.lookupSymbol<func::FuncOp>("loss_and_grad");
    if (!grad) {
      module.emitError("no @loss_and_grad: run --loom-autodiff first");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("the module already has a @train_step function");
      return signalPassFailure();
    }
    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    if (params.empty()) {
      module.emitError("the model has no loom.param to optimize");
      return signalPassFailure();
    }
    if (warmupSteps < 0 || decaySteps < 0) {
      module.emitError("warmup-steps and decay-steps must be non-negative");
      return signalPassFailure();
    }
    // @loss_and_grad returns the loss, then one gradient per parameter in
    // declaration order (as --loom-autodiff builds it): check before
    // building anything.
    auto results = grad.getResultTypes();
    auto lossTensor = results.empty() ? RankedTensorType()
                                      : dyn_cast<RankedTensorType>(results[0]);
    if (!lossTensor || lossTensor.getRank() != 0 ||
        results.size() != params.size() + 1) {
      grad.emitError("@loss_and_grad must return a scalar loss tensor and one "
                     "gradient per loom.param (")
          << params.size() << "), as --loom-autodiff builds it";
      return signalPassFailure();
    }
    for (auto [param, t] : llvm::zip(params, results.drop_front())) {
      if (t != param.getType()) {
        param.emitError("gradient type ")
            << t << " does not match the parameter type " << param.getType();
        return signalPassFailure();
      }
      if (param.getTensorType().getElementType() !=
          lossTensor.getElementType()) {
        param.emitError("parameter element type differs from the loss's: "
                        "mixed precision is not supported yet");
        return signalPassFailure();
      }
    }

    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(grad);
    Location loc = grad.getLoc();
    auto lossType = cast<RankedTensorType>(grad.getResultTypes()[0]);
    func::FuncOp fn = createTrainStep(b, grad, lossType);

    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    LoomBuilder lb{b, loc};
    Value step = body->getArgument(0);
    auto call =
        func::CallOp::create(b, loc, grad, body->getArguments().drop_front());
    Value loss = call.getResult(0);
    SmallVector<Value> grads(call.getResults().drop_front());

    // Global L2 norm over every gradient, as torch.nn.utils.clip_grad_norm_.
    // A tensor-parallel rank holds its part of each split gradient: their
    // squares are summed over the ranks of the split.
    Type et = lossType.getElementType();
    Value sq, splitSq;
    TensorSplitAttr split;
    for (auto [param, g] : llvm::zip(params, grads)) {
      auto t = cast<RankedTensorType>(g.getType());
      SmallVector<int64_t> all(t.getRank());
      std::iota(all.begin(), all.end(), 0);
      Value s = lb.sum(lb.mul(g, g), all, /*keepdim=*/false);
      if (!countedHere(module, param))
        continue;
      auto own = param->getAttrOfType<TensorSplitAttr>(kTensorSplitAttr);
      Value &total = own ? splitSq : sq;
      total = total ? lb.add(total, s) : s;
      split = own ? own : split;
    }
    if (splitSq) {
      splitSq = comm::AllReduceOp::create(
          b, loc, splitSq.getType(), splitSq, split.getMesh().getValue(),
          b.getStrArrayAttr({split.getAxis().getValue()}),
          comm::ReduceKind::sum);
      sq = sq ? lb.add(sq, splitSq) : splitSq;
    }
    sq = sumOverStages(module, b, loc, sq, et);
    Value norm = SqrtOp::create(b, loc, sq);
    if (clipNorm > 0) {
      Value coef =
          lb.div(lb.scalar(et, clipNorm), lb.add(norm, lb.scalar(et, 1e-6)));
      coef = MinimumOp::create(b, loc, coef, lb.scalar(et, 1.0));
      for (Value &g : grads)
        g = lb.mul(g, coef);
    }

    Value lr = LrScheduleOp::create(
        b, loc, lossType, step, b.getF64FloatAttr(lr_()),
        b.getI64IntegerAttr(warmupSteps), b.getI64IntegerAttr(decaySteps),
        b.getF64FloatAttr(minLr));
    for (auto [param, g] : llvm::zip(params, grads)) {
      double wd = param.getNoWeightDecay() ? 0.0 : double(weightDecay);
      auto name = FlatSymbolRefAttr::get(param.getSymNameAttr());
      Value pg = g;
      if (optimizer == "adamw")
        AdamWOp::create(b, loc, /*new_slice=*/Type(), name, /*slice=*/Value(),
                        pg, lr, step, b.getF64FloatAttr(beta1),
                        b.getF64FloatAttr(beta2), b.getF64FloatAttr(eps),
                        b.getF64FloatAttr(wd));
      else
        SGDOp::create(b, loc, /*new_slice=*/Type(), name, /*slice=*/Value(), pg,
                      lr, step, b.getF64FloatAttr(momentum),
                      b.getF64FloatAttr(wd));
    }
    func::ReturnOp::create(b, loc, ValueRange{loss, lr, norm});

    // What the step was built with, for the artifact's manifest: a step
    // compiled later from this IR must not be described by flags it ignored.
    module->setAttr(
        kOptimizerAttr,
        b.getDictionaryAttr({
            b.getNamedAttr("kind", b.getStringAttr(optimizer)),
            b.getNamedAttr("lr", b.getF64FloatAttr(lr_())),
            b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)),
            b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)),
            b.getNamedAttr("eps", b.getF64FloatAttr(eps)),
            b.getNamedAttr("weight_decay", b.getF64FloatAttr(weightDecay)),
            b.getNamedAttr("momentum", b.getF64FloatAttr(momentum)),
            b.getNamedAttr("warmup_steps", b.getI64IntegerAttr(warmupSteps)),
            b.getNamedAttr("decay_steps", b.getI64IntegerAttr(decaySteps)),
            b.getNamedAttr("min_lr", b.getF64FloatAttr(minLr)),
            b.getNamedAttr("clip_norm", b.getF64FloatAttr(clipNorm)),
        }));
  }

  double lr_() { return lr; }
};

} // namespace

std::unique_ptr<Pass> createAddOptimizerPass(const OptimizerOptions &options) {
  return std::make_unique<AddOptimizerPass>(options);
}

} // namespace mlir::loom
