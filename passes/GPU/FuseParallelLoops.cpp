//===- FuseParallelLoops.cpp - Independent loop nests in one kernel -------===//
//
// A training step on a GPU is a thousand small kernels, and each launch
// costs the host a few microseconds whatever its size: optimizer updates
// of every parameter, norms, bias gradients that do not depend on each
// other. Consecutive loop nests that touch disjoint buffers become one loop
// (one kernel), each nest taking its own range of blocks, as long as the
// kernel's parameters (the values it uses from outside) stay within PTX's
// bound.
//
//===----------------------------------------------------------------------===//
#include "passes/Bufferize/BufferRoots.h"
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "loom-fuse-parallel-loops"

namespace mlir::loom {
#define GEN_PASS_DEF_FUSEPARALLELLOOPSPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// The trip count of a loop the pass can merge: one dimension from 0 by 1
/// to a constant, no reductions, outermost.
std::optional<int64_t> mergeableSize(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || !loop.getInitVals().empty() ||
      loop->getParentOfType<scf::ParallelOp>())
    return std::nullopt;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]),
                         ub = getConstantIntValue(loop.getUpperBound()[0]),
                         step = getConstantIntValue(loop.getStep()[0]);
  if (!lb || *lb != 0 || !step || *step != 1 || !ub || *ub <= 0)
    return std::nullopt;
  return *ub;
}

/// Whether two nests may run at the same time: neither writes a buffer the
/// other reads or writes.
bool independent(const BufferAccesses &a, const BufferAccesses &b) {
  for (Value written : a.writes)
    if (b.reads.contains(written) || b.writes.contains(written))
      return false;
  return llvm::none_of(a.reads,
                       [&](Value read) { return b.writes.contains(read); });
}

/// Whether the nests before `op` may move after it: it touches no memory
/// (views, index arithmetic) or only allocates.
bool transparent(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::all_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect());
  });
}

struct FuseParallelLoopsPass
    : impl::FuseParallelLoopsPassBase<FuseParallelLoopsPass> {
  using Base::Base;

  struct Member {
    scf::ParallelOp loop;
    int64_t size;
  };

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      fuseIn(*block);
  }

  /// A run of members being collected, with the values from outside they
  /// use (the merged kernel's parameters).
  struct Group {
    SmallVector<Member> members;
    BufferAccesses touched;
    llvm::SetVector<Value> captured;
  };

  /// The values from outside `loop` that it uses, but for constants (they
  /// are sunk into the kernel, not passed to it).
  static llvm::SetVector<Value> capturedBy(scf::ParallelOp loop) {
    llvm::SetVector<Value> used, captured;
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>())
        captured.insert(v);
    }
    return captured;
  }

  /// Whether `group` with `captured` added stays within the kernel's
  /// parameter bound.
  bool fits(const Group &group, const llvm::SetVector<Value> &captured) {
    int64_t count = group.captured.size();
    for (Value v : captured)
      count += !group.captured.contains(v);
    return count <= maxKernelArguments;
  }

  void fuseIn(Block &block) {
    Group group;
    auto flush = [&] {
      merge(group.members);
      group = Group();
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        std::optional<int64_t> size = mergeableSize(loop);
        FailureOr<BufferAccesses> accesses = failure();
        if (size)
          accesses = collectAccesses(loop);
        if (succeeded(accesses)) {
          llvm::SetVector<Value> captured = capturedBy(loop);
          if (!group.members.empty() &&
              !independent(group.touched, *accesses)) {
            flush();
          } else if (!group.members.empty() && !fits(group, captured)) {
            ++numCut;
            flush();
          }
          group.members.push_back({loop, *size});
          group.touched.reads.insert_range(accesses->reads);
          group.touched.writes.insert_range(accesses->writes);
          group.captured.insert_range(captured);
          continue;
        }
      }
      if (!group.members.empty() && transparent(&op))
        continue;
      flush();
    }
    flush();
  }

  /// One loop at the last member's place; member k runs on the iterations
  /// [start_k, start_k + size_k), where start_k is a multiple of the block
  /// size, so every block runs one member (no divergence in a warp).
  void merge(MutableArrayRef<Member> group) {
    if (group.size() < 2)
      return;
    scf::ParallelOp last = group.back().loop;
    OpBuilder b(last);
    Location loc = last.getLoc();
    SmallVector<int64_t> starts;
    int64_t total = 0;
    for (const Member &member : group) {
      starts.push_back(total);
      total += llvm::alignTo(member.size, blockSize);
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value end = arith::ConstantIndexOp::create(b, loc, total);
    scf::ParallelOp::create(
        b, loc, ValueRange{zero}, ValueRange{end}, ValueRange{one},
        [&](OpBuilder &nb, Location l, ValueRange ivs) {
          dispatch(nb, l, ivs[0], group, starts, 0, group.size());
        });
    for (Member &member : group)
      member.loop.erase();
    numFused += group.size();
    ++numMerged;
  }

  /// Runs the member of [lo, hi) whose range holds `iv`, found by halving:
  /// a thread compares log2(members) times, not once per member (a
  /// 12-layer GPT's optimizer kernel merges hundreds of nests, and testing
  /// each range in turn cost every thread more than its own work).
  static void dispatch(OpBuilder &b, Location loc, Value iv,
                       ArrayRef<Member> group, ArrayRef<int64_t> starts,
                       size_t lo, size_t hi) {
    if (hi - lo == 1) {
      runMember(b, loc, iv, group[lo], starts[lo]);
      return;
    }
    size_t mid = lo + (hi - lo) / 2;
    Value first = arith::ConstantIndexOp::create(b, loc, starts[mid]);
    Value below =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iv, first);
    auto branch = scf::IfOp::create(b, loc, below, /*withElseRegion=*/true);
    OpBuilder thenB = OpBuilder::atBlockTerminator(branch.thenBlock());
    dispatch(thenB, loc, iv, group, starts, lo, mid);
    OpBuilder elseB = OpBuilder::atBlockTerminator(branch.elseBlock());
    dispatch(elseB, loc, iv, group, starts, mid, hi);
  }

  /// `member`'s body on iteration iv - start, for iv below start + size
  /// (the iterations up to the next multiple of the block size do nothing).
  static void runMember(OpBuilder &b, Location loc, Value iv,
                        const Member &member, int64_t start) {
    Value past = arith::ConstantIndexOp::create(b, loc, start + member.size);
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iv, past);
    auto branch = scf::IfOp::create(b, loc, inside);
    OpBuilder inner = OpBuilder::atBlockTerminator(branch.thenBlock());
    IRMapping map;
    Value local = iv;
    if (start != 0)
      local = arith::SubIOp::create(
          inner, loc, iv, arith::ConstantIndexOp::create(inner, loc, start));
    scf::ParallelOp loop = member.loop;
    map.map(loop.getInductionVars()[0], local);
    for (Operation &op : loop.getBody()->without_terminator())
      inner.clone(op, map);
  }
};

} // namespace
} // namespace mlir::loom
