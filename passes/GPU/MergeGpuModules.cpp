//===- MergeGpuModules.cpp - One gpu.module for all kernels ---------------===//
//
// One module means one NVPTX compilation and one ptxas run for the whole
// artifact instead of one per kernel (a GPT: ~45 s -> a few seconds), and
// one cubin for the runtime to load. A kernel equal to one already merged
// but for its name (the same loop nest in another layer) is merged once.
//
//===----------------------------------------------------------------------===//
#include "loom/Support/SymbolText.h"
#include "passes/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "loom-merge-gpu-modules"

namespace mlir::loom {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "passes/GPU/Passes.h.inc"

namespace {

/// The one gpu.func of `module` (what outlining makes) if everything else
/// in it is a symbol (constants the kernel reads: memref.global), so that
/// the module can be merged.
gpu::GPUFuncOp mergeableKernel(gpu::GPUModuleOp module) {
  gpu::GPUFuncOp kernel;
  for (Operation &op : module.getBodyRegion().front()) {
    if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
      if (kernel)
        return {};
      kernel = func;
    } else if (!isa<SymbolOpInterface>(op)) {
      return {};
    }
  }
  return kernel;
}

/// A module's attributes other than its name.
DictionaryAttr attributesBesidesName(gpu::GPUModuleOp module) {
  NamedAttrList attrs(module->getAttrDictionary());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(module.getContext());
}

struct MergeGpuModulesPass
    : impl::MergeGpuModulesPassBase<MergeGpuModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    SmallVector<gpu::GPUModuleOp> candidates;
    for (auto module : top.getOps<gpu::GPUModuleOp>())
      if (mergeableKernel(module))
        candidates.push_back(module);
    if (candidates.size() < 2)
      return;
    DictionaryAttr attrs = attributesBesidesName(candidates.front());
    llvm::erase_if(candidates, [&](gpu::GPUModuleOp module) {
      return attributesBesidesName(module) != attrs;
    });
    if (candidates.size() < 2)
      return;

    SymbolTable symbols(top);
    OpBuilder b(candidates.front());
    auto merged = gpu::GPUModuleOp::create(b, candidates.front().getLoc(),
                                           "loom_kernels");
    for (NamedAttribute attr : attrs)
      merged->setAttr(attr.getName(), attr.getValue());
    symbols.insert(merged); // renamed if the name is taken
    auto mergedName = FlatSymbolRefAttr::get(merged.getNameAttr());

    // Old @module::@kernel -> @merged::@module. Each symbol is inserted
    // through the merged module's symbol table, which renames it if its
    // name is taken (two modules' constants); uses inside the kernel follow.
    DenseMap<Attribute, SymbolRefAttr> moved;
    SymbolTable mergedSymbols(merged);
    // Kernels already merged, by their text: every layer's kernels are the
    // same but for their buffers, and one copy of each is enough.
    llvm::StringMap<SymbolRefAttr> kernels;
    for (gpu::GPUModuleOp module : candidates) {
      gpu::GPUFuncOp kernel = mergeableKernel(module);
      SymbolRefAttr from = SymbolRefAttr::get(
          module.getNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())});
      for (Operation &op :
           llvm::make_early_inc_range(module.getBodyRegion().front())) {
        if (&op == kernel.getOperation())
          continue;
        StringAttr old = SymbolTable::getSymbolName(&op);
        // A constant the merged module already has, value and all, is
        // shared rather than renamed (the kernels that read it stay equal).
        if (Operation *same = mergedSymbols.lookup(old);
            same && textNamed(same, "") == textNamed(&op, "")) {
          op.erase();
          continue;
        }
        op.remove();
        StringAttr now = mergedSymbols.insert(&op);
        if (now != old &&
            failed(SymbolTable::replaceAllSymbolUses(old, now, kernel)))
          return signalPassFailure();
      }
      auto [known, isNew] = kernels.try_emplace(textNamed(kernel, ""));
      if (!isNew) {
        moved[from] = known->second;
        module.erase();
        ++numShared;
        continue;
      }
      kernel->remove();
      kernel.setName(module.getNameAttr());
      StringAttr name = mergedSymbols.insert(kernel);
      moved[from] = known->second = SymbolRefAttr::get(
          mergedName.getAttr(), {FlatSymbolRefAttr::get(name)});
      module.erase();
      ++numMerged;
    }
    top.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr to = moved.lookup(launch.getKernel()))
        launch.setKernelAttr(to);
    });
  }
};

} // namespace
} // namespace mlir::loom
