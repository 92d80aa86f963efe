//===- LoomDialect.h - The loom dialect -------------------------*- C++ -*-===//
#ifndef LOOM_DIALECTS_LOOM_IR_LOOMDIALECT_H
#define LOOM_DIALECTS_LOOM_IR_LOOMDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include <string>

#include "dialects/Loom/IR/LoomDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Loom/IR/LoomAttrs.h.inc"

namespace mlir::loom {
/// Discardable attribute names shared by passes and the driver.
/// On a func: which runtime entry point it becomes ("loss", ...).
inline constexpr llvm::StringLiteral kEntryAttr = "loom.entry";
/// On a private func: a run of ops that repeats in the entries (a layer),
/// made by --loom-outline-layers and called once per repetition.
inline constexpr llvm::StringLiteral kOutlinedAttr = "loom.outlined";
/// On a func argument: the batch input's name ("tokens", "x", ...).
inline constexpr llvm::StringLiteral kInputAttr = "loom.input";
/// On a pure op computed again where an identical op exists earlier (a
/// zeroth-order step's perturbed copy of a tied parameter, remade where it
/// is read again rather than kept alive in between): distinct values keep
/// CSE from merging the two, which would bring back the long-lived buffer.
inline constexpr llvm::StringLiteral kRematAttr = "loom.remat";
/// On a @loss_and_grad result: the parameter it is the gradient of.
inline constexpr llvm::StringLiteral kGradOfAttr = "loom.grad_of";
/// On an entry func result: the output's name ("loss", "grad:<param>").
inline constexpr llvm::StringLiteral kOutputAttr = "loom.output";
/// On the module, set by --loom-add-optimizer: the optimizer and schedule
/// @train_step was built with ({kind, lr, ...}), which the manifest records.
inline constexpr llvm::StringLiteral kOptimizerAttr = "loom.optimizer";
/// Pipeline parallelism (passes/Distribute/Pipeline.h): the mesh axis of
/// the stages; on a stage's module, which stage it is ({stage, stages,
/// micro_batches}); on the merged module, {stages, micro_batches}; on a
/// param, the stages that hold it (an i64 array).
inline constexpr llvm::StringLiteral kPipelineAxis = "pp";
inline constexpr llvm::StringLiteral kPipelineStageAttr = "loom.pipeline_stage";
inline constexpr llvm::StringLiteral kPipelineAttr = "loom.pipeline";
inline constexpr llvm::StringLiteral kPipelineStagesAttr = "pipeline_stages";
/// Stage `stage`'s copy of function `name` in a merged pipelined module
/// (`train_step_pp1`: kernel names are made of symbols, and PTX has no dots
/// in names), and of entry point `name` (`train_step.pp1`, what the
/// runtime looks up for its stage; docs/artifact.md).
inline std::string pipelineSymbol(llvm::StringRef name, int64_t stage) {
  return (name + "_pp" + llvm::Twine(stage)).str();
}
inline std::string pipelineEntry(llvm::StringRef name, int64_t stage) {
  return (name + ".pp" + llvm::Twine(stage)).str();
}
/// On a pipeline transfer made once per step (a shared parameter's
/// gradient), not per micro-batch: what loomc --plan tells apart.
inline constexpr llvm::StringLiteral kPipelineSharedAttr =
    "loom.pipeline_shared";
/// On the module, set by --loom-co2: its schedule (#loom.co2).
inline constexpr llvm::StringLiteral kCO2Attr = "loom.co2";
/// On the module, set by --loom-describe-machine: what the cost model
/// assumes about the machine (#loom.machine).
inline constexpr llvm::StringLiteral kMachineAttr = "loom.machine";
/// ZeRO's sharded optimizer state (ZeroAttr), set by --loom-shard-state.
inline constexpr llvm::StringLiteral kZeroAttr = "loom.zero";
/// #loom.compression (--loom-compress): the gradients the compressed
/// all-reduces average and how.
inline constexpr llvm::StringLiteral kCompressionAttr = "loom.compression";
/// On a loom.param --loom-tensor-parallel split: #loom.tensor_split.
inline constexpr llvm::StringLiteral kTensorSplitAttr = "loom.tensor_split";
/// On a loom.param ZeRO-3 stores as this rank's slice: its whole type.
inline constexpr llvm::StringLiteral kFullTypeAttr = "loom.full_type";
/// On a lowered entry func: one {role, name} dictionary per argument.
inline constexpr llvm::StringLiteral kAbiAttr = "loom.abi";
} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_LOOMDIALECT_H
