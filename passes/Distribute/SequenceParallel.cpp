//===- SequenceParallel.cpp - Token-sharded regions between tp blocks -----===//
//
// Megatron-LM's sequence parallelism (Korthikanti et al., 2022): between
// the tensor-parallel blocks, where every rank would compute the same
// layer norms and residual adds on the whole activation, each rank keeps
// and computes only its share of the tokens. The all-reduce that ends a
// row-parallel layer becomes a reduce-scatter (each rank gets the sum for
// its tokens), and the fan-out that starts a column-parallel layer an
// all-gather of the ranks' tokens: the same bytes cross the links, and the
// activations between blocks take 1/T of the memory.
//
// The activations are viewed as [N, D] (N the step's tokens, flattened in
// order) and cut along N, so the collectives are along dimension 0. The
// region grows from the reduce-scatters through the token-wise ops (adds,
// layer norms) and takes in the other activations those ops read (the
// first residual stream, cut where it is made); a parameter a token-wise op
// reads is fanned out (its gradient summed over the ranks, as each saw its
// tokens only); any other reader of the region gets the whole activation
// back by an all-gather.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"
#include "passes/Train/LossFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "loom-sequence-parallel"

namespace mlir::loom {
#define GEN_PASS_DEF_SEQUENCEPARALLELPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

constexpr StringLiteral kAxis = "tp";

bool isTokenwise(Operation *op) { return isa<AddOp, LayerNormOp>(op); }

/// Whether `op` computes each token of `whole` from that token alone: a
/// token-wise op whose other operands are vectors over the last dimension
/// (a norm's weight, a bias) or scalars.
bool tokenwiseOn(Operation *op, RankedTensorType whole) {
  return isTokenwise(op) && op->getResult(0).getType() == whole &&
         llvm::all_of(op->getOperandTypes(), [&](Type t) {
           auto r = cast<RankedTensorType>(t);
           return r == whole || r.getRank() == 0 ||
                  (r.getRank() == 1 &&
                   r.getShape()[0] == whole.getShape().back());
         });
}

struct SequenceParallelPass
    : impl::SequenceParallelPassBase<SequenceParallelPass> {
  using Base::Base;

  FlatSymbolRefAttr mesh;
  ArrayAttr axes;
  int64_t ranks = 1;
  /// The whole activation's type, its [N, D] view and one rank's part.
  RankedTensorType whole, flat, part;
  llvm::SetVector<Value> region;
  llvm::DenseMap<Value, Value> parts, gathered, unsharded;

  void runOnOperation() override;
  bool isSeed(Operation *op) const;
  LogicalResult findRegion(Block &body);
  void buildParts(Block &body);
  Value gatherWhole(Value v, bool intoSplit);
  void replaceReaders(Block &body);
};

/// A tensor-parallel all-reduce (the end of a row-parallel layer).
bool SequenceParallelPass::isSeed(Operation *op) const {
  auto reduce = dyn_cast<comm::AllReduceOp>(op);
  return reduce && reduce.getReduction() == comm::ReduceKind::sum &&
         reduce.getAxes() == axes && reduce.getType() == whole;
}

/// The activations that become token parts: the all-reduces' results, the
/// results of token-wise ops that read one, and the other activations
/// those ops read.
LogicalResult SequenceParallelPass::findRegion(Block &body) {
  for (Operation &op : body)
    if (auto reduce = dyn_cast<comm::AllReduceOp>(op);
        reduce && reduce.getAxes() == axes) {
      whole = reduce.getType();
      break;
    }
  if (!whole || whole.getRank() < 2)
    return emitError(body.getParentOp()->getLoc(),
                     "--loom-sequence-parallel found no tensor-parallel "
                     "all-reduce of an activation [..., D] to turn into a "
                     "reduce-scatter (run --loom-tensor-parallel first)");
  int64_t tokens = whole.getNumElements() / whole.getShape().back();
  if (tokens % ranks)
    return emitError(body.getParentOp()->getLoc(), "sequence parallelism: ")
           << "the step's " << tokens << " tokens cannot be shared equally "
           << "by " << ranks << " tensor-parallel ranks";
  flat = RankedTensorType::get({tokens, whole.getShape().back()},
                               whole.getElementType());
  part = RankedTensorType::get({tokens / ranks, whole.getShape().back()},
                               whole.getElementType());
  for (Operation &op : body)
    if (isSeed(&op))
      region.insert(op.getResult(0));
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : body) {
      if (!tokenwiseOn(&op, whole) ||
          !llvm::any_of(op.getOperands(),
                        [&](Value v) { return region.contains(v); }))
        continue;
      changed |= region.insert(op.getResult(0));
      for (Value v : op.getOperands())
        if (v.getType() == whole)
          changed |= region.insert(v);
    }
  }
  return success();
}

