//===- Autodiff.cpp - Reverse-mode differentiation of @loss ---------------===//
#include "passes/Train/Passes.h"

#include "dialects/Loom/IR/LoomBuilder.h"
#include "passes/Train/LossFunction.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "loom-autodiff"

namespace mlir::loom {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Train/Passes.h.inc"

namespace {

bool isDifferentiable(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// The gradient of the operand of a comm op in the forward pass, from its
/// result's gradient `g`, in Megatron-LM's conventions: a value every rank
/// of the group holds alike has the same gradient on every rank.
FailureOr<Value> commGradient(OpBuilder &b, Operation *op, Value g) {
  Location loc = op->getLoc();
  Type type = op->getOperand(0).getType();
  // Every rank read this rank's part: the sum over the ranks of their
  // gradients of it.
  if (auto gather = dyn_cast<comm::AllGatherOp>(op))
    return Value(comm::ReduceScatterOp::create(
        b, loc, type, g, gather.getMesh(), gather.getAxes(),
        comm::ReduceKind::sum, gather.getDim()));
  // The other way round: a rank's part (of a sum, or of a value every rank
  // holds) has the gradient of its part of the whole, so the whole's
  // gradient on every rank is the parts' gradients put together.
  auto gatherBack = [&](auto partOp) {
    return Value(comm::AllGatherOp::create(b, loc, type, g, partOp.getMesh(),
                                           partOp.getAxes(), partOp.getDim()));
  };
  if (auto shard = dyn_cast<comm::ShardOp>(op))
    return gatherBack(shard);
  // Every rank computed alike from the whole: its part of the gradient.
  if (auto unshard = dyn_cast<comm::UnshardOp>(op))
    return Value(comm::ShardOp::create(b, loc, type, g, unshard.getMesh(),
                                       unshard.getAxes(), unshard.getDim()));
  if (auto scatter = dyn_cast<comm::ReduceScatterOp>(op);
      scatter && scatter.getReduction() == comm::ReduceKind::sum)
    return gatherBack(scatter);
  if (auto fanOut = dyn_cast<comm::FanOutOp>(op))
    return Value(comm::AllReduceOp::create(b, loc, type, g, fanOut.getMesh(),
                                           fanOut.getAxes(),
                                           comm::ReduceKind::sum));
  // The sum is the same on every rank, and so is the loss computed from it:
  // each rank's part has the sum's gradient.
  auto reduce = dyn_cast<comm::AllReduceOp>(op);
  if (reduce && reduce.getReduction() == comm::ReduceKind::sum &&
      !reduce.getCompressSlot())
    return g;
  return op->emitError("cannot differentiate '")
         << op->getName()
         << "' here: before autodiff only comm.all_gather, comm.fan_out, "
            "comm.shard, comm.unshard, comm.all_reduce sum, "
            "comm.reduce_scatter sum, "
            "comm.send and comm.recv are differentiated";
}

/// The gradients of a pipeline transfer go the other way (GPipe's backward
/// pass): a `comm.send`'s operand receives its gradient from the peer it sent
/// to, and a `comm.recv` sends its result's gradient (zeros when nothing used
/// it) back to the peer it came from. The reverse walk issues them in the
/// reverse order of the forward transfers, as the peer's does.
template <typename Accumulate>
LogicalResult
transferGradient(OpBuilder &b, Operation *op, ArrayRef<Value> resultGrads,
                 llvm::DenseMap<Value, Value> &grads, Accumulate accumulate) {
  LoomBuilder lb{b, op->getLoc()};
  if (auto send = dyn_cast<comm::SendOp>(op)) {
    if (!isDifferentiable(send.getInput()))
      return success();
    Value g = comm::RecvOp::create(b, op->getLoc(), send.getInput().getType(),
                                   send.getMeshAttr(), send.getAxesAttr(),
                                   send.getPeerAttr());
    accumulate(grads[send.getInput()], g);
    return success();
  }
  auto recv = cast<comm::RecvOp>(op);
  if (!isDifferentiable(recv.getResult()))
    return success();
  Value g = resultGrads[0] ? resultGrads[0] : lb.zerosLike(recv.getType());
  comm::SendOp::create(b, op->getLoc(), g, recv.getMeshAttr(),
                       recv.getAxesAttr(), recv.getPeerAttr());
  return success();
}

struct AutodiffPass : impl::AutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<func::FuncOp> found = lookupLossFunction(module, lossFunction);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp loss = *found;
    if (module.lookupSymbol("loss_and_grad")) {
      loss.emitError("the module already has a @loss_and_grad function");
      return signalPassFailure();
    }

    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(loss);
    auto grad = cast<func::FuncOp>(b.clone(*loss));
    grad.setSymName("loss_and_grad");
    markLossEntry(loss);
    grad->setAttr(kEntryAttr, b.getStringAttr("loss_and_grad"));
    if (failed(buildBackward(module, grad)))
      return signalPassFailure();
  }

