//===- BufferAt.cpp - A buffer of static shape at an address --------------===//
#include "passes/CPU/BufferAt.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

Value mlir::loom::bufferAt(OpBuilder &b, Location loc,
                           const LLVMTypeConverter &converter, MemRefType type,
                           Value address) {
  Value descriptor =
      MemRefDescriptor::fromStaticShape(b, loc, converter, type, address);
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}

bool mlir::loom::isArgumentLoad(Operation *op) {
  auto load = dyn_cast<LLVM::LoadOp>(op);
  if (!load || load.getVolatile_())
    return false;
  auto gep = load.getAddr().getDefiningOp<LLVM::GEPOp>();
  auto array = gep ? dyn_cast<BlockArgument>(gep.getBase()) : nullptr;
  auto fn =
      array ? dyn_cast<func::FuncOp>(array.getOwner()->getParentOp()) : nullptr;
  return fn && fn->hasAttr(kAbiAttr) &&
         array.getArgNumber() == fn.getNumArguments() - 1 &&
         isa<LLVM::LLVMPointerType>(array.getType());
}

bool mlir::loom::isRecomputable(Operation *op) {
  if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (isArgumentLoad(op))
    return true;
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() == "loom_rt_arena_slice";
  return isMemoryEffectFree(op);
}
