//===- ShardState.cpp - ZeRO: optimizer state sharded over ranks ----------===//
//
// --loom-shard-state rewrites a data-parallel @train_step so that each rank
// keeps and updates 1/N of every parameter's optimizer state (ZeRO stage 1),
// at stage 2 receives only its slice of the averaged gradients, and at
// stage 3 stores only its slice of every parameter, gathered where read.
//
// A parameter of n elements is cut into N slices of s = ceil(n / N): its
// flattened values padded with zeros to N·s, rank r owning [r·s, r·s + s).
// Padding (rather than uneven slices) keeps every collective the same size
// on every rank, and the padded elements are zeros that every optimizer
// update keeps at zero, so any n on any N works; a zero-size parameter has
// no state to cut and stays as it was.
//
// The rewrite depends on the IR alone, so every rank issues the same
// collectives in the same order: one all_gather per parameter, in the
// order the optimizer updates them, and at stage 2 one reduce_scatter per
// gradient where the all_reduce was.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "loom-shard-state"

namespace mlir::loom {
#define GEN_PASS_DEF_SHARDSTATEPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

/// How one parameter's values are cut: n elements over N ranks, s each.
struct Cut {
  int64_t elements;
  int64_t ranks;
  int64_t shard() const { return (elements + ranks - 1) / ranks; }
  int64_t padded() const { return ranks * shard(); }
};

/// Builds one rank's view of the slices of a parameter-shaped value.
struct Slicer {
  OpBuilder &b;
  Location loc;
  FlatSymbolRefAttr mesh;
  ArrayAttr axes;
  int64_t ranks;
  Value rank; ///< this rank's index in the group (index)

  Cut cutOf(RankedTensorType type) const {
    return {type.getNumElements(), ranks};
  }

  RankedTensorType flat(Value v, int64_t n) const {
    return RankedTensorType::get(
        {n}, cast<RankedTensorType>(v.getType()).getElementType());
  }

  /// `v` flattened and padded with zeros to N·s elements.
  Value padded(Value v, Cut c) {
    LoomBuilder lb{b, loc};
    Value x = lb.reshape(v, {c.elements});
    if (c.padded() == c.elements)
      return x;
    Value zeros = lb.zerosLike(flat(v, c.padded() - c.elements));
    return ConcatOp::create(b, loc, flat(v, c.padded()), ValueRange{x, zeros},
                            b.getI64IntegerAttr(0));
  }

  /// This rank's slice [r·s, r·s + s) of `padded(v)`.
  Value mine(Value v, Cut c) {
    Value offset = arith::MulIOp::create(
        b, loc, rank, arith::ConstantIndexOp::create(b, loc, c.shard()));
    return tensor::ExtractSliceOp::create(
        b, loc, flat(v, c.shard()), padded(v, c), ValueRange{offset},
        ValueRange{}, ValueRange{}, ArrayRef<int64_t>{ShapedType::kDynamic},
        ArrayRef<int64_t>{c.shard()}, ArrayRef<int64_t>{1});
  }

