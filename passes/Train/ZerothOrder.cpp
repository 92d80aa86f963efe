//===- ZerothOrder.cpp - A training step without a backward pass ----------===//
//
// --loom-zo builds MeZO's step (Malladi et al., 2023; docs/zo.md) from
// @loss: the loss at theta + eps z and at theta - eps z, the projected
// gradient g = (l+ - l-) / (2 eps), and theta <- (1 - lr wd) theta - lr g z,
// where z is regenerated from a counter by loom.perturb each time it is
// needed and never stored.
//
// Unlike MeZO's reference code, which moves the parameters in place
// (+eps, -2 eps, +eps, update), each forward pass reads its own perturbed
// copy of a parameter, made just before the parameter's first use and freed
// after its last: the parameters are written once, by the update, so no
// rounding of the three moves accumulates in them, and the copies alive at
// once are those of the layers being computed.
//
//===----------------------------------------------------------------------===//
#include "passes/Train/Passes.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomBuilder.h"
#include "passes/Train/LossFunction.h"
#include "passes/Train/ZOOffload.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

#define DEBUG_TYPE "loom-zo"

namespace mlir::loom {
#define GEN_PASS_DEF_ZEROTHORDERPASS
#include "passes/Train/Passes.h.inc"

namespace {

/// The mesh and axis of the data-parallel ranks, as --loom-data-parallel
/// names them.
constexpr StringLiteral kMesh = "world", kAxis = "dp";
/// The axis of a perturbation pair: rank 0 of a pair moves by +eps, rank 1
/// by -eps; the runtime gives both the same batches
/// (MeshSpec::dataPosition).
constexpr StringLiteral kPairAxis = "pert";

struct ZerothOrderPass : impl::ZerothOrderPassBase<ZerothOrderPass> {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Train/ZOOptions.def"

