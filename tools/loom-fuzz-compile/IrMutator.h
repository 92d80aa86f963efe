//===- IrMutator.h - Edits of MLIR text, for the compiler's fuzzer -*- C++ -*-//
//
// Byte-level mutations of MLIR text almost always stop at the parser. These
// edit a model or training step the way a person (or a bug upstream) would,
// so that most mutants parse and reach the verifiers and the passes: a
// dimension changed in one type or everywhere, a number or float set to an
// edge value, an element type changed, an operand or op name replaced by
// another of the input's, a line deleted, duplicated or moved, an attribute
// dictionary dropped, the flags line of another input taken over. They are
// the mutations of test/robustness/Inputs/mutate_ir.py, in process and
// driven by coverage (LLVMFuzzerCustomMutator in CompileFuzz.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TOOLS_LOOM_FUZZ_COMPILE_IRMUTATOR_H
#define LOOM_TOOLS_LOOM_FUZZ_COMPILE_IRMUTATOR_H

#include <cstdint>
#include <random>
#include <string>

namespace mlir::loom::fuzz {

/// How an input's first line gives loomc's flags (CompileFuzz.cpp).
constexpr const char *kFlagsPrefix = "// flags:";

/// One edit of `text` (unchanged only when it offers nothing to edit).
std::string mutateIr(const std::string &text, std::mt19937_64 &random);

/// `text` with its `// flags:` line replaced by `other`'s (or `other`'s
/// inserted, or its own dropped), or a run of `other`'s lines spliced in.
std::string crossOverIr(const std::string &text, const std::string &other,
                        std::mt19937_64 &random);

} // namespace mlir::loom::fuzz

#endif // LOOM_TOOLS_LOOM_FUZZ_COMPILE_IRMUTATOR_H
