//===- ScheduleOverlap.cpp - Start collectives early, wait late -----------===//
//
// Only moves ops within a block and never reorders two starts, so the
// sequence of collectives (what every rank must agree on) is the program
// order of the input, whatever the compute around it.
//
//===----------------------------------------------------------------------===//
#include "passes/Schedule/Passes.h"

#include "passes/Analysis/CostModel.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

#define DEBUG_TYPE "loom-schedule-overlap"

namespace mlir::loom {
#define GEN_PASS_DEF_SCHEDULEOVERLAPPASS
#include "passes/Schedule/Passes.h.inc"

namespace {

bool isStart(Operation *op) {
  return isa<comm::AllReduceStartOp, comm::ReduceScatterStartOp,
             comm::AllGatherStartOp, comm::BroadcastStartOp>(op);
}

double inflightBytes(Operation *start) {
  auto t = cast<ShapedType>(start->getResult(1).getType());
  auto in = cast<ShapedType>(start->getOperand(0).getType());
  return double(std::max(t.getNumElements(), in.getNumElements())) *
         t.getElementTypeBitWidth() / 8;
}

/// The ancestor of `op` that lives in `block`, or null.
Operation *ancestorIn(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

struct ScheduleOverlapPass
    : impl::ScheduleOverlapPassBase<ScheduleOverlapPass> {
  using Base::Base;

  void runOnOperation() override {
    // As --loom-describe-machine recorded it.
    MachineModel machine = getMachineModel(getOperation());
    getOperation().walk([&](Block *block) {
      SmallVector<Operation *> starts;
      for (Operation &op : *block)
        if (isStart(&op))
          starts.push_back(&op);
      if (starts.empty())
        return;
      hoistStarts(block, starts);
      sinkWaits(block, starts);
      capInflight(starts);
      if (emitRemarks)
        report(starts, machine);
    });
  }

  /// Moves `op` up to just after the last definition of its operands.
  static void hoistAfterOperands(Block *block, Operation *op) {
    Operation *after = nullptr;
    for (Value operand : op->getOperands()) {
      Operation *def = ancestorIn(block, operand.getDefiningOp());
      if (def && (!after || after->isBeforeInBlock(def)))
        after = def;
    }
    if (after)
      op->moveAfter(after);
    else
      op->moveBefore(&block->front());
  }

  /// The ops that only pack a start's operand (a bucket's reshapes and
  /// concat) are placed where the bucketing put them, after the last
  /// collective they replace; each moves up to just after its own operands,
  /// so a bucket is ready as soon as its last gradient is.
  static void hoistPacking(Block *block, Operation *start) {
    SmallVector<Operation *> chain;
    llvm::SmallPtrSet<Operation *, 8> seen;
    std::function<void(Value)> visit = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != block || !isa<ConcatOp, ReshapeOp>(def) ||
          !seen.insert(def).second)
        return;
      for (Value operand : def->getOperands())
        visit(operand);
      chain.push_back(def); // operands first
    };
    visit(start->getOperand(0));
    for (Operation *op : chain)
      hoistAfterOperands(block, op);
  }

  /// Each start right after its operand's definition, but after the start
  /// before it (program order of collectives is kept).
  void hoistStarts(Block *block, ArrayRef<Operation *> starts) {
    Operation *previous = nullptr;
    for (Operation *start : starts) {
      hoistPacking(block, start);
      Operation *def = ancestorIn(block, start->getOperand(0).getDefiningOp());
      Operation *after = def;
      if (previous && (!after || after->isBeforeInBlock(previous)))
        after = previous;
      if (after)
        start->moveAfter(after);
      else
        start->moveBefore(&block->front());
      previous = start;
    }
  }

  /// Each wait right before the first real use of its result. Ops that only
  /// unpack the result (a bucket's split and reshapes) move down with it.
  void sinkWaits(Block *block, ArrayRef<Operation *> starts) {
    for (Operation *start : starts) {
      Operation *wait = *start->getResult(0).user_begin();
      SmallVector<Operation *> unpack{wait};
      llvm::SmallPtrSet<Operation *, 8> inChain{wait};
      for (size_t i = 0; i < unpack.size(); ++i)
        for (Operation *user : unpack[i]->getUsers())
          if (isa<SplitOp, ReshapeOp>(user) && user->getBlock() == block &&
              inChain.insert(user).second)
            unpack.push_back(user);
      Operation *first = block->getTerminator();
      for (Operation *op : unpack)
        for (Operation *user : op->getUsers()) {
          Operation *u = ancestorIn(block, user);
          if (u && !inChain.contains(u) && u->isBeforeInBlock(first))
            first = u;
        }
      llvm::sort(unpack, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      for (Operation *op : unpack)
        op->moveBefore(first);
    }
  }

  /// Waits the oldest collectives before a start that would put more than
  /// the cap in flight.
  void capInflight(ArrayRef<Operation *> starts) {
    double cap = maxInflightMiB * 1024 * 1024, inflight = 0;
    SmallVector<Operation *> open;
    for (Operation *start : starts) {
      // Collectives whose wait already ran are no longer in flight.
      llvm::erase_if(open, [&](Operation *s) {
        Operation *wait = *s->getResult(0).user_begin();
        if (wait->isBeforeInBlock(start)) {
          inflight -= inflightBytes(s);
          return true;
        }
        return false;
      });
      while (!open.empty() && inflight + inflightBytes(start) > cap) {
        Operation *oldest = open.front();
        (*oldest->getResult(0).user_begin())->moveBefore(start);
        inflight -= inflightBytes(oldest);
        open.erase(open.begin());
      }
      open.push_back(start);
      inflight += inflightBytes(start);
    }
  }

  void report(ArrayRef<Operation *> starts, const MachineModel &machine) {
    for (Operation *start : starts) {
      Operation *wait = *start->getResult(0).user_begin();
      double compute = 0;
      for (Operation *op = start->getNextNode(); op && op != wait;
           op = op->getNextNode())
        compute += estimateComputeSeconds(op, machine);
      double comm = estimateCollectiveSeconds(start, machine);
      double hidden = comm > 0 ? 100 * std::min(1.0, compute / comm) : 100;
      start->emitRemark() << llvm::formatv(
          "collective ~{0:f3} ms overlaps ~{1:f3} ms of compute (hidden "
          "{2:f0}%)",
          comm * 1e3, compute * 1e3, hidden);
    }
  }
};

} // namespace
} // namespace mlir::loom
