//===- DescribeMachine.cpp - The machine model as a module attribute ------===//
#include "passes/Analysis/CostModel.h"
#include "passes/Analysis/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom {
#define GEN_PASS_DEF_DESCRIBEMACHINEPASS
#include "passes/Analysis/Passes.h.inc"

namespace {
struct DescribeMachinePass
    : impl::DescribeMachinePassBase<DescribeMachinePass> {
  // The options, one per line of MachineOptions.def.
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP)                           \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), llvm::cl::init(DEFAULT)};
#include "passes/Analysis/MachineOptions.def"

  DescribeMachinePass() = default;
  DescribeMachinePass(const DescribeMachinePass &other) : Base(other) {}
  explicit DescribeMachinePass(const MachineOptions &machine) {
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) NAME = machine.NAME;
#include "passes/Analysis/MachineOptions.def"
  }

  void runOnOperation() override {
    MachineOptions machine;
#define LOOM_OPTION(TYPE, NAME, FLAG, DEFAULT, HELP) machine.NAME = NAME;
#include "passes/Analysis/MachineOptions.def"
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    // The attribute's verifier says what a bad value is, at the module.
    auto attr = MachineAttr::getChecked(
        [&] { return module.emitError("--loom-describe-machine: "); },
        module.getContext(), b.getF64FloatAttr(machine.linkGbps),
        b.getF64FloatAttr(machine.linkLatencyUs),
        b.getF64FloatAttr(machine.gflops), b.getF64FloatAttr(machine.commCpu));
    if (!attr)
      return signalPassFailure();
    module->setAttr(kMachineAttr, attr);
  }
};
} // namespace

std::unique_ptr<Pass> createDescribeMachinePass(const MachineOptions &machine) {
  return std::make_unique<DescribeMachinePass>(machine);
}

} // namespace mlir::loom
