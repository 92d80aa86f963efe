//===- PartitionModule.h - An LLVM module in parts for parallel builds
//-*-C++-*-//
//
// LLVM optimises and generates code for one module on one thread. loomc's
// lowered module is a few large functions (one per entry point, the step's
// whole forward and backward pass inlined), so it is cut into parts of
// whole functions, balanced by size, each optimised and compiled on a
// thread of its own (EmitObject.cpp) and linked into one model.so.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DRIVER_PARTITIONMODULE_H
#define LOOM_LIB_DRIVER_PARTITIONMODULE_H

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::loom::driver {

/// Splits `module` into at most `parts` modules, returned as bitcode (each
/// thread reads its part into an LLVMContext of its own). A function and
/// the internal functions it calls stay together, so nothing that could be
/// inlined is cut apart; the groups, in the module's order, are cut into
/// runs of about equal size, so that the objects linked in part order keep
/// the module's order of functions (and its code layout). Internal
/// symbols used across parts become hidden globals (model.so does not
/// export them); constant internal globals are copied into every part that
/// uses them, so each part can still fold them. Empty when one part would
/// hold everything (one part asked for, or one group): compile `module` as
/// it is. Otherwise `module` is left changed (its shared internal symbols
/// hidden globals), to be dropped.
llvm::SmallVector<std::string> partitionModule(llvm::Module &module,
                                               unsigned parts);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_PARTITIONMODULE_H
