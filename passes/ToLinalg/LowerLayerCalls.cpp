//===- LowerLayerCalls.cpp - Buffers for the outlined functions ----------===//
//
// The pipeline bufferizes without function boundaries: the entries take
// buffers already (--loom-lower-entry-points), and one-shot bufferization
// across calls would return each result in a buffer the callee allocates,
// which the caller's arena plan cannot place. Here each function of
// --loom-outline-layers takes buffers instead: its inputs read-only, and
// one buffer per result that the caller allocates (so that the arena plan
// places it with the caller's other temporaries) and the callee writes.
//
//===----------------------------------------------------------------------===//
#include "passes/ToLinalg/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "loom-lower-layer-calls"

namespace mlir::loom {
#define GEN_PASS_DEF_LOWERLAYERCALLSPASS
#include "passes/ToLinalg/Passes.h.inc"

namespace {

MemRefType bufferOf(Type tensor) {
  auto t = cast<RankedTensorType>(tensor);
  return MemRefType::get(t.getShape(), t.getElementType());
}

bool isOutlined(func::FuncOp fn) {
  return fn && fn->hasAttr(kOutlinedAttr) &&
         llvm::all_of(fn.getResultTypes(), llvm::IsaPred<RankedTensorType>);
}

/// Lets the op that computes `result` write it into `out` (a tensor of the
/// result's buffer) rather than into a temporary copied there at the end:
/// a destination-passing op whose destination is a `tensor.empty` (or a
/// `linalg.fill` of one, a matmul's zeros), its result returned as it is
/// or through reshapes (then it writes into the reshaped view of `out`).
/// What upstream's empty-tensor elimination does, for this one kind of
/// use: a layer's results are the activations its backward pass reads, and
/// copying them made the bench GPT's step 6 % slower.
void writeInPlace(Value result, Value out) {
  SmallVector<Operation *> reshapes; // from the result back
  Value v = result;
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp())) {
    reshapes.push_back(v.getDefiningOp());
    v = v.getDefiningOp()->getOperand(0);
  }
  auto op = v.getDefiningOp<DestinationStyleOpInterface>();
  if (!op)
    return;
  OpOperand *init = op.getTiedOpOperand(cast<OpResult>(v));
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  Value fresh = fill ? fill.getDpsInits()[0] : init->get();
  if (!fresh.getDefiningOp<tensor::EmptyOp>())
    return;
  // The view of `out` that the op writes, each reshape undone.
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value view = out;
  for (Operation *reshape : reshapes) {
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
      view = tensor::ExpandShapeOp::create(b, loc, collapse.getSrcType(), view,
                                           collapse.getReassociationIndices());
    else
      view = tensor::CollapseShapeOp::create(
          b, loc, cast<tensor::ExpandShapeOp>(reshape).getSrcType(), view,
          cast<tensor::ExpandShapeOp>(reshape).getReassociationIndices());
  }
  // A tensor.empty or fill may be shared (CSE): the op gets its own.
  if (fill)
    view = linalg::FillOp::create(b, loc, fill.value(), view).getResult(0);
  init->set(view);
}

/// `fn(tensors) -> tensors` becomes `fn(memrefs, result memrefs)` (its
/// buffer arguments, of the writes it holds, stay as they are).
void lowerFunction(func::FuncOp fn) {
  Block &body = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location loc = fn.getLoc();
  for (BlockArgument arg : body.getArguments()) {
    Type tensor = arg.getType();
    if (!isa<RankedTensorType>(tensor))
      continue;
    arg.setType(bufferOf(tensor));
    auto read = bufferization::ToTensorOp::create(b, loc, tensor, arg,
                                                  /*restrict=*/true);
    arg.replaceAllUsesExcept(read, read);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::SmallPtrSet<Value, 8> placed;
  for (Value v : ret.getOperands()) {
    BlockArgument out = body.addArgument(bufferOf(v.getType()), loc);
    if (placed.insert(v).second) {
      auto write = bufferization::ToTensorOp::create(
          b, loc, v.getType(), out, /*restrict=*/true, /*writable=*/true);
      writeInPlace(v, write);
      if (write->use_empty())
        write->erase();
    }
    OpBuilder atEnd(ret);
    bufferization::MaterializeInDestinationOp::create(
        atEnd, loc, TypeRange{}, v, out, /*restrict=*/true, /*writable=*/true);
  }
  ret->setOperands({});
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), body.getArgumentTypes(), {}));
}

/// The call passes its tensors' buffers and a new buffer per result.
void lowerCall(func::CallOp call) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  SmallVector<Value> operands;
  for (Value v : call.getOperands())
    operands.push_back(isa<RankedTensorType>(v.getType())
                           ? bufferization::ToBufferOp::create(
                                 b, loc, bufferOf(v.getType()), v,
                                 /*read_only=*/true)
                           : v);
  SmallVector<Value> outs;
  for (Type t : call.getResultTypes())
    outs.push_back(memref::AllocOp::create(b, loc, bufferOf(t)));
  operands.append(outs);
  auto lowered =
      func::CallOp::create(b, loc, call.getCallee(), TypeRange{}, operands);
  lowered.setNoInline(true);
  for (auto [result, out] : llvm::zip(call.getResults(), outs))
    result.replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, loc, result.getType(), out, /*restrict=*/true, /*writable=*/true));
  call.erase();
}

struct LowerLayerCallsPass
    : impl::LowerLayerCallsPassBase<LowerLayerCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (isOutlined(symbols.lookup<func::FuncOp>(call.getCallee())))
        calls.push_back(call);
    });
    for (func::CallOp call : calls)
      lowerCall(call);
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && isOutlined(fn))
        lowerFunction(fn);
  }
};

} // namespace
} // namespace mlir::loom
