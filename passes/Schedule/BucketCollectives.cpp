//===- BucketCollectives.cpp - Flat buckets of all-reduces ----------------===//
#include "passes/Schedule/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "loom-bucket-collectives"

namespace mlir::loom {
#define GEN_PASS_DEF_BUCKETCOLLECTIVESPASS
#include "passes/Schedule/Passes.h.inc"

namespace {

int64_t bytesOf(comm::AllReduceOp op) {
  auto t = op.getType();
  return t.getNumElements() * t.getElementTypeBitWidth() / 8;
}

/// All-reduces that may share one buffer.
bool compatible(comm::AllReduceOp a, comm::AllReduceOp b) {
  return a.getMeshAttr() == b.getMeshAttr() && a.getAxes() == b.getAxes() &&
         a.getReduction() == b.getReduction() &&
         a.getType().getElementType() == b.getType().getElementType() &&
         isa<FloatType>(a.getType().getElementType());
}

struct BucketCollectivesPass
    : impl::BucketCollectivesPassBase<BucketCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t limit = int64_t(maxMiB * 1024 * 1024);
    getOperation().walk([&](Block *block) {
      SmallVector<SmallVector<comm::AllReduceOp>> buckets;
      SmallVector<comm::AllReduceOp> current;
      int64_t size = 0;
      auto close = [&]() {
        if (current.size() > 1)
          buckets.push_back(current);
        current.clear();
        size = 0;
      };
      for (Operation &op : *block) {
        auto ar = dyn_cast<comm::AllReduceOp>(op);
        if (!ar)
          continue;
        bool fits = !current.empty() && compatible(current.front(), ar) &&
                    size + bytesOf(ar) <= limit && !usedBefore(current, ar);
        if (!fits)
          close();
        current.push_back(ar);
        size += bytesOf(ar);
      }
      close();
      for (auto &bucket : buckets)
        fuse(bucket);
    });
  }

  /// True when a result of an earlier member is used before `next`: the
  /// bucket, placed at its last member, would no longer dominate that use.
  static bool usedBefore(ArrayRef<comm::AllReduceOp> bucket,
                         comm::AllReduceOp next) {
    for (comm::AllReduceOp member : bucket)
      for (Operation *user : member->getUsers())
        if (user->getBlock() != next->getBlock() || user->isBeforeInBlock(next))
          return true;
    return false;
  }

  void fuse(SmallVector<comm::AllReduceOp> &bucket) {
    comm::AllReduceOp last = bucket.back();
    // Build the bucket as soon as its last input exists, so the scheduler can
    // start it early; every member result is used after `last`, which this
    // point precedes.
    Operation *ready = nullptr;
    for (comm::AllReduceOp member : bucket)
      if (Operation *def = member.getInput().getDefiningOp())
        if (def->getBlock() == last->getBlock() &&
            (!ready || ready->isBeforeInBlock(def)))
          ready = def;
    // Never above the collective before the bucket: the order of
    // collectives stays the program order.
    for (Operation *op = bucket.front()->getPrevNode(); op;
         op = op->getPrevNode()) {
      if (!isa<comm::CommDialect>(op->getDialect()) || isa<comm::MeshOp>(op))
        continue;
      if (!ready || ready->isBeforeInBlock(op))
        ready = op;
      break;
    }
    OpBuilder b(last);
    if (ready)
      b.setInsertionPointAfter(ready);
    else
      b.setInsertionPointToStart(last->getBlock());
    Location loc = last.getLoc();
    LoomBuilder lb{b, loc};
    SmallVector<Value> flat;
    SmallVector<Type> pieceTypes;
    for (comm::AllReduceOp member : bucket) {
      auto t = member.getType();
      flat.push_back(lb.reshape(member.getInput(), {t.getNumElements()}));
      pieceTypes.push_back(flat.back().getType());
    }
    Value buffer = ConcatOp::create(b, loc, flat, 0);
    Value reduced = comm::AllReduceOp::create(
        b, loc, buffer.getType(), buffer, last.getMeshAttr().getValue(),
        last.getAxes(), last.getReduction());
    auto pieces = SplitOp::create(b, loc, pieceTypes, reduced, 0);
    for (auto [i, piece] : llvm::enumerate(pieces.getResults())) {
      comm::AllReduceOp member = bucket[i];
      member.getResult().replaceAllUsesWith(
          lb.reshape(piece, member.getType().getShape()));
    }
    // Erased last: the builder's insertion point may be a member.
    for (comm::AllReduceOp member : bucket)
      member.erase();
    ++numBuckets;
    numFused += bucket.size();
  }
};

} // namespace
} // namespace mlir::loom
