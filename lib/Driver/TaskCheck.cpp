//===- TaskCheck.cpp - The loom.task attribute against the model ----------===//
//
// A mutation campaign (test/robustness) set a classifier's task to 2^62
// classes while its logits kept 4: the artifact compiled, and loom-run
// crashed drawing labels for 2^62 classes; with 5 classes it would have
// read a logit past each row's end.
//
//===----------------------------------------------------------------------===//
#include "TaskCheck.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::loom;

LogicalResult mlir::loom::driver::verifyTask(ModuleOp module) {
  auto task = module->getAttrOfType<DictionaryAttr>("loom.task");
  if (!task)
    return success();
  auto kind = task.getAs<StringAttr>("kind");
  if (!kind || (kind.getValue() != "classify" && kind.getValue() != "lm"))
    return success();
  const bool classify = kind.getValue() == "classify";
  StringRef key = classify ? "classes" : "vocab";
  StringRef input = classify ? "y" : "targets";
  auto count = task.getAs<IntegerAttr>(key);
  if (!count)
    return emitError(module.getLoc())
           << "loom.task of kind \"" << kind.getValue()
           << "\" needs an integer '" << key << "'";
  int64_t n = count.getValue().getSExtValue();
  if (n < 1 || n > INT32_MAX)
    return emitError(module.getLoc())
           << "loom.task: '" << key << "' must be between 1 and " << INT32_MAX
           << " (labels are i32), got " << n;

  auto loss = module.lookupSymbol<func::FuncOp>("loss");
  if (!loss || loss.isExternal())
    return success();
  WalkResult walk = loss.walk([&](CrossEntropyOp op) {
    auto arg = dyn_cast<BlockArgument>(op.getTargets());
    if (!arg || arg.getOwner() != &loss.getBody().front())
      return WalkResult::advance();
    auto name =
        loss.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kInputAttr);
    if (!name || name.getValue() != input)
      return WalkResult::advance();
    int64_t classes =
        cast<RankedTensorType>(op.getLogits().getType()).getShape().back();
    if (classes == n)
      return WalkResult::advance();
    emitError(op.getLoc()) << "the logits have " << classes
                           << " classes but the module's loom.task says " << key
                           << " = " << n << ": the runtime's '" << input
                           << "' would range over [0, " << n << ")";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}
