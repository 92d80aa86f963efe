//===- TensorParallel.cpp - Megatron-style tensor parallelism -------------===//
//
// Each attention block and each MLP block of the model is split over the
// "tp" ranks as Megatron-LM splits them: the first linear layer by output
// features (column-parallel: rank r computes its heads or hidden units), the
// second by input features (row-parallel: each rank's partial product, the
// ranks' sum taken by one comm.all_reduce, the bias added after it). Blocks
// are found by the shape of the IR, so a model written by hand is split as
// the built-in GPT is. Each rank stores only its part of the split weights
// (#loom.tensor_split); autodiff turns comm.fan_out into the backward pass's
// all-reduce.
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "loom-tensor-parallel"

namespace mlir::loom {
#define GEN_PASS_DEF_TENSORPARALLELPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

constexpr StringLiteral kAxis = "tp";

/// How many get_param ops read each parameter, counted once per module.
using ReadCounts = llvm::DenseMap<Attribute, int>;

/// Whether `v` is the only read of a parameter, used once: a weight read by
/// anything else too (a tied embedding) stays whole.
bool isOwnParam(Value v, const ReadCounts &reads) {
  auto get = v ? v.getDefiningOp<GetParamOp>() : GetParamOp();
  return get && v.hasOneUse() && reads.lookup(get.getParamAttr()) == 1;
}

/// Whether the weight and bias of `linear` may be split.
bool hasOwnParams(LinearOp linear, const ReadCounts &reads) {
  return isOwnParam(linear.getWeight(), reads) &&
         (!linear.getBias() || isOwnParam(linear.getBias(), reads));
}

template <typename OpTy>
OpTy soleUser(Value v) {
  return v.hasOneUse() ? dyn_cast<OpTy>(*v.user_begin()) : OpTy();
}

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// `v`'s type with dimension `dim` divided by `parts`.
RankedTensorType divided(Value v, int64_t dim, int64_t parts) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] /= parts;
  return RankedTensorType::get(shape, t.getElementType());
}

/// Where the transpose `perm` moves dimension `dim` of its operand.
int64_t movedTo(ArrayRef<int64_t> perm, int64_t dim) {
  return llvm::find(perm, dim) - perm.begin();
}

/// q, k, v → heads → attention → back → one linear layer.
struct AttentionBlock {
  LinearOp qkv;
  SplitOp split;
  SmallVector<Operation *> toHeads; ///< each part's reshape and transpose
  int64_t headsDim;                 ///< of the attention's operands
  int64_t heads;
  AttentionOp attention;
  TransposeOp back;
  ReshapeOp merge;
  LinearOp proj;
};

/// linear → activation → linear.
struct MlpBlock {
  LinearOp up;
  Operation *act;
  LinearOp down;
};

/// The view of one of q, k, v as heads: reshape [..., H·Dh] → [..., H, Dh]
/// then a transpose that keeps the last two dimensions' order apart from H.
/// Returns the transposed value and the position of H in it.
std::optional<std::pair<TransposeOp, int64_t>>
matchToHeads(Value part, SmallVectorImpl<Operation *> &ops) {
  auto reshape = soleUser<ReshapeOp>(part);
  if (!reshape)
    return std::nullopt;
  auto in = cast<RankedTensorType>(part.getType());
  auto out = reshape.getType();
  if (out.getRank() != in.getRank() + 1 ||
      out.getShape().drop_back(2) != in.getShape().drop_back() ||
      out.getDimSize(out.getRank() - 2) * out.getDimSize(out.getRank() - 1) !=
          in.getShape().back())
    return std::nullopt;
  auto transpose = soleUser<TransposeOp>(reshape.getResult());
  if (!transpose)
    return std::nullopt;
  int64_t dim = movedTo(transpose.getPermutation(), out.getRank() - 2);
  // Heads must stay a batch-like dimension of the attention.
  if (dim >= out.getRank() - 2)
    return std::nullopt;
  ops.append({reshape, transpose});
  return std::make_pair(transpose, dim);
}

