//===- Outlined.cpp - Functions made of part of an entry ------------------===//
#include "loom/Support/Outlined.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

func::FuncOp mlir::loom::createOutlinedFunction(func::FuncOp entry,
                                                Location loc, StringRef name,
                                                FunctionType type) {
  OpBuilder b(entry);
  auto fn = func::FuncOp::create(b, loc, name, type);
  fn.setPrivate();
  fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  fn->setAttr("llvm.linkage",
              LLVM::LinkageAttr::get(b.getContext(), LLVM::Linkage::Internal));
  fn.addEntryBlock();
  return fn;
}

bool mlir::loom::passableAsBarePointer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return !isa<BaseMemRefType>(type);
  SmallVector<int64_t> strides;
  int64_t offset;
  return memref.hasStaticShape() &&
         succeeded(memref.getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}
