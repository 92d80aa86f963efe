//===- BucketCollectives.cpp - Flat buckets of collectives
//-----------------===//
#include "passes/Schedule/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "loom-bucket-collectives"

namespace mlir::loom {
#define GEN_PASS_DEF_BUCKETCOLLECTIVESPASS
#include "passes/Schedule/Passes.h.inc"

namespace {

/// An all-reduce (not a compressed one), or a reduce-scatter of a flat (1-D)
/// tensor, with a float element type: what a bucket may hold.
bool bucketable(Operation *op) {
  auto type = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // A compressed all-reduce averages one gradient of its own (its slot).
  if (auto ar = dyn_cast<comm::AllReduceOp>(op))
    return isa<FloatType>(type(ar.getInput()).getElementType()) &&
           !ar.getCompressSlot();
  if (auto rs = dyn_cast<comm::ReduceScatterOp>(op))
    return type(rs.getInput()).getRank() == 1 &&
           isa<FloatType>(type(rs.getInput()).getElementType());
  return false;
}

Value inputOf(Operation *op) { return op->getOperand(0); }

int64_t bytesOf(Operation *op) {
  auto t = cast<RankedTensorType>(inputOf(op).getType());
  return t.getNumElements() * t.getElementTypeBitWidth() / 8;
}

/// Collectives that may share one buffer: the same kind, group and
/// reduction, and the same element type.
bool compatible(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         a->getAttr("mesh") == b->getAttr("mesh") &&
         a->getAttr("axes") == b->getAttr("axes") &&
         a->getAttr("reduction") == b->getAttr("reduction") &&
         getElementTypeOrSelf(inputOf(a)) == getElementTypeOrSelf(inputOf(b));
}

struct BucketCollectivesPass
    : impl::BucketCollectivesPassBase<BucketCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t limit = int64_t(maxMiB * 1024 * 1024);
    getOperation().walk([&](Block *block) {
      SmallVector<SmallVector<Operation *>> buckets;
      SmallVector<Operation *> current;
      int64_t size = 0;
      auto close = [&]() {
        if (current.size() > 1)
          buckets.push_back(current);
        current.clear();
        size = 0;
      };
      for (Operation &op : *block) {
        if (!bucketable(&op))
          continue;
        bool fits = !current.empty() && compatible(current.front(), &op) &&
                    size + bytesOf(&op) <= limit && !usedBefore(current, &op);
        if (!fits)
          close();
        current.push_back(&op);
        size += bytesOf(&op);
      }
      close();
      for (auto &bucket : buckets)
        fuse(bucket);
    });
  }

  /// True when a result of an earlier member is used before `next`: the
  /// bucket, placed at its last member, would no longer dominate that use.
  static bool usedBefore(ArrayRef<Operation *> bucket, Operation *next) {
    for (Operation *member : bucket)
      for (Operation *user : member->getUsers())
        if (user->getBlock() != next->getBlock() || user->isBeforeInBlock(next))
          return true;
    return false;
  }

  /// Where the bucket is built: as soon as its last input exists, so the
  /// scheduler can start it early (every member result is used after the
  /// last member, which this point precedes), but never above the
  /// collective before the bucket: the order of collectives stays the
  /// program order. Null: the start of the block.
  static Operation *readyPoint(ArrayRef<Operation *> bucket) {
    Operation *last = bucket.back();
    Operation *ready = nullptr;
    for (Operation *member : bucket)
      if (Operation *def = inputOf(member).getDefiningOp())
        if (def->getBlock() == last->getBlock() &&
            (!ready || ready->isBeforeInBlock(def)))
          ready = def;
    for (Operation *op = bucket.front()->getPrevNode(); op;
         op = op->getPrevNode()) {
      if (!isa<comm::CommDialect>(op->getDialect()) || isa<comm::MeshOp>(op))
        continue;
      if (!ready || ready->isBeforeInBlock(op))
        ready = op;
      break;
    }
    return ready;
  }

