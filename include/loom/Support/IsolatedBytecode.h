//===- IsolatedBytecode.h - Read MLIR bytecode in a child process -*- C++ -*-=//
#ifndef LOOM_SUPPORT_ISOLATEDBYTECODE_H
#define LOOM_SUPPORT_ISOLATEDBYTECODE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::loom {

/// What the child process that reads bytecode may spend.
struct BytecodeReadLimits {
  /// CPU seconds; 0 picks defaultCpuSeconds() for the input.
  double cpuSeconds = 0;
  /// Bytes of heap (RLIMIT_DATA); 0 picks defaultMemoryBytes() for the
  /// input. Not applied in sanitizer builds, whose shadow memory counts.
  uint64_t memoryBytes = 0;

  /// 30 s and 2 s more per MiB: a reader that works reads far faster.
  static double defaultCpuSeconds(size_t inputBytes);
  /// 1 GiB and 16 bytes per byte of input.
  static uint64_t defaultMemoryBytes(size_t inputBytes);
};

/// Reads MLIR bytecode `input` in a child process and returns the module it
/// holds as generic-form MLIR text with its locations, which the caller
/// parses as it parses any text.
///
/// MLIR's bytecode reader is not safe on malformed input: mutated bytecode
/// corrupted its heap, looped without end, or failed without an error
/// (docs/robustness.md). In a child, with the dialects of `context`'s
/// registry, whether it accepts unregistered dialects, and `limits` on CPU
/// time and memory (and twice the CPU time and 5 s of wall-clock time, for
/// a child that blocks), whatever the reader does to itself stays there. The
/// child verifies what it read and prints its own diagnostics to stderr;
/// a child that crashes, runs out of time or memory, or cannot start gets an
/// error at `input`'s name (FILE:0:0, as the reader's own errors) in
/// `context`. Fails in both cases.
FailureOr<std::string> readBytecodeIsolated(llvm::MemoryBufferRef input,
                                            MLIRContext *context,
                                            BytecodeReadLimits limits = {});

/// How loomc and loom-opt take their input: if `input` is bytecode, replaces
/// it with the text readBytecodeIsolated passes back (under the same name);
/// text stays as it is. Fails as readBytecodeIsolated does.
LogicalResult
replaceBytecodeWithText(std::unique_ptr<llvm::MemoryBuffer> &input,
                        MLIRContext *context, BytecodeReadLimits limits = {});

} // namespace mlir::loom

#endif // LOOM_SUPPORT_ISOLATEDBYTECODE_H
