//===- Nesting.h - How deep a model may nest --------------------*- C++ -*-===//
#ifndef LOOM_SUPPORT_NESTING_H
#define LOOM_SUPPORT_NESTING_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::loom {

/// The deepest nesting of brackets in a model's text that loomc compiles and
/// loom-opt reads from a file. MLIR's parser recurses once per bracket
/// level, so a deeply nested input overflowed the stack (10,000 nested
/// scf.execute_region: SIGSEGV in the parser); a model nests a few levels.
constexpr unsigned kMaxNesting = 256;

/// Fails with an error at the bracket ('{', '(', '[' or '<') that opens
/// level kMaxNesting + 1 of the main buffer of `sourceMgr`, if any; brackets
/// in comments and string literals do not count. For text, before parsing.
LogicalResult checkTextNesting(llvm::SourceMgr &sourceMgr,
                               MLIRContext *context);

} // namespace mlir::loom

#endif // LOOM_SUPPORT_NESTING_H
