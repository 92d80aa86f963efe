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

/// Whether `op` loads a buffer's address from an exported entry's array
/// (--loom-load-entry-arguments), which nothing writes during a step.
bool isArgumentLoad(Operation *op);

/// Whether a copy of `op` may stand wherever its results are used: it has
/// no effects and no regions (constants, views, descriptors, address
/// casts), or it is one of the arena's slices (an address the runtime
/// computes, opaque to LLVM: PlanBuffers.cpp) or an argument load.
bool isRecomputable(Operation *op);

} // namespace mlir::loom

#endif // LOOM_PASSES_CPU_BUFFERAT_H
