//===- Stage.cpp - Which stage of the compiler a module is at -------------===//
#include "passes/Analysis/Stage.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"

#include <iterator>

using namespace mlir;
using namespace mlir::loom;

namespace {
/// A stage's name, what its IR is, and the pipelines that make it, for the
/// CPU and cuda.
struct StageInfo {
  const char *name, *description, *pipeline, *cudaPipeline;
};
} // namespace

/// In the order of the Stage enumerators.
static const StageInfo kStages[] = {
    {"model", "the model (loom dialect)", "", ""},
    {"train", "autodiff + optimizer (loom dialect)", "--loom-train-pipeline",
     "--loom-train-pipeline"},
    {"linalg", "lowering to linalg on tensors",
     "--loom-lower-to-linalg-pipeline", "--loom-lower-to-linalg-pipeline"},
    {"bufferized", "the same on memrefs only", "--loom-bufferize-pipeline",
     "--loom-bufferize-pipeline=device=1"},
    {"lowered", "the LLVM dialect", "--loom-lower-to-llvm-pipeline",
     "--loom-lower-to-cuda-pipeline"},
};
static_assert(std::size(kStages) == static_cast<size_t>(Stage::Lowered) + 1,
              "one row per stage");

StringRef mlir::loom::getStageName(Stage stage) {
  return kStages[static_cast<size_t>(stage)].name;
}

StringRef mlir::loom::getStageDescription(Stage stage) {
  return kStages[static_cast<size_t>(stage)].description;
}

StringRef mlir::loom::getStagePipeline(Stage stage, bool cuda) {
  const StageInfo &info = kStages[static_cast<size_t>(stage)];
  return cuda ? info.cudaPipeline : info.pipeline;
}

std::string mlir::loom::getPipelinesBetween(Stage from, Stage to, bool cuda) {
  std::string list;
  for (int s = static_cast<int>(from) + 1; s <= static_cast<int>(to); ++s)
    list += (list.empty() ? "" : " then ") +
            getStagePipeline(static_cast<Stage>(s), cuda).str();
  return list;
}

static bool isTensor(Type type) { return isa<TensorType>(type); }

/// Whether `op` works on tensors: its results, its regions' arguments or,
/// for a function, its signature.
static bool usesTensors(Operation *op) {
  if (llvm::any_of(op->getResultTypes(), isTensor) ||
      llvm::any_of(op->getOperandTypes(), isTensor))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (llvm::any_of(block.getArgumentTypes(), isTensor))
        return true;
  if (auto fn = dyn_cast<FunctionOpInterface>(op))
    return llvm::any_of(fn.getArgumentTypes(), isTensor) ||
           llvm::any_of(fn.getResultTypes(), isTensor);
  return false;
}

bool mlir::loom::isTrainingStep(ModuleOp module) {
  // A pipelined step's functions carry their stage's suffix (_pp0, ...).
  return module.lookupSymbol("loss_and_grad") ||
         module.lookupSymbol("train_step") ||
         module.lookupSymbol(pipelineSymbol("train_step", 0));
}

StageEvidence mlir::loom::detectStage(ModuleOp module) {
  Operation *loomOp = nullptr, *tensorOp = nullptr, *llvmFunc = nullptr;
  module.walk([&](Operation *op) {
    // The ops the CPU runtime computes stay until bufferization.
    if (isa_and_nonnull<LoomDialect>(op->getDialect()) &&
        !isa<DocumentAttentionOp, DocumentAttentionGradOp>(op)) {
      loomOp = op;
      return WalkResult::interrupt();
    }
    if (!tensorOp && usesTensors(op))
      tensorOp = op;
    if (!llvmFunc && isa<LLVM::LLVMFuncOp>(op))
      llvmFunc = op;
    return WalkResult::advance();
  });
  if (loomOp)
    return {isTrainingStep(module) ? Stage::Train : Stage::Model, loomOp};
  if (tensorOp)
    return {Stage::Linalg, tensorOp};
  if (llvmFunc)
    return {Stage::Lowered, llvmFunc};
  return {Stage::Bufferized, nullptr};
}
