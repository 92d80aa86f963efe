//===- Outlined.h - Functions made of part of an entry ----------*- C++ -*-===//
#ifndef LOOM_SUPPORT_OUTLINED_H
#define LOOM_SUPPORT_OUTLINED_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::loom {

/// A new private function `name` of `type` with an empty entry block,
/// created before `entry`, for code moved out of it: `noinline` (LLVM would
/// inline a function called once back into the step) and internal (not
/// exported from the artifact, as a private func would be).
func::FuncOp createOutlinedFunction(func::FuncOp entry, Location loc,
                                    StringRef name, FunctionType type);

/// Whether a value of `type` can be a function argument after lowering
/// with bare pointers: not a memref, or one of static shape, strides and
/// offset.
bool passableAsBarePointer(Type type);

} // namespace mlir::loom

#endif // LOOM_SUPPORT_OUTLINED_H
