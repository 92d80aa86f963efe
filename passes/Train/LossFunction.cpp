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
