//===- ZOOffload.cpp - The zeroth-order step with offloaded parameters ----===//
//
// ZOOffload.h describes the schedule. The deferred update is MeZO's update
// of the previous step, theta <- (1 - lr wd) theta - lr g z, built with the
// same loom.perturb as the step without offloading builds it at its end
// (the pending flag multiplies its coefficients: 1 keeps them exactly, 0
// makes it the identity), so both schedules compute the same values.
//
//===----------------------------------------------------------------------===//
#include "passes/Train/ZOOffload.h"

#include "dialects/Comm/IR/CommOps.h"
#include "dialects/Loom/IR/LoomBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"

#include <deque>

namespace mlir::loom {

namespace {

int64_t bytesOf(ParamOp p) {
  RankedTensorType t = p.getTensorType();
  return t.getNumElements() * t.getElementTypeBitWidth() / 8;
}

/// Element `i` of the 1-d tensor `t`, as a scalar tensor.
Value elementOf(OpBuilder &b, Location loc, Value t, int64_t i) {
  Type et = cast<RankedTensorType>(t.getType()).getElementType();
  Value at = arith::ConstantIndexOp::create(b, loc, i);
  Value v = tensor::ExtractOp::create(b, loc, t, ValueRange{at});
  return tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, et),
                                        ValueRange{v});
}

Value readParam(OpBuilder &b, Location loc, ParamOp p) {
  return GetParamOp::create(b, loc, p.getType(),
                            FlatSymbolRefAttr::get(p.getSymNameAttr()));
}

comm::TransferStartOp startTransfer(OpBuilder &b, Location loc, Value from,
                                    Value into, StringRef direction) {
  return comm::TransferStartOp::create(
      b, loc, comm::TokenType::get(b.getContext()), from.getType(), from, into,
      b.getStringAttr(direction));
}

/// A fresh device copy of `p`, in flight.
comm::TransferStartOp startUpload(OpBuilder &b, Location loc, ParamOp p) {
  RankedTensorType t = p.getTensorType();
  Value empty =
      tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
  return startTransfer(b, loc, readParam(b, loc, p), empty, "upload");
}

Value waitFor(OpBuilder &b, Location loc, comm::TransferStartOp start) {
  return comm::WaitOp::create(b, loc, start.getInflight().getType(),
                              start.getToken(), start.getInflight());
}

/// Moves parameters between host and device and applies the deferred
/// update, for one entry being built.
struct Mover {
  OpBuilder &b;
  Location loc;
  const ZOOffloadContext &ctx;
  /// The step whose direction the pending update moves along.
  Value updateStep;
  /// The pending update's coefficients: one per direction, `coefs[r]`
  /// (-lr g_r / N, or 0), and `a` by weight decay (1 - lr wd, or 1).
  SmallVector<Value> coefs;
  Value decay[2]; // by no_weight_decay
  Value flag, one;

  Mover(OpBuilder &b, Location loc, const ZOOffloadContext &ctx,
        Value updateStep, Type et)
      : b(b), loc(loc), ctx(ctx), updateStep(updateStep) {
    LoomBuilder lb{b, loc};
    int64_t n = ctx.directions;
    Value pending =
        GetStateOp::create(b, loc, pendingType(ctx, et), kZOPendingState);
    flag = elementOf(b, loc, pending, n);
    one = lb.scalar(et, 1.0);
    for (int64_t r = 0; r < n; ++r)
      coefs.push_back(lb.mul(
          lb.scale(elementOf(b, loc, pending, r), -ctx.lr / double(n)), flag));
  }

  /// [g_0, .., g_N-1, flag].
  static RankedTensorType pendingType(const ZOOffloadContext &ctx, Type et) {
    return RankedTensorType::get({ctx.directions + 1}, et);
  }

