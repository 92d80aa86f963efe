//===- LossFunction.cpp - The model's loss function -----------------------===//
#include "passes/Train/LossFunction.h"

#include "dialects/Loom/IR/LoomDialect.h"

using namespace mlir;

FailureOr<func::FuncOp> mlir::loom::lookupLossFunction(ModuleOp module,
                                                       StringRef name) {
  auto loss = module.lookupSymbol<func::FuncOp>(name);
  if (!loss)
    return module.emitError("no function @")
           << name << " to train: a model defines func.func @" << name
           << "(inputs...) -> tensor<f32>";
  if (!llvm::hasSingleElement(loss.getBody()))
    return loss.emitError("@") << name << " must have one block";
  auto results = loss.getFunctionType().getResults();
  auto t = results.size() == 1 ? dyn_cast<RankedTensorType>(results[0])
                               : RankedTensorType();
  if (!t || t.getRank() != 0 || !isa<FloatType>(t.getElementType()))
    return loss.emitError("@")
           << name << " must return exactly one scalar float tensor (the loss)";
  return loss;
}

void mlir::loom::markLossEntry(func::FuncOp loss) {
  Builder b(loss.getContext());
  loss->setAttr(kEntryAttr, b.getStringAttr("loss"));
  loss.setResultAttr(0, kOutputAttr, b.getStringAttr("loss"));
}

func::FuncOp mlir::loom::createTrainStep(OpBuilder &b, func::FuncOp from,
                                         RankedTensorType lossType) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(from);
  SmallVector<Type> inputs{RankedTensorType::get({}, b.getI64Type())};
  llvm::append_range(inputs, from.getArgumentTypes());
  auto fn = func::FuncOp::create(
      b, from.getLoc(), "train_step",
      FunctionType::get(ctx, inputs, {lossType, lossType, lossType}));
  fn->setAttr(kEntryAttr, b.getStringAttr("train_step"));
  fn.setArgAttr(0, kInputAttr, b.getStringAttr("step"));
  static constexpr StringLiteral outputs[] = {"loss", "lr", "grad_norm"};
  for (auto [i, name] : llvm::enumerate(outputs))
    fn.setResultAttr(i, kOutputAttr, b.getStringAttr(name));
  for (unsigned i = 0; i < from.getNumArguments(); ++i)
    if (auto name = from.getArgAttr(i, kInputAttr))
      fn.setArgAttr(i + 1, kInputAttr, name);
  return fn;
}