/// Each region value's part, in program order: a reduce-scatter for an
/// all-reduce, the token-wise op on parts, or this rank's tokens of an
/// activation made whole (where it is made).
void SequenceParallelPass::buildParts(Block &body) {
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  OpBuilder b(body.getParentOp()->getContext());
  auto cutWhole = [&](Value v, Location loc) {
    Value viewed = ReshapeOp::create(b, loc, flat, v);
    parts[v] = comm::ShardOp::create(b, loc, part, viewed, mesh, axes,
                                     b.getI64IntegerAttr(0));
  };
  b.setInsertionPointToStart(&body);
  for (BlockArgument arg : body.getArguments())
    if (region.contains(arg))
      cutWhole(arg, arg.getLoc());
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    b.setInsertionPoint(op);
    if (isSeed(op) && region.contains(op->getResult(0))) {
      Value viewed = ReshapeOp::create(b, loc, flat, op->getOperand(0));
      parts[op->getResult(0)] = comm::ReduceScatterOp::create(
          b, loc, part, viewed, mesh, axes,
          comm::ReduceKindAttr::get(b.getContext(), comm::ReduceKind::sum),
          b.getI64IntegerAttr(0));
      continue;
    }
    bool onParts = tokenwiseOn(op, whole) &&
                   region.contains(op->getResult(0)) &&
                   llvm::any_of(op->getOperands(),
                                [&](Value v) { return parts.count(v); });
    if (onParts) {
      IRMapping map;
      for (Value v : op->getOperands())
        map.map(v, parts.count(v) ? parts[v]
                                  : Value(comm::FanOutOp::create(
                                        b, loc, v.getType(), v, mesh, axes)));
      Operation *clone = b.clone(*op, map);
      clone->getResult(0).setType(part);
      parts[op->getResult(0)] = clone->getResult(0);
      continue;
    }
    b.setInsertionPointAfter(op);
    for (Value v : op->getResults())
      if (region.contains(v))
        cutWhole(v, loc);
  }
}

/// The whole activation from the ranks' parts, for a column-parallel layer
/// (`intoSplit`: an all-gather, whose gradient sums the ranks' different
/// gradients) or for work every rank does alike (an unshard, whose
/// gradient is the rank's part); each made once, where the part is.
Value SequenceParallelPass::gatherWhole(Value v, bool intoSplit) {
  Value &whole_ = (intoSplit ? gathered : unsharded)[v];
  if (!whole_) {
    Value p = parts[v];
    OpBuilder b = OpBuilder::atBlockBegin(p.getParentBlock());
    b.setInsertionPointAfterValue(p);
    Value all =
        intoSplit
            ? Value(comm::AllGatherOp::create(b, p.getLoc(), flat, p, mesh,
                                              axes, b.getI64IntegerAttr(0)))
            : Value(comm::UnshardOp::create(b, p.getLoc(), flat, p, mesh, axes,
                                            b.getI64IntegerAttr(0)));
    whole_ = ReshapeOp::create(b, p.getLoc(), whole, all);
  }
  return whole_;
}

/// A fan-out of a region value becomes the all-gather of its parts; any
/// other reader outside the region reads the gathered whole.
void SequenceParallelPass::replaceReaders(Block &body) {
  for (Value v : region) {
    for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
      Operation *user = use.getOwner();
      bool replaced =
          tokenwiseOn(user, whole) && region.contains(user->getResult(0)) &&
          parts.count(user->getResult(0)) &&
          !isa<comm::ShardOp>(parts[user->getResult(0)].getDefiningOp());
      bool cuts = isa<ReshapeOp>(user) && user->hasOneUse() &&
                  isa<comm::ShardOp>(*user->user_begin());
      if (replaced || cuts)
        continue;
      if (auto fanOut = dyn_cast<comm::FanOutOp>(user);
          fanOut && fanOut.getAxes() == axes) {
        fanOut.getResult().replaceAllUsesWith(gatherWhole(v, true));
        fanOut.erase();
        continue;
      }
      use.set(gatherWhole(v, false));
    }
  }
  // The whole-activation ops the parts replace, last first.
  SmallVector<Operation *> dead;
  for (Operation &op : body)
    if (op.getNumResults() == 1 && region.contains(op.getResult(0)) &&
        parts.count(op.getResult(0)) &&
        !isa<comm::ShardOp>(parts[op.getResult(0)].getDefiningOp()))
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead))
    if (op->use_empty())
      op->erase();
}

void SequenceParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto meshOp = module.lookupSymbol<comm::MeshOp>(meshName);
  OpBuilder b(module.getContext());
  axes = b.getStrArrayAttr({kAxis});
  if (!meshOp || !llvm::is_contained(meshOp.getAxes(), axes[0])) {
    module.emitError("--loom-sequence-parallel needs the tensor-parallel "
                     "mesh @")
        << meshName << " with a \"tp\" axis (run --loom-tensor-parallel first)";
    return signalPassFailure();
  }
  mesh = FlatSymbolRefAttr::get(meshOp.getSymNameAttr());
  ranks = meshOp.getGroupSize(axes);
  FailureOr<func::FuncOp> loss = lookupLossFunction(module, "loss");
  if (failed(loss))
    return signalPassFailure();
  Block &body = loss->front();
  if (failed(findRegion(body)))
    return signalPassFailure();
  buildParts(body);
  replaceReaders(body);
  numRegionValues += region.size();
}

} // namespace
} // namespace mlir::loom
