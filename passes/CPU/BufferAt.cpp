//===- BufferAt.cpp - A buffer of static shape at an address --------------===//
#include "passes/CPU/BufferAt.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

Value mlir::loom::bufferAt(OpBuilder &b, Location loc,
                           const LLVMTypeConverter &converter, MemRefType type,
                           Value address) {
  Value descriptor =
      MemRefDescriptor::fromStaticShape(b, loc, converter, type, address);
  return UnrealizedConversionCastOp::create(b, loc, type, descriptor)
      .getResult(0);
}
