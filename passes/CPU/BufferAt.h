//===- BufferAt.h - A buffer of static shape at an address ------*- C++ -*-===//
#ifndef LOOM_PASSES_CPU_BUFFERAT_H
#define LOOM_PASSES_CPU_BUFFERAT_H

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/Builders.h"

namespace mlir::loom {

/// A memref of `type` (static shape, identity layout) whose data starts at
/// `address` (an `!llvm.ptr`): its LLVM descriptor, cast back to the memref
/// for the ops not yet lowered. The arena's slices and the entries'
/// arguments loaded from the runtime's array are such buffers.
Value bufferAt(OpBuilder &b, Location loc, const LLVMTypeConverter &converter,
               MemRefType type, Value address);

} // namespace mlir::loom

#endif // LOOM_PASSES_CPU_BUFFERAT_H
