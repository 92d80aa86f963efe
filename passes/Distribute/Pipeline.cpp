//===- Pipeline.cpp - What the pipeline-parallel passes share -------------===//
#include "passes/Distribute/Pipeline.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::loom;

std::string mlir::loom::stageModuleName(int64_t stage) {
  return "pp" + std::to_string(stage);
}

void mlir::loom::setPipelineStage(ModuleOp module, const PipelineStage &stage) {
  Builder b(module.getContext());
  module->setAttr(
      kPipelineStageAttr,
      b.getDictionaryAttr(
          {b.getNamedAttr("stage", b.getI64IntegerAttr(stage.stage)),
           b.getNamedAttr("stages", b.getI64IntegerAttr(stage.stages)),
           b.getNamedAttr("micro_batches",
                          b.getI64IntegerAttr(stage.microBatches))}));
}

std::optional<PipelineStage> mlir::loom::getPipelineStage(ModuleOp module) {
  auto dict = module->getAttrOfType<DictionaryAttr>(kPipelineStageAttr);
  if (!dict)
    return std::nullopt;
  auto get = [&](StringRef name) {
    auto attr = dict.getAs<IntegerAttr>(name);
    return attr ? attr.getInt() : int64_t(-1);
  };
  PipelineStage stage{get("stage"), get("stages"), get("micro_batches")};
  if (stage.stage < 0 || stage.stages < 1 || stage.stage >= stage.stages ||
      stage.microBatches < 1)
    return std::nullopt;
  return stage;
}