  Value decayOf(ParamOp p) {
    double wd = p.getNoWeightDecay() ? 0.0 : ctx.weightDecay;
    Value &a = decay[p.getNoWeightDecay()];
    if (!a) {
      LoomBuilder lb{b, loc};
      Type et = p.getTensorType().getElementType();
      a = lb.add(lb.mul(flag, lb.scalar(et, 1.0 - ctx.lr * wd)),
                 lb.sub(one, flag));
    }
    return a;
  }

  /// The uploaded `x` with the pending update applied, and the transfer
  /// that writes it back.
  std::pair<Value, comm::TransferStartOp> update(ParamOp p, Value x) {
    // The decay first, then each direction in rank order (directions=rank),
    // as the step without offloading applies them.
    for (auto [r, coef] : llvm::enumerate(coefs))
      x = PerturbOp::create(b, loc, x, updateStep, r ? one : decayOf(p), coef,
                            ctx.seed, ctx.stream.lookup(p.getSymNameAttr()), r,
                            Value());
    return {x, startTransfer(b, loc, x, readParam(b, loc, p), "offload")};
  }

  void writeBack(ParamOp p, comm::TransferStartOp offload) {
    SetParamOp::create(b, loc, FlatSymbolRefAttr::get(p.getSymNameAttr()),
                       waitFor(b, loc, offload));
  }

  /// Upload, update and write back at once (no compute to overlap).
  void moveWhole(ParamOp p) {
    Value x = waitFor(b, loc, startUpload(b, loc, p));
    writeBack(p, update(p, x).second);
  }
};

/// `step - 1`, the step whose update is pending.
Value previousStep(OpBuilder &b, Location loc, Value step) {
  Value s = tensor::ExtractOp::create(b, loc, step, ValueRange{});
  Value prev = arith::SubIOp::create(
      b, loc, s, arith::ConstantIntOp::create(b, loc, 1, 64));
  return tensor::FromElementsOp::create(b, loc, step.getType(),
                                        ValueRange{prev});
}

/// Where each parameter is first and last read among the top-level ops of
/// @loss's body.
struct Uses {
  llvm::MapVector<StringAttr, std::pair<unsigned, unsigned>> span;
  /// The parameters each op reads first, in order.
  llvm::DenseMap<unsigned, SmallVector<StringAttr>> firstAt, lastAt;

  explicit Uses(Block &src) {
    for (auto [i, op] : llvm::enumerate(src.without_terminator()))
      op.walk([&, i = i](Operation *inner) {
        for (Value v : inner->getOperands())
          if (auto get = v.getDefiningOp<GetParamOp>()) {
            StringAttr p = get.getParamAttr().getAttr();
            auto [it, fresh] = span.try_emplace(p, i, i);
            if (fresh)
              firstAt[i].push_back(p);
            it->second.second = i;
          }
      });
    for (auto &[p, s] : span)
      lastAt[s.second].push_back(p);
  }
};

/// Uploads in the order of first use, at most `budget` bytes of them waiting
/// for their first use at any time (always at least one).
struct Prefetcher {
  OpBuilder &b;
  Location loc;
  int64_t budget;
  llvm::DenseMap<StringAttr, ParamOp> byName;
  SmallVector<StringAttr> order;
  llvm::DenseMap<StringAttr, comm::TransferStartOp> uploads;
  size_t next = 0;
  int64_t ahead = 0;

  Prefetcher(OpBuilder &b, Location loc, const ZOOffloadContext &ctx,
             const Uses &uses)
      : b(b), loc(loc),
        budget(ctx.prefetchBytes > 0 ? ctx.prefetchBytes
                                     : defaultPrefetchBytes(ctx.params)) {
    for (ParamOp p : ctx.params)
      byName[p.getSymNameAttr()] = p;
    for (auto &entry : uses.span)
      order.push_back(entry.first);
    issue();
  }

  void issue() {
    while (next < order.size()) {
      int64_t bytes = bytesOf(byName[order[next]]);
      if (ahead > 0 && ahead + bytes > budget)
        return;
      uploads[order[next]] = startUpload(b, loc, byName[order[next]]);
      ahead += bytes;
      ++next;
    }
  }