  /// Every rank's slice gathered, unpadded and shaped as `type`.
  Value gathered(Value slice, Cut c, RankedTensorType type) {
    Value all = comm::AllGatherOp::create(b, loc, flat(slice, c.padded()),
                                          slice, mesh.getValue(), axes, 0);
    if (c.padded() != c.elements)
      all = tensor::ExtractSliceOp::create(
          b, loc, flat(slice, c.elements), all,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(c.elements)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return LoomBuilder{b, loc}.reshape(all, type.getShape());
  }

  /// This rank's slice of the mean over ranks of `v` (stage 2).
  Value scattered(Value v, Cut c) {
    return comm::ReduceScatterOp::create(b, loc, flat(v, c.shard()),
                                         padded(v, c), mesh.getValue(), axes,
                                         comm::ReduceKind::mean, 0);
  }
};

/// The earliest op in the block of `def` that uses its results (through
/// nested regions too); null when nothing does.
Operation *firstUser(Operation *def) {
  Operation *first = nullptr;
  Block *block = def->getBlock();
  for (Operation *user : def->getUsers()) {
    Operation *at = block->findAncestorOpInBlock(*user);
    if (at && (!first || at->isBeforeInBlock(first)))
      first = at;
  }
  return first;
}

/// The gradient an update of a whole parameter takes.
Value gradOf(OptimizerOpInterface opt) {
  if (auto adamw = dyn_cast<AdamWOp>(*opt))
    return adamw.getGrad();
  if (auto sgd = dyn_cast<SGDOp>(*opt))
    return sgd.getGrad();
  return {};
}

/// The slice form of an optimizer op: the same update of `slice` with
/// gradient slice `grad`, its state cut like the parameter.
FailureOr<Value> buildSliceUpdate(OpBuilder &b, OptimizerOpInterface opt,
                                  Value slice, Value grad) {
  Type type = slice.getType();
  if (auto adamw = dyn_cast<AdamWOp>(*opt))
    if (!adamw.getSlice())
      return AdamWOp::create(b, adamw.getLoc(), type, adamw.getParamAttr(),
                             slice, grad, adamw.getLr(), adamw.getStep(),
                             adamw.getBeta1Attr(), adamw.getBeta2Attr(),
                             adamw.getEpsAttr(), adamw.getWeightDecayAttr())
          .getNewSlice();
  if (auto sgd = dyn_cast<SGDOp>(*opt))
    if (!sgd.getSlice())
      return SGDOp::create(b, sgd.getLoc(), type, sgd.getParamAttr(), slice,
                           grad, sgd.getLr(), sgd.getStep(),
                           sgd.getMomentumAttr(), sgd.getWeightDecayAttr())
          .getNewSlice();
  return opt->emitError("--loom-shard-state cannot shard this update: it "
                        "knows loom.adamw and loom.sgd of a whole parameter");
}

/// Stage 2 and 3's copy of @loss_and_grad that returns gradient slices.
constexpr StringLiteral kShardsName = "loss_and_grad_shards";

struct ShardStatePass : impl::ShardStatePassBase<ShardStatePass> {
  using Base::Base;

  void runOnOperation() override;
  LogicalResult shardUpdates(func::FuncOp step, Slicer &slicer,
                             const DenseMap<Value, Value> &gradSlices,
                             SmallVectorImpl<Attribute> &sharded);
  FailureOr<DenseMap<Value, Value>>
  scatterGradients(func::FuncOp step, func::FuncOp grad, Slicer &slicer);
  func::FuncOp cloneScattering(func::FuncOp grad, Slicer &slicer,
                               SmallVectorImpl<bool> &scattered);
  LogicalResult useSlice(Value full, Value slice, Slicer &slicer,
                         DenseMap<Value, Value> &gradSlices);
  LogicalResult reduceNorm(func::FuncOp step, Slicer &slicer);
  LogicalResult shardParams(ModuleOp module, Slicer &slicer,
                            ArrayRef<Attribute> sharded);
  void regatherForBackward(Value full, Operation *lossOp, Slicer &slicer,
                           Cut cut, RankedTensorType type, GetParamOp shard);

