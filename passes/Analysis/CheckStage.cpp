//===- CheckStage.cpp - Stop a pipeline given IR of an earlier stage ------===//
//
// A lowering pipeline run on IR of an earlier stage fails inside some
// conversion with a message about that conversion's patterns (the linalg
// stage given to the LLVM lowering: "expected add/mul op in the body",
// three times). This pass runs first and says what was given and what to
// run instead.
//
//===----------------------------------------------------------------------===//
#include "passes/Analysis/Passes.h"
#include "passes/Analysis/Stage.h"

#include "llvm/ADT/Twine.h"

namespace mlir::loom {
#define GEN_PASS_DEF_CHECKSTAGEPASS
#include "passes/Analysis/Passes.h.inc"

namespace {
struct CheckStagePass : impl::CheckStagePassBase<CheckStagePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    StageEvidence found = detectStage(module);
    if (found.stage >= stage)
      return;
    Operation *at = found.op ? found.op : module.getOperation();
    InFlightDiagnostic diag = at->emitError();
    diag << "expected IR at the " << getStageName(stage)
         << " stage, but this is the " << getStageName(found.stage) << " stage";
    if (found.op)
      diag << " ('" << found.op->getName() << "' "
           << (found.stage <= Stage::Train ? "is a loom op"
                                           : "works on tensors")
           << ")";
    diag << ": run " << getPipelinesBetween(found.stage, stage, cuda)
         << " first";
    signalPassFailure();
  }
};
} // namespace
} // namespace mlir::loom
