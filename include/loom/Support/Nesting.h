//===- Nesting.h - How deep a model may nest --------------------*- C++ -*-===//
#ifndef LOOM_SUPPORT_NESTING_H
#define LOOM_SUPPORT_NESTING_H

#include "mlir/IR/Operation.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::loom {

/// The deepest nesting loomc compiles and loom-opt reads: of brackets in a
/// model's text, and of regions in its IR. MLIR's parser recurses once per
/// bracket level, and walks over the IR once per region level, so a deeply
/// nested input overflowed the stack (10,000 nested scf.execute_region: SIGSEGV
/// in the parser); a model nests a few levels.
constexpr unsigned kMaxNesting = 256;

/// Fails with an error at the bracket ('{', '(', '[' or '<') that opens
/// level kMaxNesting + 1 of the main buffer of `sourceMgr`, if any; brackets
/// in comments and string literals do not count. For text, before parsing.
LogicalResult checkTextNesting(llvm::SourceMgr &sourceMgr,
                               MLIRContext *context);

/// Fails with an error at the first operation (in pre-order) nested in more
/// than kMaxNesting regions below `root`. Iterative, so that it is safe on
/// any depth: for IR that did not come from checked text (bytecode).
LogicalResult checkRegionNesting(Operation *root);

} // namespace mlir::loom

#endif // LOOM_SUPPORT_NESTING_H