  /// Ops of @train_step on full gradients, erased once nothing uses them.
  SmallVector<Operation *> deadAfterUpdates;
  /// Stage 3: a read of a parameter's slice, gathered for `firstUse`.
  struct ParamGather {
    GetParamOp read;
    Operation *firstUse;
  };
  SmallVector<ParamGather> gathers;
  void placeGathers(Slicer &slicer);
  int64_t gatheredBytes(const ParamGather &g) const;
  void fuseGathers(ArrayRef<ParamGather> unit, Operation *at, Slicer &slicer);
};

void ShardStatePass::runOnOperation() {
  // One instance runs on each stage module of a pipeline in turn.
  deadAfterUpdates.clear();
  gathers.clear();
  ModuleOp module = getOperation();
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto grad = module.lookupSymbol<func::FuncOp>("loss_and_grad");
  if (!step || !grad) {
    module.emitError("--loom-shard-state needs @loss_and_grad and "
                     "@train_step: run --loom-data-parallel and "
                     "--loom-add-optimizer first");
    return signalPassFailure();
  }
  if (stage < 1 || stage > 3) {
    module.emitError("--loom-shard-state: stage must be 1, 2 or 3, got ")
        << int64_t(stage);
    return signalPassFailure();
  }
  auto mesh = module.lookupSymbol<comm::MeshOp>(meshName);
  OpBuilder b(module.getContext());
  ArrayAttr axes = b.getStrArrayAttr({axis});
  if (!mesh || !llvm::is_contained(mesh.getAxes(), b.getStringAttr(axis))) {
    module.emitError("--loom-shard-state needs a comm.mesh @")
        << meshName << " with axis '" << axis
        << "': run --loom-data-parallel first";
    return signalPassFailure();
  }
  int64_t ranks = mesh.getGroupSize(axes);
  if (ranks < 2) {
    mesh.emitError("--loom-shard-state needs at least 2 ranks to shard "
                   "over, got ")
        << ranks;
    return signalPassFailure();
  }

  Block &body = step.getBody().front();
  b.setInsertionPointToStart(&body);
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  Value rank = comm::GroupRankOp::create(b, step.getLoc(), b.getIndexType(),
                                         meshRef, axes);
  Slicer slicer{b, step.getLoc(), meshRef, axes, ranks, rank};
  DenseMap<Value, Value> gradSlices;
  if (stage >= 2) {
    auto scattered = scatterGradients(step, grad, slicer);
    if (failed(scattered))
      return signalPassFailure();
    gradSlices = std::move(*scattered);
  }
  SmallVector<Attribute> sharded;
  if (failed(shardUpdates(step, slicer, gradSlices, sharded)))
    return signalPassFailure();
  // The full gradients' last users went with the updates.
  for (Operation *op : llvm::reverse(deadAfterUpdates)) {
    if (!op->use_empty()) {
      op->emitError("--loom-shard-state: a full gradient is still used here");
      return signalPassFailure();
    }
    op->erase();
  }
  if (stage == 3 && failed(shardParams(module, slicer, sharded)))
    return signalPassFailure();
  module->setAttr(kZeroAttr, ZeroAttr::get(module.getContext(), stage, meshRef,
                                           ranks, b.getArrayAttr(sharded)));
}

/// Stage 1 and 2: every update of a parameter becomes the update of this
/// rank's slice, whose result all ranks gather into the new parameter.
/// At stage 2 the gradient slices come from `gradSlices`.
LogicalResult
ShardStatePass::shardUpdates(func::FuncOp step, Slicer &slicer,
                             const DenseMap<Value, Value> &gradSlices,
                             SmallVectorImpl<Attribute> &sharded) {
  OpBuilder &b = slicer.b;
  auto module = step->getParentOfType<ModuleOp>();
  for (auto opt : llvm::make_early_inc_range(
           step.getBody().front().getOps<OptimizerOpInterface>())) {
    FlatSymbolRefAttr name = opt.getUpdatedParam();
    auto param = name ? module.lookupSymbol<ParamOp>(name.getAttr()) : nullptr;
    if (!param)
      return opt->emitError("--loom-shard-state: this update names no "
                            "parameter");
    RankedTensorType type = param.getTensorType();
    Cut cut = slicer.cutOf(type);
    // A zero-size parameter has no state to cut: its update stays whole.
    if (cut.elements == 0)
      continue;
    b.setInsertionPoint(opt);
    slicer.loc = opt.getLoc();
    Value gradValue = gradOf(opt);
    if (!gradValue)
      return opt->emitError("--loom-shard-state cannot shard this update: "
                            "it knows loom.adamw and loom.sgd");
    Value gradSlice = gradSlices.empty() ? slicer.mine(gradValue, cut)
                                         : gradSlices.lookup(gradValue);
    if (!gradSlice)
      return opt->emitError("--loom-shard-state: the gradient this update "
                            "takes is not one @loss_and_grad scattered");
    sharded.push_back(name.getAttr());
    ++numShardedParams;
    // Stage 3: the parameter is the slice, updated in place.
    if (stage == 3) {
      opt->replaceUsesOfWith(gradValue, gradSlice);
      continue;
    }
    Value x = GetParamOp::create(b, slicer.loc, type, name);
    FailureOr<Value> updated =
        buildSliceUpdate(b, opt, slicer.mine(x, cut), gradSlice);
    if (failed(updated))
      return failure();
    SetParamOp::create(b, slicer.loc, name,
                       slicer.gathered(*updated, cut, type));
    opt->erase();
  }
  return success();
}

/// Stage 3: each rank stores only its slice of every sharded parameter
/// (the param's type becomes the slice's, its own kept in kFullTypeAttr),
/// and every read of it is an all_gather placed just before the first use
/// of the value; in @loss_and_grad_shards the backward pass gathers it
/// again rather than keeping the forward's copy alive in between.
LogicalResult ShardStatePass::shardParams(ModuleOp module, Slicer &slicer,
                                          ArrayRef<Attribute> sharded) {
  OpBuilder &b = slicer.b;
  DenseMap<StringAttr, std::pair<RankedTensorType, Cut>> cuts;
  for (Attribute name : sharded) {
    auto param = module.lookupSymbol<ParamOp>(cast<StringAttr>(name));
    RankedTensorType type = param.getTensorType();
    Cut cut = slicer.cutOf(type);
    cuts[param.getSymNameAttr()] = {type, cut};
    param->setAttr(kFullTypeAttr, TypeAttr::get(type));
    param.setType(RankedTensorType::get({cut.shard()}, type.getElementType()));
  }
  // What autodiff computed and nothing uses (the gradients of the inputs)
  // goes first, or its reads of a parameter would each cost a gather, a
  // collective no later cleanup removes.
  for (auto fn : module.getOps<func::FuncOp>())
    for (Block &block : fn.getBody())
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (isOpTriviallyDead(&op))
          op.erase();
  SmallVector<GetParamOp> reads;
  module.walk([&](GetParamOp get) {
    if (cuts.count(get.getParamAttr().getAttr()))
      reads.push_back(get);
  });
  // Where the backward pass of @loss_and_grad_shards starts: after the op
  // computing the loss, which the clone returns averaged.
  Operation *lossOp = nullptr;
  if (auto shards = module.lookupSymbol<func::FuncOp>(kShardsName)) {
    auto ret = cast<func::ReturnOp>(shards.getBody().front().getTerminator());
    Value loss = ret.getOperand(0);
    if (auto mean = loss.getDefiningOp<comm::AllReduceOp>())
      loss = mean.getInput();
    lossOp = loss.getDefiningOp();
  }
  for (GetParamOp get : reads) {
    auto [type, cut] = cuts.lookup(get.getParamAttr().getAttr());
    Operation *first = firstUser(get);
    if (!first) {
      get.erase();
      continue;
    }
    b.setInsertionPoint(first);
    slicer.loc = get.getLoc();
    auto shard = GetParamOp::create(
        b, get.getLoc(),
        RankedTensorType::get({cut.shard()}, type.getElementType()),
        get.getParamAttr());
    Value full = slicer.gathered(shard, cut, type);
    get.replaceAllUsesWith(full);
    get.erase();
    gathers.push_back({shard, first});
    ++numParamGathers;
    if (lossOp && lossOp->getBlock() == first->getBlock() &&
        first->isBeforeInBlock(lossOp))
      regatherForBackward(full, lossOp, slicer, cut, type, shard);
  }
  if (prefetch > 0 || bucketMiB > 0)
    placeGathers(slicer);
  return success();
}

/// Stage 3's gathers in units, each unit's read and all_gather placed
/// before the first use of the unit `prefetch` units before it in the block
/// (its own first use for the first `prefetch`). Without a bucket size a
/// unit is the parameters one op reads first; with one, consecutive
/// parameters (in first-use order) whose gathered bytes fit the bucket,
/// which share one all_gather (fuseGathers). Once the overlap passes make
/// the gathers asynchronous, a unit's parameters arrive while the units
/// before it compute, and at most `prefetch` units of gathered parameters
/// wait ahead of their use (the memory bound: prefetch x bucket bytes).
/// The gathers keep their order, so every rank issues them alike.
void ShardStatePass::placeGathers(Slicer &slicer) {
  const int64_t bucketBytes = int64_t(bucketMiB * 1024 * 1024);
  llvm::MapVector<Block *, SmallVector<ParamGather>> byBlock;
  for (const ParamGather &g : gathers)
    byBlock[g.firstUse->getBlock()].push_back(g);
  for (auto &[block, list] : byBlock) {
    llvm::stable_sort(list, [](const ParamGather &a, const ParamGather &b) {
      return a.firstUse->isBeforeInBlock(b.firstUse);
    });
    SmallVector<SmallVector<ParamGather>> units;
    int64_t bytes = 0;
    for (const ParamGather &g : list) {
      const int64_t size = gatheredBytes(g);
      bool join =
          !units.empty() &&
          (bucketBytes > 0 ? bytes + size <= bucketBytes
                           : units.back().back().firstUse == g.firstUse);
      if (!join) {
        units.emplace_back();
        bytes = 0;
      }
      units.back().push_back(g);
      bytes += size;
    }
    for (auto [j, unit] : llvm::enumerate(units)) {
      // Before the unit's own first read (where its gathers are now) or
      // the first use of the unit `prefetch` before it, if that is earlier.
      Operation *at = unit.front().read;
      if (j >= size_t(prefetch)) {
        Operation *ahead = units[j - prefetch].front().firstUse;
        if (ahead->isBeforeInBlock(at))
          at = ahead;
      }
      if (unit.size() > 1 && bucketBytes > 0) {
        fuseGathers(unit, at, slicer);
        continue;
      }
      if (at == unit.front().read.getOperation())
        continue;
      for (const ParamGather &g : unit) {
        GetParamOp read = g.read;
        Operation *gather = *read->getUsers().begin();
        read->moveBefore(at);
        gather->moveBefore(at);
      }
    }
  }
}

/// Bytes of the gathered (padded, whole) parameter of `g`.
int64_t ShardStatePass::gatheredBytes(const ParamGather &g) const {
  GetParamOp read = g.read;
  auto gather = cast<comm::AllGatherOp>(*read->getUsers().begin());
  RankedTensorType t = gather.getType();
  return t.getNumElements() * t.getElementTypeBitWidth() / 8;
}

/// One all_gather for the slices of `unit`, before `at`: the slices
/// packed into one buffer of S = sum of s elements, gathered to N x S
/// (rank-major), and each parameter's N x s columns taking the place of its
/// own gather's result.
void ShardStatePass::fuseGathers(ArrayRef<ParamGather> unit, Operation *at,
                                 Slicer &slicer) {
  OpBuilder &b = slicer.b;
  b.setInsertionPoint(at);
  Location loc = at->getLoc();
  LoomBuilder lb{b, loc};
  SmallVector<comm::AllGatherOp> members;
  SmallVector<Value> slices;
  SmallVector<Type> columns;
  int64_t total = 0;
  SmallVector<GetParamOp> oldReads;
  for (const ParamGather &g : unit) {
    // A fresh read at `at` (which may be the first old read).
    GetParamOp read = g.read;
    oldReads.push_back(read);
    members.push_back(cast<comm::AllGatherOp>(*read->getUsers().begin()));
    slices.push_back(b.clone(*read)->getResult(0));
    int64_t s = read.getType().getNumElements();
    columns.push_back(RankedTensorType::get({slicer.ranks, s},
                                            read.getType().getElementType()));
    total += s;
  }
  Value packed = ConcatOp::create(b, loc, slicer.flat(slices[0], total), slices,
                                  b.getI64IntegerAttr(0));
  Value all = comm::AllGatherOp::create(
      b, loc, slicer.flat(packed, slicer.ranks * total), packed,
      slicer.mesh.getValue(), slicer.axes, 0);
  Value grid = lb.reshape(all, {slicer.ranks, total});
  auto split = SplitOp::create(b, loc, columns, grid, 1);
  for (auto [member, column] : llvm::zip(members, split.getResults())) {
    member.getResult().replaceAllUsesWith(
        lb.reshape(column, member.getType().getShape()));
    member.erase();
  }
  for (GetParamOp read : oldReads)
    read.erase();
  ++numGatherBuckets;
}

/// The uses of gathered parameter `full` after `lossOp` (the backward
/// pass) read a second gather, placed before the first of them, so the
/// forward's copy is freed after its last forward use.
void ShardStatePass::regatherForBackward(Value full, Operation *lossOp,
                                         Slicer &slicer, Cut cut,
                                         RankedTensorType type,
                                         GetParamOp shard) {
  Block *block = lossOp->getBlock();
  auto inBackward = [&](OpOperand &use) {
    Operation *at = block->findAncestorOpInBlock(*use.getOwner());
    return at && lossOp->isBeforeInBlock(at);
  };
  Operation *first = nullptr;
  for (OpOperand &use : full.getUses())
    if (inBackward(use)) {
      Operation *at = block->findAncestorOpInBlock(*use.getOwner());
      if (!first || at->isBeforeInBlock(first))
        first = at;
    }
  if (!first)
    return;
  slicer.b.setInsertionPoint(first);
  Operation *read = slicer.b.clone(*shard);
  Value again = slicer.gathered(read->getResult(0), cut, type);
  full.replaceUsesWithIf(again, inBackward);
  gathers.push_back({cast<GetParamOp>(read), first});
  ++numParamGathers;
}

/// Stage 2: @train_step calls a copy of @loss_and_grad that returns this
/// rank's slice of each averaged gradient (a reduce_scatter where the
/// all_reduce was); the squared norm sums the slices and then the ranks.
/// Returns the slice standing for each full gradient @train_step used.
FailureOr<DenseMap<Value, Value>>
ShardStatePass::scatterGradients(func::FuncOp step, func::FuncOp grad,
                                 Slicer &slicer) {
  SmallVector<func::CallOp> calls;
  step.walk([&](func::CallOp call) {
    if (call.getCallee() == grad.getSymName())
      calls.push_back(call);
  });
  if (calls.size() != 1) {
    step.emitError("--loom-shard-state{stage=2} needs @train_step to call "
                   "@loss_and_grad once, as --loom-add-optimizer builds it");
    return failure();
  }
  func::CallOp call = calls.front();
  SmallVector<bool> scattered;
  func::FuncOp shards = cloneScattering(grad, slicer, scattered);
  if (!shards)
    return failure();
  OpBuilder &b = slicer.b;
  b.setInsertionPoint(call);
  auto newCall =
      func::CallOp::create(b, call.getLoc(), shards, call.getOperands());
  DenseMap<Value, Value> gradSlices;
  for (auto [i, full] : llvm::enumerate(call.getResults())) {
    if (!scattered[i]) {
      full.replaceAllUsesWith(newCall.getResult(i));
      continue;
    }
    if (failed(useSlice(full, newCall.getResult(i), slicer, gradSlices)))
      return failure();
  }
  if (failed(reduceNorm(step, slicer)))
    return failure();
  deadAfterUpdates.insert(deadAfterUpdates.begin(), call);
  return gradSlices;
}

/// A private copy of @loss_and_grad whose results of gradients of
/// parameters with elements are this rank's slices; `scattered` says which.
func::FuncOp ShardStatePass::cloneScattering(func::FuncOp grad, Slicer &slicer,
                                             SmallVectorImpl<bool> &scattered) {
  OpBuilder &b = slicer.b;
  auto module = grad->getParentOfType<ModuleOp>();
  StringRef name = kShardsName;
  if (module.lookupSymbol(name)) {
    module.emitError("--loom-shard-state{stage=2}: @")
        << name << " exists already";
    return nullptr;
  }
  b.setInsertionPointAfter(grad);
  auto shards = cast<func::FuncOp>(b.clone(*grad));
  shards.setSymName(name);
  shards->removeAttr(kEntryAttr);
  shards.setPrivate();
  auto ret = cast<func::ReturnOp>(shards.getBody().front().getTerminator());
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    scattered.push_back(false);
    auto of = shards.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradOfAttr);
    if (!of)
      continue;
    auto param = module.lookupSymbol<ParamOp>(of.getAttr());
    Cut cut = slicer.cutOf(param.getTensorType());
    if (cut.elements == 0)
      continue;
    auto mean = ret.getOperand(i).getDefiningOp<comm::AllReduceOp>();
    if (!mean || mean.getReduction() != comm::ReduceKind::mean) {
      ret.emitError("--loom-shard-state{stage=2}: the gradient of ")
          << of << " is not averaged by a comm.all_reduce (run "
          << "--loom-data-parallel first)";
      return nullptr;
    }
    if (mean.getCompressSlot()) {
      mean.emitError("--loom-shard-state{stage=2}: the gradient of ")
          << of << " is compressed (--loom-compress), which averages whole "
          << "gradients; stage 2 reduce-scatters them";
      return nullptr;
    }
    // Scattered as soon as it is produced, so the whole local gradient is
    // freed then rather than at the end of the backward pass; the
    // collectives follow the production order, the same on every rank.
    Operation *producer = mean.getInput().getDefiningOp();
    if (producer && producer->getBlock() == mean->getBlock())
      b.setInsertionPointAfter(producer);
    else
      b.setInsertionPoint(mean);
    slicer.loc = mean.getLoc();
    ret.setOperand(i, slicer.scattered(mean.getInput(), cut));
    mean.erase();
    scattered.back() = true;
    ++numReduceScatters;
  }
  shards.setType(
      b.getFunctionType(shards.getArgumentTypes(), ret.getOperandTypes()));
  return shards;
}

