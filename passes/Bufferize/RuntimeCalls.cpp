//===- RuntimeCalls.cpp - Calling the runtime ABI from lowered code -------===//
#include "passes/Bufferize/RuntimeCalls.h"

#include "dialects/Comm/IR/CommOps.h"
#include "loom/runtime/abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

bool mlir::loom::hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.empty() || strides.back() == 1;
}

Value mlir::loom::bufferPointer(OpBuilder &b, Location loc, Value memref,
                                memref::ExtractStridedMetadataOp meta) {
  auto type = cast<MemRefType>(memref.getType());
  if (!meta)
    meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  Value byteOffset = arith::MulIOp::create(
      b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value addr = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, byteOffset));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), addr);
}

func::FuncOp mlir::loom::declareRuntimeFunction(ModuleOp module, StringRef name,
                                                FunctionType type) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b(module.getBodyRegion());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

int32_t mlir::loom::runtimeDType(Type t) {
  if (t.isF32())
    return LOOM_F32;
  if (t.isF64())
    return LOOM_F64;
  if (t.isInteger(32))
    return LOOM_I32;
  if (t.isInteger(64))
    return LOOM_I64;
  return -1;
}

FailureOr<int64_t> mlir::loom::runtimeGroup(Operation *op) {
  auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto mesh = SymbolTable::lookupNearestSymbolFrom<comm::MeshOp>(op, meshName);
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  int64_t all = 1;
  for (int64_t d : mesh.getShape())
    all *= d;
  if (mesh.getGroupSize(axes) == all)
    return 0;
  // The runtime's numbering (runtime/src/artifact/MeshGroups.h): bit i for
  // the mesh's axis i.
  if (mesh.getAxes().size() > 8)
    return op->emitError("this collective spans some of the axes of a mesh "
                         "of more than 8, whose groups the runtime cannot "
                         "number (one bit per axis, 8 at most)");
  int64_t group = 0;
  for (auto [i, axis] : llvm::enumerate(mesh.getAxes()))
    if (llvm::is_contained(axes, axis))
      group |= int64_t(1) << i;
  return group;
}

/// The buffer of `value`, copied into a fresh identity-layout buffer when it
/// is a strided view: the runtime collectives take dense buffers.
FailureOr<Value>
mlir::loom::denseBuffer(RewriterBase &rewriter, Operation *op, Value value,
                        const bufferization::BufferizationOptions &options,
                        bufferization::BufferizationState &state) {
  FailureOr<Value> buffer =
      bufferization::getBuffer(rewriter, value, options, state);
  if (failed(buffer))
    return failure();
  auto type = cast<MemRefType>(buffer->getType());
  if (type.getLayout().isIdentity())
    return buffer;
  auto dense = MemRefType::get(type.getShape(), type.getElementType());
  FailureOr<Value> copy =
      options.createAlloc(rewriter, op->getLoc(), dense, {});
  if (failed(copy) ||
      failed(options.createMemCpy(rewriter, op->getLoc(), *buffer, *copy)))
    return failure();
  return copy;
}