  /// The device copy of `name`, waited for; more uploads start behind it.
  Value arrive(StringAttr name) {
    Value x = waitFor(b, loc, uploads[name]);
    ahead -= bytesOf(byName[name]);
    return x;
  }
};

} // namespace

int64_t defaultPrefetchBytes(ArrayRef<ParamOp> params) {
  llvm::StringMap<int64_t> groups;
  int64_t most = 0;
  for (ParamOp p : params) {
    SmallVector<StringRef> parts;
    p.getSymName().split(parts, '.');
    std::string key;
    for (StringRef part : parts) {
      key += part.str() + ".";
      if (llvm::all_of(part, llvm::isDigit) && !part.empty())
        break;
    }
    most = std::max(most, groups[key] += bytesOf(p));
  }
  return most;
}

SmallVector<Value> buildOffloadedForwards(OpBuilder &b,
                                          const ZOOffloadContext &ctx,
                                          Block *body, ValueRange scales) {
  Location loc = ctx.loss.getLoc();
  Block &src = ctx.loss.getBody().front();
  Type et =
      cast<RankedTensorType>(ctx.loss.getResultTypes()[0]).getElementType();
  Value step = body->getArgument(0);
  Mover mover(b, loc, ctx, previousStep(b, loc, step), et);
  Uses uses(src);
  Prefetcher prefetch(b, loc, ctx, uses);
  llvm::DenseMap<StringAttr, ParamOp> &byName = prefetch.byName;
  // Write-backs in flight: half as much again (measured on a 24-layer GPT,
  // bench/zo_offload.py: waiting for each one at its parameter's last use
  // made a step that moves as many bytes as it computes 1.5x slower).
  int64_t offloadBudget = prefetch.budget / 2;

  // The parameter as the step's forward passes see it (updated), and the
  // transfer writing it back.
  llvm::DenseMap<StringAttr, Value> current;
  llvm::DenseMap<StringAttr, comm::TransferStartOp> offloads;
  auto arrive = [&](StringAttr name) {
    Value x = prefetch.arrive(name);
    std::tie(current[name], offloads[name]) = mover.update(byName[name], x);
    prefetch.issue();
  };

  std::deque<StringAttr> writing;
  int64_t writingBytes = 0;
  auto retire = [&] {
    StringAttr name = writing.front();
    writing.pop_front();
    writingBytes -= bytesOf(byName[name]);
    mover.writeBack(byName[name], offloads[name]);
  };

  // The forward passes, op by op: each reads its own perturbed copy of a
  // parameter, made just before the op that reads it. An op reading a
  // parameter an earlier op read (the GPT's tied embedding, in its head)
  // makes the copy again rather than keeping one alive in between.
  SmallVector<IRMapping, 2> maps(scales.size());
  for (IRMapping &map : maps)
    for (auto [from, to] :
         llvm::zip(src.getArguments(), body->getArguments().drop_front()))
      map.map(from, to);
  for (auto [i, op] : llvm::enumerate(src.without_terminator())) {
    if (isa<GetParamOp>(op))
      continue;
    for (StringAttr name : uses.firstAt.lookup(i))
      arrive(name);
    for (auto [map, scale] : llvm::zip(maps, scales)) {
      SmallPtrSet<Value, 4> made;
      op.walk([&](Operation *inner) {
        for (Value v : inner->getOperands()) {
          auto get = v.getDefiningOp<GetParamOp>();
          if (!get || !made.insert(v).second)
            continue;
          StringAttr name = get.getParamAttr().getAttr();
          auto perturbed = PerturbOp::create(
              b, loc, current[name], step, mover.one, scale, ctx.seed,
              ctx.stream.lookup(name), 0, ctx.ownDirection);
          if (uses.span.lookup(name).first != i)
            perturbed->setAttr(kRematAttr, b.getI64IntegerAttr(i));
          map.map(v, perturbed);
        }
      });
      b.clone(op, map);
    }
    // A write-back is waited for once its parameter's compute is done and
    // more than `offloadBudget` bytes of write-backs would be in flight
    // otherwise: the forward passes do not stop for each one.
    for (StringAttr name : uses.lastAt.lookup(i)) {
      writing.push_back(name);
      writingBytes += bytesOf(byName[name]);
      while (writingBytes > offloadBudget)
        retire();
    }
  }
  while (!writing.empty())
    retire();
  // A parameter no forward pass reads still takes its update.
  for (ParamOp p : ctx.params)
    if (!uses.span.count(p.getSymNameAttr()))
      mover.moveWhole(p);
  Value result = src.getTerminator()->getOperand(0);
  return llvm::map_to_vector(
      maps, [&](IRMapping &map) { return map.lookup(result); });
}