  ZerothOrderPass() = default;
  ZerothOrderPass(const ZerothOrderPass &other) : Base(other) {}
  explicit ZerothOrderPass(const ZerothOrderPassOptions &options)
      : Base(options) {}
  ZerothOrderPass(const ZOOptions &options, int64_t dataParallelRanks) {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) NAME = options.NAME;
#include "passes/Train/ZOOptions.def"
    ranks = dataParallelRanks;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkOptions(module)))
      return signalPassFailure();
    FailureOr<func::FuncOp> loss = lookupLossFunction(module, "loss");
    if (failed(loss))
      return signalPassFailure();
    for (StringRef name : {"loss_and_grad", "train_step"})
      if (module.lookupSymbol(name)) {
        module.emitError("the module already has a @")
            << name << " function: --loom-zo builds the step from @loss alone";
        return signalPassFailure();
      }
    SmallVector<ParamOp> params(module.getOps<ParamOp>());
    if (params.empty()) {
      module.emitError("the model has no loom.param to train");
      return signalPassFailure();
    }
    for (ParamOp p : params)
      if (p.getTensorType().getElementType() !=
          cast<RankedTensorType>((*loss).getResultTypes()[0])
              .getElementType()) {
        p.emitError("parameter element type differs from the loss's: mixed "
                    "precision is not supported");
        return signalPassFailure();
      }
    markLossEntry(*loss);
    buildStep(module, *loss, params);
    recordOptions(module);
  }

  LogicalResult checkOptions(ModuleOp module) {
    if (!(eps > 0) || !std::isfinite(eps))
      return module.emitError("eps must be positive, got ") << double(eps);
    if (!(lr > 0) || !std::isfinite(lr))
      return module.emitError("lr must be positive, got ") << double(lr);
    if (!(weightDecay >= 0) || !std::isfinite(weightDecay))
      return module.emitError("weight-decay must be non-negative, got ")
             << double(weightDecay);
    if (ranks < 1)
      return module.emitError("ranks must be positive, got ") << int64_t(ranks);
    if (perturbationRanks != 1 && perturbationRanks != 2)
      return module.emitError("perturbation-ranks must be 1 or 2, got ")
             << int64_t(perturbationRanks);
    if (directions != "shared" && directions != "rank")
      return module.emitError("directions must be shared or rank, got ")
             << directions;
    if (directions == "rank" && (ranks < 2 || perturbationRanks != 1))
      return module.emitError("directions=rank needs data-parallel ranks "
                              "(ranks > 1) and perturbation-ranks=1");
    if (prefetchBytes < 0)
      return module.emitError("prefetch-bytes must be non-negative, got ")
             << int64_t(prefetchBytes);
    if (needsMesh() && module.lookupSymbol(kMesh))
      return module.emitError("the module already has a symbol @")
             << kMesh << " (the data-parallel mesh --loom-zo makes)";
    return success();
  }

  /// @train_step(%step, inputs...) -> (loss, lr, grad_norm), where loss is
  /// the mean of the two perturbed losses and grad_norm |g|.
  void buildStep(ModuleOp module, func::FuncOp loss,
                 MutableArrayRef<ParamOp> params) {
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    b.setInsertionPointAfter(loss);
    Location loc = loss.getLoc();
    auto lossType = cast<RankedTensorType>(loss.getResultTypes()[0]);
    Type et = lossType.getElementType();
    func::FuncOp fn = createTrainStep(b, loss, lossType);

    llvm::DenseMap<StringAttr, int64_t> stream;
    for (auto [i, p] : llvm::enumerate(params))
      stream[p.getSymNameAttr()] = i;
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    LoomBuilder lb{b, loc};
    Value step = body->getArgument(0);
    Value one = lb.scalar(et, 1.0);
    comm::MeshOp mesh = needsMesh() ? createMesh(module) : comm::MeshOp();
    // directions=rank: the forward passes perturb along this rank's own
    // direction.
    Value ownDirection =
        directions == "rank" ? rankIndex(b, loc, mesh) : Value();
    auto perturb = [&](Value x, StringAttr param, Value a, Value coef,
                       Value offset, int64_t direction = 0) {
      return PerturbOp::create(b, loc, x, step, a, coef, seed,
                               stream.lookup(param), direction, offset)
          .getResult();
    };
    std::optional<ZOOffloadContext> offloaded;
    if (offload) {
      offloaded.emplace(ZOOffloadContext{module, loss, params, stream, eps, lr,
                                         weightDecay, seed, prefetchBytes});
      if (directions == "rank") {
        offloaded->directions = ranks;
        offloaded->ownDirection = ownDirection;
      }
    }
    if (directions == "rank")
      return buildMultiDirection(b, loc, loss, body, params, mesh, ownDirection,
                                 perturb, offloaded ? &*offloaded : nullptr);
    Value d, sum; // l+ - l- and l+ + l-, summed over the data-parallel ranks
    if (offload && perturbationRanks == 2) {
      // As below: one pass on each rank of a pair, offloaded.
      Value sign = pairSign(b, loc, mesh, et);
      Value l = buildOffloadedForwards(b, *offloaded, body,
                                       lb.mul(sign, lb.scalar(et, eps)))[0];
      d = lb.mul(sign, l);
      sum = l;
      sumOverMesh(b, loc, mesh, d, sum);
    } else if (offload) {
      SmallVector<Value> l = buildOffloadedForwards(
          b, *offloaded, body, {lb.scalar(et, eps), lb.scalar(et, -eps)});
      d = lb.sub(l[0], l[1]);
      sum = lb.add(l[0], l[1]);
      if (ranks > 1)
        sumOverMesh(b, loc, mesh, d, sum);
    } else if (perturbationRanks == 2) {
      // One forward pass per rank, at sign * eps with sign = +1 on the
      // pair's rank 0 and -1 on its rank 1: the sums of sign * l and of l
      // over a pair are l+ - l- and l+ + l-, rounded as one rank's.
      Value sign = pairSign(b, loc, mesh, et);
      Value l = cloneLoss(b, loss, body, [&](Value x, StringAttr p) {
        return perturb(x, p, one, lb.mul(sign, lb.scalar(et, eps)), Value());
      });
      d = lb.mul(sign, l);
      sum = l;
      sumOverMesh(b, loc, mesh, d, sum);
    } else {
      Value lPlus = cloneLoss(b, loss, body, [&](Value x, StringAttr p) {
        return perturb(x, p, one, lb.scalar(et, eps), Value());
      });
      Value lMinus = cloneLoss(b, loss, body, [&](Value x, StringAttr p) {
        return perturb(x, p, one, lb.scalar(et, -eps), Value());
      });
      d = lb.sub(lPlus, lMinus);
      sum = lb.add(lPlus, lMinus);
      // Every rank's projected gradient, of its own micro-batch, summed:
      // the only bytes a step sends, whatever the model's size.
      if (ranks > 1)
        sumOverMesh(b, loc, mesh, d, sum);
    }
    // g = mean over the data-parallel ranks of (l+ - l-) / (2 eps).
    Value g = lb.scale(d, 1.0 / (2.0 * eps * double(ranks)));
    Value mean = lb.scale(sum, 0.5 / double(ranks));
    if (offload) {
      // The next step (or @zo_flush) applies the update as it uploads.
      Value norm = SqrtOp::create(b, loc, lb.mul(g, g));
      deferUpdate(b, loc, ValueRange{g});
      func::ReturnOp::create(b, loc, ValueRange{mean, lb.scalar(et, lr), norm});
      buildFlushEntry(b, *offloaded);
      return offloadLossEntry(b, *offloaded);
    }
    // theta <- (1 - lr wd) theta - lr g z, along the same z.
    Value coef = lb.scale(g, -lr);
    for (ParamOp p : params) {
      double wd = p.getNoWeightDecay() ? 0.0 : double(weightDecay);
      Value x = GetParamOp::create(b, loc, p.getType(),
                                   FlatSymbolRefAttr::get(p.getSymNameAttr()));
      Value updated = perturb(x, p.getSymNameAttr(),
                              lb.scalar(et, 1.0 - lr * wd), coef, Value());
      SetParamOp::create(b, loc, FlatSymbolRefAttr::get(p.getSymNameAttr()),
                         updated);
    }
    Value norm = SqrtOp::create(b, loc, lb.mul(g, g));
    func::ReturnOp::create(b, loc, ValueRange{mean, lb.scalar(et, lr), norm});
  }

  using PerturbFn =
      function_ref<Value(Value, StringAttr, Value, Value, Value, int64_t)>;

  /// The multi-direction variant (directions=rank): rank r's forward passes
  /// move along direction r; one all-gather brings every rank's
  /// (l+ - l-, l+ + l-), and every rank applies the N updates
  ///   theta <- (1 - lr wd) theta - lr / N sum_r g_r z_r
  /// in rank order, so the replicas stay bit-identical. The loss is the
  /// mean over ranks; grad_norm is |(g_0, .., g_N-1)| / N.
  void buildMultiDirection(OpBuilder &b, Location loc, func::FuncOp loss,
                           Block *body, MutableArrayRef<ParamOp> params,
                           comm::MeshOp mesh, Value own, PerturbFn perturb,
                           const ZOOffloadContext *offloaded) {
    auto lossType = cast<RankedTensorType>(loss.getResultTypes()[0]);
    Type et = lossType.getElementType();
    LoomBuilder lb{b, loc};
    Value one = lb.scalar(et, 1.0);
    Value lPlus, lMinus;
    if (offloaded) {
      SmallVector<Value> l = buildOffloadedForwards(
          b, *offloaded, body, {lb.scalar(et, eps), lb.scalar(et, -eps)});
      lPlus = l[0];
      lMinus = l[1];
    } else {
      lPlus = cloneLoss(b, loss, body, [&](Value x, StringAttr p) {
        return perturb(x, p, one, lb.scalar(et, eps), own, 0);
      });
      lMinus = cloneLoss(b, loss, body, [&](Value x, StringAttr p) {
        return perturb(x, p, one, lb.scalar(et, -eps), own, 0);
      });
    }
    auto pairType = RankedTensorType::get({2}, et);
    Value pair = tensor::FromElementsOp::create(
        b, loc, pairType,
        ValueRange{scalarOf(b, loc, lb.sub(lPlus, lMinus)),
                   scalarOf(b, loc, lb.add(lPlus, lMinus))});
    Value all = comm::AllGatherOp::create(
        b, loc, RankedTensorType::get({2 * ranks}, et), pair, mesh.getSymName(),
        b.getStrArrayAttr({kAxis}), /*dim=*/0);
    auto element = [&](int64_t i) -> Value {
      Value at = arith::ConstantIndexOp::create(b, loc, i);
      Value v = tensor::ExtractOp::create(b, loc, all, ValueRange{at});
      return tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, et), ValueRange{v});
    };
    SmallVector<Value> gs, coefs; // g_r, -lr g_r / N
    Value sum = element(1), squares;
    for (int64_t r = 0; r < ranks; ++r) {
      Value g = lb.scale(element(2 * r), 1.0 / (2.0 * eps));
      gs.push_back(g);
      coefs.push_back(lb.scale(g, -lr / double(ranks)));
      squares = r ? lb.add(squares, lb.mul(g, g)) : lb.mul(g, g);
      if (r)
        sum = lb.add(sum, element(2 * r + 1));
    }
    Value mean = lb.scale(sum, 0.5 / double(ranks));
    if (offloaded) {
      Value norm =
          lb.scale(SqrtOp::create(b, loc, squares).getResult(), 1.0 / ranks);
      deferUpdate(b, loc, gs);
      func::ReturnOp::create(b, loc, ValueRange{mean, lb.scalar(et, lr), norm});
      buildFlushEntry(b, *offloaded);
      return offloadLossEntry(b, *offloaded);
    }
    for (ParamOp p : params) {
      double wd = p.getNoWeightDecay() ? 0.0 : double(weightDecay);
      Value x = GetParamOp::create(b, loc, p.getType(),
                                   FlatSymbolRefAttr::get(p.getSymNameAttr()));
      for (int64_t r = 0; r < ranks; ++r)
        x = perturb(x, p.getSymNameAttr(),
                    r ? one : lb.scalar(et, 1.0 - lr * wd), coefs[r], Value(),
                    r);
      SetParamOp::create(b, loc, FlatSymbolRefAttr::get(p.getSymNameAttr()), x);
    }
    Value norm =
        lb.scale(SqrtOp::create(b, loc, squares).getResult(), 1.0 / ranks);
    func::ReturnOp::create(b, loc, ValueRange{mean, lb.scalar(et, lr), norm});
  }

  /// This rank's index along "dp", as a tensor<i64>.
  static Value rankIndex(OpBuilder &b, Location loc, comm::MeshOp mesh) {
    Value r = comm::GroupRankOp::create(
        b, loc, b.getIndexType(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
        b.getStrArrayAttr({kAxis}));
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), r);
    return tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI64Type()), ValueRange{i});
  }

  /// Sums the scalars `x` and `y` over every rank of `mesh` in one
  /// collective of two elements (the CPU runtime's collectives span whole
  /// meshes): on a slow link a step pays one latency, whatever the model's
  /// size.
  void sumOverMesh(OpBuilder &b, Location loc, comm::MeshOp mesh, Value &x,
                   Value &y) {
    SmallVector<StringRef> axes{kAxis};
    if (perturbationRanks == 2)
      axes.push_back(kPairAxis);
    Type et = cast<RankedTensorType>(x.getType()).getElementType();
    auto pairType = RankedTensorType::get({2}, et);
    Value both = tensor::FromElementsOp::create(
        b, loc, pairType, ValueRange{scalarOf(b, loc, x), scalarOf(b, loc, y)});
    Value summed = comm::AllReduceOp::create(
        b, loc, pairType, both, mesh.getSymName(), b.getStrArrayAttr(axes),
        comm::ReduceKind::sum);
    auto element = [&](int64_t i) -> Value {
      Value at = arith::ConstantIndexOp::create(b, loc, i);
      Value v = tensor::ExtractOp::create(b, loc, summed, ValueRange{at});
      return tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, et), ValueRange{v});
    };
    x = element(0);
    y = element(1);
  }

  /// Appends @loss's body to `body` with every parameter it reads replaced
  /// by `perturbed(value, param)`, built just before its first use; returns
  /// the loss.
  Value cloneLoss(OpBuilder &b, func::FuncOp loss, Block *body,
                  function_ref<Value(Value, StringAttr)> perturbed) {
    Block &src = loss.getBody().front();
    IRMapping map;
    for (auto [from, to] :
         llvm::zip(src.getArguments(), body->getArguments().drop_front()))
      map.map(from, to);
    for (Operation &op : src.without_terminator()) {
      if (isa<GetParamOp>(op))
        continue;
      op.walk([&](Operation *inner) {
        for (Value v : inner->getOperands()) {
          auto get = v.getDefiningOp<GetParamOp>();
          if (!get || map.contains(v))
            continue;
          Value x = b.clone(*get)->getResult(0);
          map.map(v, perturbed(x, get.getParamAttr().getAttr()));
        }
      });
      b.clone(op, map);
    }
    return map.lookup(src.getTerminator()->getOperand(0));
  }

  bool needsMesh() { return ranks > 1 || perturbationRanks > 1; }

  static Value scalarOf(OpBuilder &b, Location loc, Value t) {
    return tensor::ExtractOp::create(b, loc, t, ValueRange{});
  }

  /// The data-parallel mesh, [ranks] along "dp", or with perturbation
  /// pairs [ranks, 2] along "dp" and "pert".
  comm::MeshOp createMesh(ModuleOp module) {
    OpBuilder b(module.getBodyRegion());
    if (perturbationRanks == 1)
      return comm::MeshOp::create(b, module.getLoc(), kMesh,
                                  ArrayRef<int64_t>{ranks},
                                  b.getStrArrayAttr({kAxis}));
    return comm::MeshOp::create(b, module.getLoc(), kMesh,
                                ArrayRef<int64_t>{ranks, perturbationRanks},
                                b.getStrArrayAttr({kAxis, kPairAxis}));
  }

  /// 1 - 2 * (this rank's index in its pair), as a scalar tensor.
  static Value pairSign(OpBuilder &b, Location loc, comm::MeshOp mesh,
                        Type et) {
    // The rank along the whole mesh (the CPU runtime's groups are whole
    // meshes); "pert" is its innermost axis, of size 2.
    Value r = comm::GroupRankOp::create(
        b, loc, b.getIndexType(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
        b.getStrArrayAttr({kAxis, kPairAxis}));
    Value inPair = arith::RemUIOp::create(
        b, loc, r, arith::ConstantIndexOp::create(b, loc, 2));
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), inPair);
    Value f = arith::SIToFPOp::create(b, loc, et, i);
    auto c = [&](double v) {
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
    };
    Value sign = arith::SubFOp::create(
        b, loc, c(1.0), arith::MulFOp::create(b, loc, c(2.0), f));
    return tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, et),
                                          ValueRange{sign});
  }

  /// What the step was built with, for the artifact's manifest.
  void recordOptions(ModuleOp module) {
    Builder b(module.getContext());
    module->setAttr(
        kOptimizerAttr,
        b.getDictionaryAttr({
            b.getNamedAttr("kind", b.getStringAttr("zo")),
            b.getNamedAttr("lr", b.getF64FloatAttr(lr)),
            b.getNamedAttr("eps", b.getF64FloatAttr(eps)),
            b.getNamedAttr("weight_decay", b.getF64FloatAttr(weightDecay)),
            b.getNamedAttr("seed", b.getI64IntegerAttr(seed)),
            b.getNamedAttr("perturbation_ranks",
                           b.getI64IntegerAttr(perturbationRanks)),
            b.getNamedAttr("directions", b.getStringAttr(directions)),
            b.getNamedAttr("offload", b.getBoolAttr(offload)),
        }));
  }
};

} // namespace

std::unique_ptr<Pass> createZerothOrderPass(const ZOOptions &options,
                                            int64_t ranks) {
  return std::make_unique<ZerothOrderPass>(options, ranks);
}

} // namespace mlir::loom
