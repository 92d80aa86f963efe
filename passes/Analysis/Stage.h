//===- Stage.h - Which stage of the compiler a module is at -----*- C++ -*-===//
//
// loomc compiles in stages, each made by one named pipeline and printed by
// `loomc --emit=mlir --stage=<name>`. The names here are the ones every
// tool and document uses (--stage, --dump-pass-pipeline, --mlir-timing,
// --loom-check-stage), and detectStage() tells from a module's contents
// which one it is at, so that a tool given IR of the wrong stage says so
// instead of failing deep inside a conversion.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_PASSES_ANALYSIS_STAGE_H
#define LOOM_PASSES_ANALYSIS_STAGE_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom {

/// The stages, in the order the compiler makes them.
enum class Stage { Model, Train, Linalg, Bufferized, Lowered };

/// As --stage and --dump-pass-pipeline spell it: "model", "train",
/// "linalg", "bufferized", "lowered".
StringRef getStageName(Stage stage);

/// What the stage's IR is, in a few words (loomc --help).
StringRef getStageDescription(Stage stage);

/// The named pipeline that makes `stage` from the stage before it (for the
/// CPU target, or the NVIDIA GPU one with `cuda`); empty for the model.
StringRef getStagePipeline(Stage stage, bool cuda = false);

/// The pipelines that make `to` from `from`, in order: "--loom-a then
/// --loom-b".
std::string getPipelinesBetween(Stage from, Stage to, bool cuda = false);

/// What a module's contents say about its stage, and the op that shows it.
struct StageEvidence {
  Stage stage;
  /// The first loom op (model, train), the first op on tensors (linalg),
  /// the first llvm.func (lowered); null for the bufferized stage, which is
  /// known by what is absent.
  Operation *op;
};

/// Whether `module` holds a training step (the train stage): the gradients
/// of --loom-autodiff, or a @train_step (--loom-zo builds one without them).
bool isTrainingStep(ModuleOp module);

/// Which stage `module` is at: loom ops mean the model (train, when it
/// defines @loss_and_grad), tensors without loom ops the linalg stage,
/// llvm.func the lowered one, and memrefs only the bufferized one.
StageEvidence detectStage(ModuleOp module);

} // namespace mlir::loom

#endif // LOOM_PASSES_ANALYSIS_STAGE_H
