//===- Pipeline.h - What the pipeline-parallel passes share -----*- C++ -*-===//
#ifndef LOOM_PASSES_DISTRIBUTE_PIPELINE_H
#define LOOM_PASSES_DISTRIBUTE_PIPELINE_H

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::loom {

struct PipelineStage {
  int64_t stage = 0, stages = 1, microBatches = 1;
};

/// `pp<s>`: stage s's nested module, and the suffix of its entry points.
std::string stageModuleName(int64_t stage);
void setPipelineStage(ModuleOp module, const PipelineStage &stage);
/// The stage a module of --loom-pipeline-split is, if it is one.
std::optional<PipelineStage> getPipelineStage(ModuleOp module);

} // namespace mlir::loom

#endif // LOOM_PASSES_DISTRIBUTE_PIPELINE_H