  void fuse(ArrayRef<Operation *> bucket) {
    Operation *last = bucket.back();
    OpBuilder b(last);
    if (Operation *ready = readyPoint(bucket))
      b.setInsertionPointAfter(ready);
    else
      b.setInsertionPointToStart(last->getBlock());
    Location loc = last->getLoc();
    SmallVector<Value> results = isa<comm::AllReduceOp>(last)
                                     ? fuseAllReduces(b, loc, bucket)
                                     : fuseReduceScatters(b, loc, bucket);
    for (auto [member, result] : llvm::zip(bucket, results))
      member->getResult(0).replaceAllUsesWith(result);
    // Erased last: the builder's insertion point may be a member.
    for (Operation *member : bucket)
      member->erase();
    ++numBuckets;
    numFused += bucket.size();
  }

  /// The members' operands flattened and concatenated, all-reduced as one
  /// buffer and split back.
  static SmallVector<Value> fuseAllReduces(OpBuilder &b, Location loc,
                                           ArrayRef<Operation *> bucket) {
    LoomBuilder lb{b, loc};
    auto last = cast<comm::AllReduceOp>(bucket.back());
    SmallVector<Value> flat;
    SmallVector<Type> pieceTypes;
    for (Operation *member : bucket) {
      auto t = cast<RankedTensorType>(inputOf(member).getType());
      flat.push_back(lb.reshape(inputOf(member), {t.getNumElements()}));
      pieceTypes.push_back(flat.back().getType());
    }
    Value buffer = ConcatOp::create(b, loc, flat, 0);
    Value reduced = comm::AllReduceOp::create(
        b, loc, buffer.getType(), buffer, last.getMeshAttr().getValue(),
        last.getAxes(), last.getReduction());
    SmallVector<Value> results;
    auto pieces = SplitOp::create(b, loc, pieceTypes, reduced, 0);
    for (auto [member, piece] : llvm::zip(bucket, pieces.getResults()))
      results.push_back(lb.reshape(
          piece,
          cast<RankedTensorType>(member->getResult(0).getType()).getShape()));
    return results;
  }

  /// Each member's operand, N slices of s elements, as an N x s matrix;
  /// the matrices side by side (N x S, S = sum of s) and flattened, so row
  /// r holds every member's slice r; reduce-scattered as one buffer (rank
  /// r receives row r) and split into the members' slices.
  static SmallVector<Value> fuseReduceScatters(OpBuilder &b, Location loc,
                                               ArrayRef<Operation *> bucket) {
    LoomBuilder lb{b, loc};
    auto last = cast<comm::ReduceScatterOp>(bucket.back());
    SmallVector<Value> matrices;
    SmallVector<Type> sliceTypes;
    int64_t total = 0;
    for (Operation *member : bucket) {
      auto slice = cast<RankedTensorType>(member->getResult(0).getType());
      int64_t s = slice.getNumElements();
      int64_t n =
          cast<RankedTensorType>(inputOf(member).getType()).getNumElements() /
          s;
      matrices.push_back(lb.reshape(inputOf(member), {n, s}));
      sliceTypes.push_back(slice);
      total += s;
    }
    int64_t n = cast<RankedTensorType>(matrices[0].getType()).getDimSize(0);
    Type elem = getElementTypeOrSelf(matrices[0]);
    Value grid =
        ConcatOp::create(b, loc, RankedTensorType::get({n, total}, elem),
                         matrices, b.getI64IntegerAttr(1));
    Value rows = lb.reshape(grid, {n * total});
    Value mine = comm::ReduceScatterOp::create(
        b, loc, RankedTensorType::get({total}, elem), rows,
        last.getMeshAttr().getValue(), last.getAxes(), last.getReduction(), 0);
    auto pieces = SplitOp::create(b, loc, sliceTypes, mine, 0);
    return SmallVector<Value>(pieces.getResults());
  }
};

} // namespace
} // namespace mlir::loom
