//===- PartitionSequences.cpp - Attention over documents on all ranks -----===//
//
// The compiler's half of executing a sequence plan (docs/sequences.md): the
// runtime places each step's documents on the ranks, and the attention here
// lets a query see its document's keys wherever they lie. Passes.td says
// what the rewrite is.
//
//===----------------------------------------------------------------------===//
#include "dialects/Loom/IR/LoomBuilder.h"
#include "dialects/Loom/IR/LoomDialect.h"
#include "passes/Distribute/Mesh.h"
#include "passes/Distribute/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "loom-partition-sequences"

namespace mlir::loom {
#define GEN_PASS_DEF_PARTITIONSEQUENCESPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

/// The argument of `fn` the model names `name` (kInputAttr), or null.
Value namedInput(func::FuncOp fn, StringRef name) {
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto attr = fn.getArgAttrOfType<StringAttr>(i, kInputAttr))
      if (attr.getValue() == name)
        return fn.getArgument(i);
  return Value();
}

/// What every rewritten attention reads: the mesh, and the documents and
/// positions of the rank's tokens (queries) and of all ranks' (keys), 1-D.
struct Tokens {
  FlatSymbolRefAttr mesh;
  ArrayAttr axes;
  int64_t ranks = 1;
  Value queryDocs, queryPos, keyDocs, keyPos;
};

struct PartitionSequencesPass
    : impl::PartitionSequencesPassBase<PartitionSequencesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto loss = module.lookupSymbol<func::FuncOp>("loss");
    if (!loss || loss.getBody().empty()) {
      module.emitError("--loom-partition-sequences needs a @loss function");
      return signalPassFailure();
    }
    Value segments = namedInput(loss, "segments");
    Value positions = namedInput(loss, "positions");
    if (!segments || !positions) {
      loss.emitError("--loom-partition-sequences needs a model with "
                     "documents: @loss inputs named 'segments' and "
                     "'positions' (e.g. gpt:...,docs=1)");
      return signalPassFailure();
    }
    SmallVector<AttentionOp> attentions;
    WalkResult walk = loss.walk([&](AttentionOp op) {
      if (op.getSegments() != segments || !op.getCausal()) {
        op.emitError("--loom-partition-sequences: every attention must be "
                     "causal and masked by the 'segments' input, as a "
                     "model with documents builds it");
        return WalkResult::interrupt();
      }
      attentions.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (attentions.empty()) {
      loss.emitError("--loom-partition-sequences: @loss has no attention");
      return signalPassFailure();
    }

    Tokens tokens;
    tokens.ranks = ranks;
    if (ranks > 1) {
      FailureOr<comm::MeshOp> mesh =
          getOrCreateMesh(module, meshName, axis, ranks);
      if (failed(mesh))
        return signalPassFailure();
      tokens.mesh = FlatSymbolRefAttr::get(mesh->getSymNameAttr());
      tokens.axes = OpBuilder(module.getContext()).getStrArrayAttr({axis});
    }
    OpBuilder b = OpBuilder::atBlockBegin(&loss.getBody().front());
    LoomBuilder lb{b, loss.getLoc()};
    tokens.queryDocs = flatten(lb, segments);
    tokens.queryPos = flatten(lb, positions);
    tokens.keyDocs = gather(lb, tokens, tokens.queryDocs, 0);
    tokens.keyPos = gather(lb, tokens, tokens.queryPos, 0);

    for (AttentionOp op : attentions) {
      b.setInsertionPoint(op);
      LoomBuilder ob{b, op.getLoc()};
      op.replaceAllUsesWith(rewrite(ob, op, tokens));
      op.erase();
      ++numAttentions;
    }
    markTask(module);
  }

  /// [B, T] -> [B·T]: the rank's rows as one sequence (tensor ops:
  /// loom.reshape is for floats).
  static Value flatten(LoomBuilder &lb, Value x) {
    return tensor::CollapseShapeOp::create(
        lb.b, lb.loc, x, ArrayRef<ReassociationIndices>{{0, 1}});
  }

  /// The ranks' `x` concatenated along `dim`, in rank order (x itself on
  /// one rank).
  static Value gather(LoomBuilder &lb, const Tokens &t, Value x, int64_t dim) {
    if (t.ranks == 1)
      return x;
    auto type = LoomBuilder::type(x);
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] *= t.ranks;
    return comm::AllGatherOp::create(
        lb.b, lb.loc, RankedTensorType::get(shape, type.getElementType()), x,
        t.mesh.getValue(), t.axes, dim);
  }

  /// [B, H, T, Dh] -> [H, B·T, Dh] (tokens in row order).
  static Value asSequence(LoomBuilder &lb, Value x) {
    auto s = LoomBuilder::type(x).getShape();
    Value heads =
        TransposeOp::create(lb.b, lb.loc, x, ArrayRef<int64_t>{1, 0, 2, 3});
    return lb.reshape(heads, {s[1], s[0] * s[2], s[3]});
  }

  static Value rewrite(LoomBuilder &lb, AttentionOp op, const Tokens &t) {
    auto s = LoomBuilder::type(op.getQuery()).getShape(); // [B, H, T, Dh]
    Value q = asSequence(lb, op.getQuery());
    // Along the batch: rank r's rows follow rank r-1's, the order of the
    // gathered documents and positions.
    Value k = asSequence(lb, gather(lb, t, op.getKey(), 0));
    Value v = asSequence(lb, gather(lb, t, op.getValue(), 0));
    Value out = DocumentAttentionOp::create(
        lb.b, lb.loc, q, k, v, t.queryDocs, t.queryPos, t.keyDocs, t.keyPos,
        lb.b.getF64FloatAttr(op.getEffectiveScale()));
    Value rows = lb.reshape(out, {s[1], s[0], s[2], s[3]});
    return TransposeOp::create(lb.b, lb.loc, rows,
                               ArrayRef<int64_t>{1, 0, 2, 3});
  }

  /// loom.task's `partitioned = true`: the runtime fills the rows by the
  /// plan.
  static void markTask(ModuleOp module) {
    Builder b(module.getContext());
    NamedAttrList task;
    if (auto old = module->getAttrOfType<DictionaryAttr>("loom.task"))
      task.append(old.getValue());
    task.set("partitioned", b.getBoolAttr(true));
    module->setAttr("loom.task", task.getDictionary(module.getContext()));
  }
};

} // namespace
} // namespace mlir::loom
