//===- IsolatedBytecodeTest.cpp - Bytecode read in a child process --------===//
//
// readBytecodeIsolated (loom/Support/IsolatedBytecode.h) runs MLIR's
// bytecode reader in a child process. These tests check that what comes
// back is the reader's IR (against reading the same bytecode in this
// process), that the child's diagnostics arrive in the caller's context with
// their severity, location and notes, and that a child that loops or runs
// out of memory is an error, not a hang or a crash of the caller.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/IsolatedBytecode.h"
#include "loom/InitAll.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using mlir::loom::BytecodeReadLimits;
using mlir::loom::readBytecodeIsolated;

namespace {

const char *kModel = R"mlir(
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

/// An addf whose result type differs from its operands': it parses, and
/// the verifier rejects it at line 3, column 8 of "model.mlir".
const char *kInvalid = R"mlir(
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "arith.addf"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return %a : tensor<4xf32>
}
)mlir";

/// A module whose one constant holds `bytes` distinct bytes: reading it
/// allocates that much at once (an mmap of its own, whatever the heap the
/// child inherits has free).
std::string bigModel(size_t bytes) {
  static const char digits[] = "0123456789ABCDEF";
  std::string hex = "0x";
  hex.reserve(2 * bytes + 2);
  for (size_t i = 0; i < bytes; ++i) {
    hex += digits[(i * 7) & 15];
    hex += digits[(i * 13 + i / 16) & 15];
  }
  std::string type = "tensor<" + std::to_string(bytes) + "xi8>";
  return "func.func @f() -> " + type + " {\n  %0 = arith.constant dense<\"" +
         hex + "\"> : " + type + "\n  return %0 : " + type + "\n}\n";
}

struct IsolatedBytecode : public ::testing::Test {
  IsolatedBytecode() {
    loom::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    handler = std::make_unique<ScopedDiagnosticHandler>(
        context.get(), [this](Diagnostic &d) {
          seen.push_back(format(d));
          for (Diagnostic &note : d.getNotes())
            seen.push_back("  " + format(note));
          return success();
        });
  }

  static std::string format(Diagnostic &d) {
    std::string out;
    llvm::raw_string_ostream os(out);
    os << d.getLocation() << " "
       << (d.getSeverity() == DiagnosticSeverity::Error     ? "error"
           : d.getSeverity() == DiagnosticSeverity::Warning ? "warning"
           : d.getSeverity() == DiagnosticSeverity::Note    ? "note"
                                                            : "remark")
       << ": " << d.str();
    return out;
  }

  /// Bytecode of `text` parsed as "model.mlir", unverified.
  std::string bytecodeOf(const char *text) {
    ParserConfig config(context.get(), /*verifyAfterParse=*/false);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, config, "model.mlir");
    EXPECT_TRUE(module);
    std::string out;
    llvm::raw_string_ostream os(out);
    EXPECT_TRUE(succeeded(writeBytecodeToFile(*module, os)));
    return out;
  }

  FailureOr<std::string> read(const std::string &bytecode,
                              BytecodeReadLimits limits = {}) {
    return readBytecodeIsolated(llvm::MemoryBufferRef(bytecode, "in.mlirbc"),
                                context.get(), limits);
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> seen;
};

std::string print(Operation *op) {
  std::string out;
  llvm::raw_string_ostream os(out);
  op->print(os, OpPrintingFlags().enableDebugInfo());
  return out;
}

TEST_F(IsolatedBytecode, ValidBytecodeComesBackAsTheReadersIR) {
  std::string bytecode = bytecodeOf(kModel);
  FailureOr<std::string> text = read(bytecode);
  ASSERT_TRUE(succeeded(text));
  EXPECT_TRUE(seen.empty());
  // The independent reading: MLIR's reader in this process.
  OwningOpRef<ModuleOp> direct = parseSourceString<ModuleOp>(
      bytecode, ParserConfig(context.get()), "in.mlirbc");
  OwningOpRef<ModuleOp> child =
      parseSourceString<ModuleOp>(*text, ParserConfig(context.get()));
  ASSERT_TRUE(direct && child);
  EXPECT_EQ(print(*child), print(*direct));
  // With the source's locations.
  EXPECT_NE(print(*child).find("\"model.mlir\":3:8"), std::string::npos);
}

TEST_F(IsolatedBytecode, ReaderErrorsArriveWithTheirNotes) {
  std::string bytecode = bytecodeOf(kModel);
  EXPECT_TRUE(failed(read(bytecode.substr(0, bytecode.size() / 2))));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].rfind("loc(\"in.mlirbc\":0:0) error: ", 0), 0u) << seen[0];
  EXPECT_EQ(seen[1].rfind("  loc(\"in.mlirbc\":0:0) note: in bytecode "
                          "version",
                          0),
            0u)
      << seen[1];
}

TEST_F(IsolatedBytecode, VerifierErrorsKeepTheSourceLocation) {
  EXPECT_TRUE(failed(read(bytecodeOf(kInvalid))));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0].rfind("loc(\"model.mlir\":3:8) error: 'arith.addf' op", 0),
            0u)
      << seen[0];
}

TEST_F(IsolatedBytecode, NotBytecodeIsAnError) {
  EXPECT_TRUE(failed(read("ML\xef"
                          "R and then nothing of bytecode")));
  ASSERT_FALSE(seen.empty());
  EXPECT_NE(seen[0].find(" error: "), std::string::npos) << seen[0];
}

TEST_F(IsolatedBytecode, ALoopingReaderIsStoppedAtItsCpuLimit) {
  // A mutant of test/passes/Distribute/co2.mlir's bytecode on which
  // MLIR 22's reader loops without end.
  auto file = llvm::MemoryBuffer::getFile(
      LOOM_SOURCE_DIR "/test/tools/loom-opt/Inputs/looping.mlirbc");
  ASSERT_TRUE(bool(file));
  BytecodeReadLimits limits;
  limits.cpuSeconds = 1;
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(failed(read((*file)->getBuffer().str(), limits)));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // One CPU second, and the hard limit's second; far from a hang even on
  // a loaded machine.
  EXPECT_LT(seconds, 60.0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("did not finish within 1.0 s of CPU time"),
            std::string::npos)
      << seen[0];
}

TEST_F(IsolatedBytecode, ABlockedChildIsStoppedByTheWallClock) {
  // A child that waits on a lock spends no CPU time (hook: it pauses).
  setenv("LOOM_TEST_BYTECODE_CHILD_BLOCKS", "1", 1);
  BytecodeReadLimits limits;
  limits.cpuSeconds = 0.5;
  FailureOr<std::string> text = read(bytecodeOf(kModel), limits);
  unsetenv("LOOM_TEST_BYTECODE_CHILD_BLOCKS");
  EXPECT_TRUE(failed(text));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("did not finish within 6.0 s on this input"),
            std::string::npos)
      << seen[0];
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_F(IsolatedBytecode, AChildOutOfMemoryIsAnErrorHere) {
  BytecodeReadLimits limits;
  limits.memoryBytes = 1; // below what the child holds already
  // A small model may parse in the free heap the child inherits (earlier
  // tests of this process leave some): 16 MiB of constant cannot.
  const std::string big = bigModel(16 << 20);
  EXPECT_TRUE(failed(read(bytecodeOf(big.c_str()), limits)));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("crashed or ran out of memory"), std::string::npos)
      << seen[0];
  // This process goes on: the same bytecode reads with the default limits.
  seen.clear();
  EXPECT_TRUE(succeeded(read(bytecodeOf(kModel))));
}
#endif

} // namespace
