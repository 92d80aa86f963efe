//===- NestingTest.cpp - What counts as nesting in a model's text ---------===//
//
// checkTextNesting (loom/Support/Nesting.h) counts brackets before MLIR's
// parser sees the text; these tests pin down what it counts (brackets and
// '<' of types) and what it does not (comments, strings with escaped quotes
// and "//" in them, the '>' of "->"), and where its error points.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/Nesting.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <string>

using mlir::loom::kMaxNesting;

namespace {

/// "" if `text` passes, else the error's "line:col: message".
std::string check(const std::string &text) {
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "in.mlir"), llvm::SMLoc());
  std::string error;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    auto loc = llvm::cast<mlir::FileLineColLoc>(d.getLocation());
    error = std::to_string(loc.getLine()) + ":" +
            std::to_string(loc.getColumn()) + ": " + d.str();
    return mlir::success();
  });
  bool failed = mlir::failed(mlir::loom::checkTextNesting(sourceMgr, &context));
  EXPECT_EQ(failed, !error.empty());
  return error;
}

std::string repeat(const std::string &s, unsigned n) {
  std::string out;
  for (unsigned i = 0; i < n; ++i)
    out += s;
  return out;
}

TEST(Nesting, EachBracketKindCountsUpToTheLimit) {
  for (std::string open : {"{", "(", "[", "<"}) {
    EXPECT_EQ(check(repeat(open, kMaxNesting)), "") << open;
    std::string error = check(repeat(open, kMaxNesting + 1));
    EXPECT_EQ(error.rfind("1:" + std::to_string(kMaxNesting + 1) +
                              ": the input nests deeper than 256 levels",
                          0),
              0u)
        << open << ": " << error;
  }
}

TEST(Nesting, ClosingBracketsEndLevels) {
  // Many levels in turn, never more than two at once.
  EXPECT_EQ(check(repeat("{(})[<]>", 10 * kMaxNesting)), "");
  // A stray closing bracket does not make room for more levels.
  EXPECT_NE(check("}}}}" + repeat("{", kMaxNesting + 1)), "");
}

TEST(Nesting, ArrowsAreNotClosingBrackets) {
  // Every "->" would otherwise close one of the '<' levels.
  std::string text = repeat("<", kMaxNesting) + repeat("->", 50) + "<";
  EXPECT_NE(check(text), "");
  EXPECT_EQ(check(repeat("(a) -> (b)\n", 1000)), "");
}

TEST(Nesting, CommentsAndStringsDoNotCount) {
  std::string deep = repeat("{", 2 * kMaxNesting);
  EXPECT_EQ(check("// " + deep + "\nmodule {}\n"), "");
  EXPECT_EQ(check("\"" + deep + "\""), "");
  // An escaped quote does not end the string; "//" in it is no comment.
  EXPECT_EQ(check("\"\\\"" + deep + "\""), "");
  EXPECT_EQ(check("loc(\"http://x\") " + repeat("{", 3) + "}}}"), "");
  // After the string, brackets count again: the error is on line 2.
  std::string error = check("\"" + deep + "\"\n" + deep);
  EXPECT_EQ(error.rfind("2:" + std::to_string(kMaxNesting + 1) + ":", 0), 0u)
      << error;
}

TEST(Nesting, AnUnterminatedStringOrCommentEndsTheScan) {
  EXPECT_EQ(check("\"" + repeat("{", 2 * kMaxNesting)), "");
  EXPECT_EQ(check("// " + repeat("{", 2 * kMaxNesting)), "");
  EXPECT_EQ(check("\"\\"), "");
}

} // namespace
