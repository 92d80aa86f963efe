//===- SymbolText.h - A symbol's text, its name aside -----------*- C++ -*-===//
#ifndef LOOM_SUPPORT_SYMBOLTEXT_H
#define LOOM_SUPPORT_SYMBOLTEXT_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::loom {

/// `symbol` printed (generic form, values numbered from its own scope,
/// no locations) as if it were named `name`: two functions, kernels or
/// globals that differ only in their names print the same. The passes that
/// keep one copy of identical code (--loom-outline-loop-nests,
/// --loom-merge-gpu-modules) compare these.
std::string textNamed(Operation *symbol, StringRef name);

} // namespace mlir::loom

#endif // LOOM_SUPPORT_SYMBOLTEXT_H