std::optional<AttentionBlock> matchAttention(LinearOp qkv,
                                             const ReadCounts &reads) {
  AttentionBlock blk{};
  blk.qkv = qkv;
  int64_t rank = rankOf(qkv.getResult());
  blk.split = soleUser<SplitOp>(qkv.getResult());
  if (!hasOwnParams(qkv, reads) || !blk.split ||
      blk.split.getNumResults() != 3 ||
      int64_t(blk.split.getAxis()) != rank - 1)
    return std::nullopt;
  SmallVector<Value> parts;
  for (Value part : blk.split.getResults()) {
    auto heads = matchToHeads(part, blk.toHeads);
    if (!heads || (!parts.empty() && heads->second != blk.headsDim))
      return std::nullopt;
    blk.headsDim = heads->second;
    parts.push_back(heads->first.getResult());
  }
  blk.attention = soleUser<AttentionOp>(parts[0]);
  if (!blk.attention || blk.attention.getQuery() != parts[0] ||
      blk.attention.getKey() != parts[1] ||
      blk.attention.getValue() != parts[2] ||
      blk.attention.getType() != parts[0].getType())
    return std::nullopt;
  blk.heads = blk.attention.getType().getDimSize(blk.headsDim);
  blk.back = soleUser<TransposeOp>(blk.attention.getResult());
  if (!blk.back)
    return std::nullopt;
  int64_t outRank = rankOf(blk.back.getResult());
  if (movedTo(blk.back.getPermutation(), blk.headsDim) != outRank - 2)
    return std::nullopt;
  // The heads merged back: [..., H, Dh] -> [..., H·Dh].
  blk.merge = soleUser<ReshapeOp>(blk.back.getResult());
  auto backType = blk.back.getType();
  if (!blk.merge || blk.merge.getType().getShape().drop_back() !=
                        backType.getShape().drop_back(2))
    return std::nullopt;
  blk.proj = soleUser<LinearOp>(blk.merge.getResult());
  if (!blk.proj || blk.proj.getInput() != blk.merge.getResult() ||
      !hasOwnParams(blk.proj, reads))
    return std::nullopt;
  return blk;
}

std::optional<MlpBlock> matchMlp(LinearOp up, const ReadCounts &reads) {
  if (!hasOwnParams(up, reads) || !up.getResult().hasOneUse())
    return std::nullopt;
  Operation *act = *up.getResult().user_begin();
  if (!isa<GeluOp, ReluOp, TanhOp>(act) || act->getNumOperands() != 1)
    return std::nullopt;
  auto down = soleUser<LinearOp>(act->getResult(0));
  if (!down || down.getInput() != act->getResult(0) ||
      !hasOwnParams(down, reads))
    return std::nullopt;
  return MlpBlock{up, act, down};
}

struct TensorParallelPass : impl::TensorParallelPassBase<TensorParallelPass> {
  using Base::Base;

  FlatSymbolRefAttr mesh;
  ArrayAttr axes;

  void runOnOperation() override;
  LogicalResult declareMesh(ModuleOp module);

  /// Makes the param `weight` reads this rank's part of itself: part r of
  /// each of its `blocks` blocks along `dim` (#loom.tensor_split), which
  /// the runtime initialises, loads and saves as such. Its read gets the
  /// part's type.
  void splitParam(Value weight, int64_t dim, int64_t blocks) {
    auto get = weight.getDefiningOp<GetParamOp>();
    auto param =
        SymbolTable::lookupNearestSymbolFrom<ParamOp>(get, get.getParamAttr());
    RankedTensorType part = divided(weight, dim, ranks);
    param.setType(part);
    param->setAttr(
        kTensorSplitAttr,
        TensorSplitAttr::get(param.getContext(), dim, blocks, ranks, mesh,
                             StringAttr::get(param.getContext(), kAxis)));
    weight.setType(part);
  }

  /// The column-parallel half: `linear` reads its input fanned out and its
  /// rows of weight and bias (`blocks` blocks of rows).
  void splitColumns(LinearOp linear, int64_t blocks) {
    OpBuilder b(linear);
    Location loc = linear.getLoc();
    Value input = linear.getInput();
    linear->setOperand(
        0, comm::FanOutOp::create(b, loc, input.getType(), input, mesh, axes));
    splitParam(linear.getWeight(), 0, blocks);
    if (Value bias = linear.getBias())
      splitParam(bias, 0, blocks);
    retype(linear.getResult(), rankOf(linear.getResult()) - 1);
  }

  void retype(Value v, int64_t dim) { v.setType(divided(v, dim, ranks)); }