  LogicalResult buildBackward(ModuleOp module, func::FuncOp fn) {
    Block &body = fn.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value lossValue = ret.getOperand(0);
    OpBuilder b(ret);
    LoomBuilder lb{b, fn.getLoc()};

    llvm::DenseMap<Value, Value> grads;
    llvm::MapVector<StringAttr, Value> paramGrads;
    auto accumulate = [&](Value &slot, Value g) {
      slot = slot ? lb.add(slot, g) : g;
    };
    grads[lossValue] = lb.scalar(
        cast<RankedTensorType>(lossValue.getType()).getElementType(), 1.0);

    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);
    size_t before = body.getOperations().size();

    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value r : op->getResults()) {
        Value g = grads.lookup(r);
        resultGrads.push_back(g);
        any |= bool(g);
      }
      // A transfer to or from another pipeline stage is answered whether or
      // not a gradient reached it here: the peer waits for one.
      if (isa<comm::SendOp, comm::RecvOp>(op)) {
        b.setInsertionPoint(ret);
        if (failed(transferGradient(b, op, resultGrads, grads, accumulate)))
          return failure();
        continue;
      }
      if (!any)
        continue;
      if (auto get = dyn_cast<GetParamOp>(op)) {
        accumulate(paramGrads[get.getParamAttr().getAttr()], resultGrads[0]);
        continue;
      }
      if (isa<comm::CommDialect>(op->getDialect())) {
        // A collective made for nothing would still run: none for an
        // integer operand.
        Value input = op->getOperand(0);
        if (!isDifferentiable(input))
          continue;
        b.setInsertionPoint(ret);
        FailureOr<Value> g = commGradient(b, op, resultGrads[0]);
        if (failed(g))
          return failure();
        accumulate(grads[input], *g);
        continue;
      }
      // Constants (and other operand-free ops) end the backward walk.
      if (op->getNumOperands() == 0)
        continue;
      auto vjp = dyn_cast<VJPOpInterface>(op);
      if (!vjp)
        return op->emitError("cannot differentiate '")
               << op->getName() << "': it does not implement VJPOpInterface";
      // Give ops that need every result gradient explicit zeros.
      b.setInsertionPoint(ret);
      SmallVector<Value> operandGrads;
      if (failed(vjp.buildVJP(b, resultGrads, operandGrads)))
        return op->emitError("failed to build the gradient of this op");
      for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!g || !isDifferentiable(operand))
          continue;
        if (g.getType() != operand.getType())
          return op->emitError("gradient rule produced type ")
                 << g.getType() << " for an operand of type "
                 << operand.getType();
        accumulate(grads[operand], g);
      }
    }

    // Return the loss and one gradient per parameter, in declaration order.
    SmallVector<Value> results{lossValue};
    SmallVector<Attribute> gradOf;
    for (auto param : module.getOps<ParamOp>()) {
      Value g = paramGrads.lookup(param.getSymNameAttr());
      results.push_back(g ? g : lb.zerosLike(param.getType()));
      gradOf.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    fn.setType(FunctionType::get(fn.getContext(),
                                 fn.getFunctionType().getInputs(),
                                 ValueRange(results).getTypes()));
    fn.setResultAttr(0, kOutputAttr, b.getStringAttr("loss"));
    for (auto [i, attr] : llvm::enumerate(gradOf)) {
      fn.setResultAttr(i + 1, kGradOfAttr, attr);
      fn.setResultAttr(
          i + 1, kOutputAttr,
          b.getStringAttr("grad:" + cast<FlatSymbolRefAttr>(attr).getValue()));
    }
    numBackwardOps += body.getOperations().size() - before;
    return success();
  }
};

} // namespace
} // namespace mlir::loom
