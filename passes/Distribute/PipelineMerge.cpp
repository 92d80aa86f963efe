//===- PipelineMerge.cpp - The stages' entry points in one module ---------===//
//
// One artifact serves every stage: its library exports each stage's entry
// points under the stage's suffix, and the runtime calls the ones of the
// stage its rank is on (runtime/src/artifact/Artifact.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/Distribute/Passes.h"
#include "passes/Distribute/Pipeline.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "loom-pipeline-merge"

namespace mlir::loom {
#define GEN_PASS_DEF_PIPELINEMERGEPASS
#include "passes/Distribute/Passes.h.inc"

namespace {

struct PipelineMergePass : impl::PipelineMergePassBase<PipelineMergePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<ModuleOp, PipelineStage>> stages;
    for (ModuleOp stage : module.getOps<ModuleOp>())
      if (std::optional<PipelineStage> info = getPipelineStage(stage))
        stages.push_back({stage, *info});
    if (stages.empty())
      return;
    Builder b(module.getContext());
    PipelineStage first = stages.front().second;
    for (auto &[stage, info] : stages) {
      for (NamedAttribute attr : stage->getDiscardableAttrs())
        if (attr.getName() != kPipelineStageAttr)
          mergeModuleAttr(module, attr);
      if (failed(moveStage(module, stage, info)))
        return signalPassFailure();
      stage.erase();
    }
    module->setAttr(
        kPipelineAttr,
        b.getDictionaryAttr(
            {b.getNamedAttr("stages", b.getI64IntegerAttr(first.stages)),
             b.getNamedAttr("micro_batches",
                            b.getI64IntegerAttr(first.microBatches))}));
  }

  /// A stage's module attribute on the merged module: the first stage's
  /// serves all (the same mesh, optimizer, data), but ZeRO's list of
  /// sharded params is every stage's.
  static void mergeModuleAttr(ModuleOp module, NamedAttribute attr) {
    Attribute held = module->getAttr(attr.getName());
    if (!held)
      return module->setAttr(attr.getName(), attr.getValue());
    auto zero = dyn_cast<ZeroAttr>(held);
    auto more = dyn_cast<ZeroAttr>(attr.getValue());
    if (!zero || !more)
      return;
    SmallVector<Attribute> params(zero.getParams().begin(),
                                  zero.getParams().end());
    for (Attribute name : more.getParams())
      if (!llvm::is_contained(params, name))
        params.push_back(name);
    module->setAttr(attr.getName(),
                    ZeroAttr::get(module.getContext(), zero.getStage(),
                                  zero.getMesh(), zero.getRanks(),
                                  ArrayAttr::get(module.getContext(), params)));
  }

  LogicalResult moveStage(ModuleOp module, ModuleOp stage,
                          const PipelineStage &info) {
    // Symbols take `_pp<s>`, the entries the runtime looks up `.pp<s>`.
    // Every function renamed first, while its callers are still beside it.
    for (auto fn : stage.getOps<func::FuncOp>()) {
      StringAttr renamed = StringAttr::get(
          fn.getContext(), pipelineSymbol(fn.getSymName(), info.stage));
      if (failed(SymbolTable::replaceAllSymbolUses(fn, renamed, stage)))
        return fn.emitError("cannot rename @") << fn.getSymName();
      fn.setSymName(renamed);
      if (auto entry = fn->getAttrOfType<StringAttr>(kEntryAttr))
        fn->setAttr(kEntryAttr, StringAttr::get(fn.getContext(),
                                                pipelineEntry(entry.getValue(),
                                                              info.stage)));
    }
    Block *into = module.getBody();
    for (Operation &op : llvm::make_early_inc_range(*stage.getBody())) {
      // Meshes and parameters: the first stage's declaration serves all
      // (the same mesh; a shared parameter lists all its stages).
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (!isa<func::FuncOp>(op) && symbol &&
          module.lookupSymbol(symbol.getNameAttr()))
        continue;
      op.moveBefore(into, into->end());
    }
    return success();
  }
};

} // namespace
} // namespace mlir::loom