/// Rewrites @train_step's uses of full gradient `full` onto its `slice`:
/// its squared sum (the norm's term), its scaling by the clip coefficient
/// and the update that takes it.
LogicalResult ShardStatePass::useSlice(Value full, Value slice, Slicer &slicer,
                                       DenseMap<Value, Value> &gradSlices) {
  OpBuilder &b = slicer.b;
  LoomBuilder lb{b, slicer.loc};
  gradSlices[full] = slice;
  for (Operation *user : llvm::make_early_inc_range(full.getUsers())) {
    if (llvm::is_contained(deadAfterUpdates, user) ||
        isa<OptimizerOpInterface>(user))
      continue;
    auto mul = dyn_cast<MulOp>(user);
    if (mul && mul.getLhs() == full && mul.getRhs() == full &&
        llvm::all_of(mul->getUsers(), llvm::IsaPred<SumOp>)) {
      for (Operation *sum : llvm::make_early_inc_range(mul->getUsers())) {
        b.setInsertionPoint(sum);
        sum->getResult(0).replaceAllUsesWith(
            lb.sum(lb.mul(slice, slice), {0}, /*keepdim=*/false));
        sum->erase();
      }
      deadAfterUpdates.push_back(mul);
      continue;
    }
    Value other =
        mul ? (mul.getLhs() == full ? mul.getRhs() : mul.getLhs()) : Value();
    if (other && cast<RankedTensorType>(other.getType()).getRank() == 0) {
      b.setInsertionPoint(mul);
      gradSlices[mul.getResult()] =
          mul.getLhs() == full ? lb.mul(slice, other) : lb.mul(other, slice);
      deadAfterUpdates.push_back(mul);
      continue;
    }
    return user->emitError("--loom-shard-state{stage=2} cannot use a "
                           "gradient slice here: it knows the norm, the "
                           "clip and the optimizer's uses");
  }
  return success();
}

/// The gradient norm's square, summed over slices, is summed over ranks
/// before its root.
LogicalResult ShardStatePass::reduceNorm(func::FuncOp step, Slicer &slicer) {
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    auto name = step.getResultAttrOfType<StringAttr>(i, kOutputAttr);
    if (!name || name.getValue() != "grad_norm")
      continue;
    auto root = ret.getOperand(i).getDefiningOp<SqrtOp>();
    if (!root)
      return ret.emitError("--loom-shard-state{stage=2}: grad_norm is not "
                           "the root of a sum, as --loom-add-optimizer "
                           "builds it");
    slicer.b.setInsertionPoint(root);
    Value squares = root->getOperand(0);
    root->setOperand(
        0, comm::AllReduceOp::create(slicer.b, root.getLoc(), squares.getType(),
                                     squares, slicer.mesh.getValue(),
                                     slicer.axes, comm::ReduceKind::sum));
    return success();
  }
  return ret.emitError("--loom-shard-state{stage=2}: @train_step has no "
                       "grad_norm output");
}

} // namespace
} // namespace mlir::loom
