//===- EmitEntryWrappers.cpp - `void loom_<entry>(void **)` exports -------===//
#include "passes/CPU/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "loom-emit-entry-wrappers"

namespace mlir::loom {
#define GEN_PASS_DEF_EMITENTRYWRAPPERSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

struct EmitEntryWrappersPass
    : impl::EmitEntryWrappersPassBase<EmitEntryWrappersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> entries;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (fn->hasAttr(kEntryAttr))
        entries.push_back(fn);
    for (LLVM::LLVMFuncOp fn : entries)
      if (failed(wrap(module, fn)))
        return signalPassFailure();
  }

  LogicalResult wrap(ModuleOp module, LLVM::LLVMFuncOp fn) {
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    if (fn.isExternal())
      return fn.emitError("entry function has no body");
    for (Type t : fn.getArgumentTypes())
      if (t != ptr)
        return fn.emitError("entry argument of type ")
               << t
               << " is not a bare pointer (convert functions with "
                  "use-bare-ptr-memref-call-conv)";
    auto entry = fn->getAttrOfType<StringAttr>(kEntryAttr);
    if (!entry)
      return fn.emitError("'")
             << kEntryAttr << "' must be the entry's name (a string)";
    std::string name = ("loom_" + entry.getValue()).str();
    if (module.lookupSymbol(name))
      return fn.emitError("symbol @") << name << " already exists";

    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointAfter(fn);
    Location loc = fn.getLoc();
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    auto wrapper = LLVM::LLVMFuncOp::create(
        b, loc, name, LLVM::LLVMFunctionType::get(voidTy, {ptr}));
    Block *body = wrapper.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> args;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
    LLVM::CallOp::create(b, loc, fn, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    // Only the wrappers are exported; LLVM inlines the bodies into them.
    fn.setLinkage(LLVM::Linkage::Internal);
    return success();
  }
};

} // namespace
} // namespace mlir::loom