void offloadLossEntry(OpBuilder &b, const ZOOffloadContext &ctx) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = ctx.loss.getLoc();
  Block &src = ctx.loss.getBody().front();
  auto *body = new Block();
  body->addArguments(src.getArgumentTypes(),
                     SmallVector<Location>(src.getNumArguments(), loc));
  b.setInsertionPointToStart(body);
  Uses uses(src);
  Prefetcher prefetch(b, loc, ctx, uses);
  IRMapping map;
  map.map(src.getArguments(), body->getArguments());
  llvm::DenseMap<StringAttr, Value> device;
  for (auto [i, op] : llvm::enumerate(src)) {
    if (isa<GetParamOp>(op))
      continue;
    for (StringAttr name : uses.firstAt.lookup(i)) {
      device[name] = prefetch.arrive(name);
      prefetch.issue();
    }
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (auto get = v.getDefiningOp<GetParamOp>())
          map.map(v, device.lookup(get.getParamAttr().getAttr()));
    });
    b.clone(op, map);
  }
  ctx.loss.getBody().front().erase();
  ctx.loss.getBody().push_back(body);
}

void deferUpdate(OpBuilder &b, Location loc, ValueRange gs) {
  Type et = cast<RankedTensorType>(gs[0].getType()).getElementType();
  SmallVector<Value> elements;
  for (Value g : gs)
    elements.push_back(tensor::ExtractOp::create(b, loc, g, ValueRange{}));
  elements.push_back(
      arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 1.0)));
  Value pending = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({int64_t(elements.size())}, et), elements);
  SetStateOp::create(b, loc, kZOPendingState, pending);
}

void buildFlushEntry(OpBuilder &b, const ZOOffloadContext &ctx) {
  OpBuilder::InsertionGuard guard(b);
  MLIRContext *mctx = b.getContext();
  Location loc = ctx.loss.getLoc();
  b.setInsertionPointToEnd(ctx.module.getBody());
  auto stepType = RankedTensorType::get({}, b.getI64Type());
  auto fn = func::FuncOp::create(b, loc, kZOFlushEntry,
                                 FunctionType::get(mctx, {stepType}, {}));
  fn->setAttr(kEntryAttr, b.getStringAttr(kZOFlushEntry));
  fn.setArgAttr(0, kInputAttr, b.getStringAttr("step"));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  Type et =
      cast<RankedTensorType>(ctx.loss.getResultTypes()[0]).getElementType();
  // Called after step %step: its update is the pending one.
  Mover mover(b, loc, ctx, body->getArgument(0), et);
  for (ParamOp p : ctx.params)
    mover.moveWhole(p);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 0.0));
  Value cleared = tensor::FromElementsOp::create(
      b, loc, Mover::pendingType(ctx, et),
      SmallVector<Value>(ctx.directions + 1, zero));
  SetStateOp::create(b, loc, kZOPendingState, cleared);
  func::ReturnOp::create(b, loc);
}

} // namespace mlir::loom