  /// The row-parallel half: `linear` on its columns of the weight, the
  /// ranks' partial products summed, then the bias.
  void splitRows(LinearOp linear) {
    OpBuilder b(linear);
    Location loc = linear.getLoc();
    Value weight = linear.getWeight();
    splitParam(weight, 1, /*blocks=*/1);
    Value partial = LinearOp::create(b, loc, linear.getType(),
                                     linear.getInput(), weight, Value());
    Value out =
        comm::AllReduceOp::create(b, loc, partial.getType(), partial,
                                  mesh.getValue(), axes, comm::ReduceKind::sum);
    if (Value bias = linear.getBias())
      out = LoomBuilder{b, loc}.add(out, bias);
    linear.getResult().replaceAllUsesWith(out);
    linear.erase();
  }

  void split(AttentionBlock &blk) {
    splitColumns(blk.qkv, /*blocks=*/3);
    for (Value part : blk.split.getResults())
      retype(part, rankOf(part) - 1);
    for (Operation *op : blk.toHeads) {
      Value v = op->getResult(0);
      retype(v, isa<ReshapeOp>(op) ? rankOf(v) - 2 : blk.headsDim);
    }
    retype(blk.attention.getResult(), blk.headsDim);
    retype(blk.back.getResult(), rankOf(blk.back.getResult()) - 2);
    retype(blk.merge.getResult(), rankOf(blk.merge.getResult()) - 1);
    splitRows(blk.proj);
    ++numAttentions;
  }

  void split(MlpBlock &blk) {
    splitColumns(blk.up, /*blocks=*/1);
    retype(blk.act->getResult(0), rankOf(blk.act->getResult(0)) - 1);
    splitRows(blk.down);
    ++numMlps;
  }
};

LogicalResult TensorParallelPass::declareMesh(ModuleOp module) {
  OpBuilder b(module.getContext());
  axes = b.getStrArrayAttr({kAxis});
  if (ranks < 2 || dp < 1)
    return module.emitError("--loom-tensor-parallel: ranks must be at least "
                            "2 and dp positive, got ranks=")
           << int64_t(ranks) << " dp=" << int64_t(dp);
  if (module.lookupSymbol(meshName))
    return module.emitError("--loom-tensor-parallel declares the mesh @")
           << meshName << ", which the module already has: run it first";
  b.setInsertionPointToStart(module.getBody());
  auto op = comm::MeshOp::create(b, module.getLoc(), meshName,
                                 ArrayRef<int64_t>{dp, ranks},
                                 b.getStrArrayAttr({"dp", kAxis}));
  mesh = FlatSymbolRefAttr::get(op.getSymNameAttr());
  return success();
}

void TensorParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(declareMesh(module)))
    return signalPassFailure();

  // Blocks are matched before any is rewritten; a linear layer belongs to
  // one block at most (in linear → act → linear → act → linear, the first
  // two form a block and the last stays whole).
  SmallVector<AttentionBlock> attentions;
  SmallVector<MlpBlock> mlps;
  llvm::DenseSet<Operation *> taken;
  ReadCounts reads;
  module.walk([&](GetParamOp get) { ++reads[get.getParamAttr()]; });
  module.walk([&](LinearOp linear) {
    if (taken.contains(linear))
      return;
    if (auto blk = matchAttention(linear, reads)) {
      taken.insert(blk->proj);
      attentions.push_back(*blk);
    } else if (auto blk = matchMlp(linear, reads)) {
      taken.insert(blk->down);
      mlps.push_back(*blk);
    }
  });
  if (attentions.empty() && mlps.empty()) {
    module.emitError("--loom-tensor-parallel found no attention or MLP block "
                     "to split (linear → split in q, k, v → attention → "
                     "linear, or linear → gelu/relu/tanh → linear, each "
                     "weight a parameter read once)");
    return signalPassFailure();
  }
  for (AttentionBlock &blk : attentions)
    if (blk.heads % ranks != 0) {
      blk.attention.emitError("--tp=")
          << int64_t(ranks) << ": this attention has " << blk.heads
          << " heads, which " << int64_t(ranks)
          << " ranks cannot share equally; use a --tp that divides "
          << blk.heads;
      return signalPassFailure();
    }
  for (MlpBlock &blk : mlps) {
    int64_t hidden = cast<RankedTensorType>(blk.up.getType()).getShape().back();
    if (hidden % ranks != 0) {
      blk.up.emitError("--tp=")
          << int64_t(ranks) << ": this MLP has " << hidden
          << " hidden units, which " << int64_t(ranks)
          << " ranks cannot share equally; use a --tp that divides " << hidden;
      return signalPassFailure();
    }
  }
  for (AttentionBlock &blk : attentions)
    split(blk);
  for (MlpBlock &blk : mlps)
    split(blk);
}

} // namespace
} // namespace mlir::loom
