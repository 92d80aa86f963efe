//===- LoadEntryArguments.cpp - Entries that read their buffers' addresses ===//
//
// The runtime calls `void loom_<entry>(void **args)`, one address per buffer
// of the entry's calling convention (abi.h). A wrapper that loaded them all
// and called the entry with one argument each made LLVM compile a call of
// as many arguments as the model has parameter and state tensors, and keep
// every address alive across the whole step: for a 48-layer GPT (1,746
// buffers) the wrapper alone took 0.30 s of code generation. Here the entry
// itself takes the array and loads each address just before the first op
// that uses it, so that no address lives before its buffer's first use.
//
//===----------------------------------------------------------------------===//
#include "passes/CPU/BufferAt.h"
#include "passes/CPU/Passes.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "loom/Support/Outlined.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/BitVector.h"

#define DEBUG_TYPE "loom-load-entry-arguments"

namespace mlir::loom {
#define GEN_PASS_DEF_LOADENTRYARGUMENTSPASS
#include "passes/CPU/Passes.h.inc"

namespace {

struct LoadEntryArgumentsPass
    : impl::LoadEntryArgumentsPassBase<LoadEntryArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LLVMTypeConverter converter(&getContext());
    for (func::FuncOp fn : llvm::to_vector(module.getOps<func::FuncOp>()))
      if (fn->hasAttr(kEntryAttr) && failed(convert(module, fn, converter)))
        return signalPassFailure();
  }

  LogicalResult check(ModuleOp module, func::FuncOp fn, StringAttr entry) {
    if (!entry)
      return fn.emitError("'")
             << kEntryAttr << "' must be the entry's name (a string)";
    if (fn.isExternal())
      return fn.emitError("entry function has no body");
    if (fn.getNumResults() != 0)
      return fn.emitError("entry function returns values; entries write "
                          "their outputs into buffers");
    for (Type t : fn.getArgumentTypes()) {
      auto memref = dyn_cast<MemRefType>(t);
      if (!memref || !memref.getLayout().isIdentity() ||
          !passableAsBarePointer(memref))
        return fn.emitError("entry argument of type ")
               << t << " is not a buffer of static shape and identity layout";
    }
    std::string name = ("loom_" + entry.getValue()).str();
    if (module.lookupSymbol(name))
      return fn.emitError("symbol @") << name << " already exists";
    return success();
  }

  LogicalResult convert(ModuleOp module, func::FuncOp fn,
                        const LLVMTypeConverter &converter) {
    auto entry = fn->getAttrOfType<StringAttr>(kEntryAttr);
    if (failed(check(module, fn, entry)))
      return failure();
    MLIRContext *ctx = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Block &body = fn.getBody().front();
    unsigned n = fn.getNumArguments();
    if (failed(fn.insertArgument(n, ptr, DictionaryAttr(), fn.getLoc())))
      return failure();
    Value array = body.getArgument(n);
    // Each address is loaded before the first op of the block that uses the
    // buffer (for a use in a loop, before the loop).
    OpBuilder b(ctx);
    for (Operation &op : llvm::make_early_inc_range(body)) {
      op.walk([&](Operation *user) {
        for (Value v : user->getOperands()) {
          auto arg = dyn_cast<BlockArgument>(v);
          if (!arg || arg.getOwner() != &body || arg == array)
            continue;
          b.setInsertionPoint(&op);
          Location loc = op.getLoc();
          Value slot = LLVM::GEPOp::create(
              b, loc, ptr, ptr, array,
              ArrayRef<LLVM::GEPArg>{int32_t(arg.getArgNumber())});
          Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
          arg.replaceAllUsesWith(bufferAt(
              b, loc, converter, cast<MemRefType>(arg.getType()), address));
        }
      });
    }
    llvm::BitVector erase(n + 1);
    erase.set(0, n);
    if (failed(fn.eraseArguments(erase)))
      return failure();
    fn.setSymName(("loom_" + entry.getValue()).str());
    fn.setPublic();
    fn->removeAttr(kEntryAttr);
    return success();
  }
};

} // namespace
} // namespace mlir::loom
