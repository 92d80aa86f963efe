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
#include "llvm/ADT/StringSet.h"

#include <climits>
#include <cstdint>

using namespace mlir;
using namespace mlir::loom;

namespace {
/// A batch input the runtime's data source for a task produces.
struct ExpectedInput {
  StringRef name;
  SmallVector<int64_t> shape;
  bool floating; ///< f32 or f64; else i32
};

std::string inputName(func::FuncOp loss, unsigned i) {
  auto name = loss.getArgAttrOfType<StringAttr>(i, kInputAttr);
  return name ? name.str() : "input" + std::to_string(i);
}

/// The runtime refuses an artifact whose inputs are not exactly what its
/// task's data source produces (runtime/src/manifest/Manifest.cpp,
/// checkTaskInputs): say so here, at the argument, rather than there.
LogicalResult verifyInputs(ModuleOp module, func::FuncOp loss, StringRef kind,
                           ArrayRef<ExpectedInput> expected) {
  std::string names;
  for (const ExpectedInput &e : expected)
    names += (names.empty() ? "" : ", ") + e.name.str();
  llvm::StringSet<> seen;
  for (auto [i, type] : llvm::enumerate(loss.getArgumentTypes())) {
    std::string name = inputName(loss, i);
    Location loc = loss.getArgument(i).getLoc();
    const ExpectedInput *match = llvm::find_if(
        expected, [&](const ExpectedInput &e) { return e.name == name; });
    if (match == expected.end())
      return emitError(loc) << "input '" << name << "' of @loss is not one "
                            << "task " << kind << " provides (" << names
                            << "; name an argument with {loom.input = ...})";
    if (!seen.insert(name).second)
      return emitError(loc) << "two inputs of @loss are named '" << name << "'";
    auto tensor = dyn_cast<RankedTensorType>(type);
    Type et = tensor ? tensor.getElementType() : Type();
    bool typeOk =
        et && (match->floating ? (et.isF32() || et.isF64()) : et.isInteger(32));
    if (!tensor || tensor.getShape() != ArrayRef<int64_t>(match->shape) ||
        !typeOk) {
      InFlightDiagnostic diag = emitError(loc);
      diag << "input '" << name << "' of task " << kind << " must be a tensor<";
      for (int64_t d : match->shape)
        diag << d << "x";
      diag << (match->floating ? "f32> (or f64)" : "i32>")
           << " as the module's loom.task says, got " << type;
      return diag;
    }
  }
  for (const ExpectedInput &e : expected)
    if (!seen.contains(e.name))
      return emitError(loss.getLoc())
             << "@loss has no input '" << e.name << "', which task " << kind
             << " needs (an argument with {loom.input = \"" << e.name << "\"})";
  return success();
}
/// The batch inputs @loss must have for a task of sizes [batch, features]
/// (classify) or [batch, seq] (lm): with `documents` (packed documents,
/// docs/sequences.md), each token's document and its position in it too,
/// which the runtime fills from the document boundaries.
FailureOr<SmallVector<ExpectedInput>> expectedInputs(ModuleOp module,
                                                     DictionaryAttr task,
                                                     bool classify,
                                                     ArrayRef<int64_t> sizes) {
  SmallVector<ExpectedInput> expected;
  if (classify)
    expected = {{"x", {sizes[0], sizes[1]}, true}, {"y", {sizes[0]}, false}};
  else
    expected = {{"tokens", {sizes[0], sizes[1]}, false},
                {"targets", {sizes[0], sizes[1]}, false}};
  auto documents = task.get("documents");
  if (documents && (classify || !isa<BoolAttr>(documents))) {
    emitError(module.getLoc())
        << "loom.task: 'documents' must be a bool on a task of kind lm";
    return failure();
  }
  const bool withDocuments = documents && cast<BoolAttr>(documents).getValue();
  if (withDocuments)
    expected.append({{"segments", {sizes[0], sizes[1]}, false},
                     {"positions", {sizes[0], sizes[1]}, false}});
  // Set by --loom-partition-sequences: the runtime fills the rows by plan.
  auto partitioned = task.get("partitioned");
  if (partitioned &&
      (!isa<BoolAttr>(partitioned) ||
       (cast<BoolAttr>(partitioned).getValue() && !withDocuments))) {
    emitError(module.getLoc()) << "loom.task: 'partitioned' must be a bool, "
                                  "true only with documents = true";
    return failure();
  }
  return expected;
}
} // namespace

LogicalResult mlir::loom::driver::verifyTask(ModuleOp module) {
  auto task = module->getAttrOfType<DictionaryAttr>("loom.task");
  if (!task) {
    // Legal (task none), but then loom-run trains on random inputs, which
    // someone who forgot the attribute would not notice.
    emitWarning(module.getLoc())
        << "the module has no loom.task: loom-run will feed its inputs "
           "seeded random values (task none); add loom.task = {kind = "
           "\"lm\", ...} or {kind = \"classify\", ...} to train on data";
    return success();
  }
  auto kind = task.getAs<StringAttr>("kind");
  if (!kind)
    return emitError(module.getLoc())
           << "loom.task needs a string 'kind' (lm, classify or none)";
  if (kind.getValue() == "none")
    return success();
  if (kind.getValue() != "classify" && kind.getValue() != "lm")
    return emitError(module.getLoc())
           << "loom.task: unknown kind \"" << kind.getValue()
           << "\" (expected lm, classify or none)";
  const bool classify = kind.getValue() == "classify";
  StringRef key = classify ? "classes" : "vocab";
  StringRef input = classify ? "y" : "targets";
  // Every size the runtime reads (runtime/src/manifest/Manifest.cpp, task()).
  SmallVector<int64_t> sizes;
  for (StringRef field : classify ? SmallVector<StringRef>{"batch", "features"}
                                  : SmallVector<StringRef>{"batch", "seq"}) {
    auto value = task.getAs<IntegerAttr>(field);
    if (!value || value.getValue().getSExtValue() < 1)
      return emitError(module.getLoc())
             << "loom.task of kind \"" << kind.getValue()
             << "\" needs a positive integer '" << field << "'";
    sizes.push_back(value.getValue().getSExtValue());
  }
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

  FailureOr<SmallVector<ExpectedInput>> expected =
      expectedInputs(module, task, classify, sizes);
  if (failed(expected))
    return failure();
  auto loss = module.lookupSymbol<func::FuncOp>("loss");
  if (!loss || loss.isExternal())
    return success();
  if (failed(verifyInputs(module, loss, kind.getValue(), *expected)))
    return failure();

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
