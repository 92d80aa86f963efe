//===- IrMutatorTest.cpp - The compiler fuzzer's IR edits -----------------===//
//
// The mutator exists so that mutants get past the parser and the verifier
// to the passes; byte-level mutants of MLIR text rarely do. These
// tests hold it to that on the example model, and to what crossOverIr
// promises about the flags line.
//
//===----------------------------------------------------------------------===//

#include "IrMutator.h"

#include "loom/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using mlir::loom::fuzz::crossOverIr;
using mlir::loom::fuzz::mutateIr;

namespace {

std::string readExample() {
  std::ifstream in(LOOM_SOURCE_DIR "/examples/mlp.mlir");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

enum class Verdict { ParseError, VerifyError, Valid };

Verdict check(const std::string &text) {
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!module)
    return Verdict::ParseError;
  return mlir::succeeded(mlir::verify(*module)) ? Verdict::Valid
                                                : Verdict::VerifyError;
}

TEST(IrMutator, ManyMutantsGetPastTheParser) {
  const std::string model = "// flags: --dp=2\n" + readExample();
  ASSERT_GT(model.size(), 1000u);
  ASSERT_EQ(check(model), Verdict::Valid);
  std::mt19937_64 random(1);
  int changed = 0, parsed = 0, valid = 0;
  const int count = 200;
  for (int i = 0; i < count; ++i) {
    std::string mutant = mutateIr(model, random);
    changed += mutant != model;
    Verdict verdict = check(mutant);
    parsed += verdict != Verdict::ParseError;
    valid += verdict == Verdict::Valid;
  }
  EXPECT_EQ(changed, count);
  // Measured with seed 1: 93 of 200 parse, 74 of them verify. (The rest
  // are mostly operands of another type, which the parser checks.) An
  // editor that only ever produced valid IR would explore nothing.
  EXPECT_GE(parsed, count * 35 / 100);
  EXPECT_GE(valid, count / 4);
  EXPECT_LT(valid, count * 9 / 10);
}

TEST(IrMutator, TheSameSeedGivesTheSameMutant) {
  const std::string model = readExample();
  std::mt19937_64 a(42), b(42);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(mutateIr(model, a), mutateIr(model, b));
}

TEST(IrMutator, NothingToEditLeavesTheText) {
  std::mt19937_64 random(3);
  EXPECT_EQ(mutateIr("", random), "");
  EXPECT_EQ(mutateIr("module {\n}\n", random), "module {\n}\n");
}

TEST(IrMutator, CrossOverTakesTheFlagsLineOrSplicesLines) {
  const std::string body = readExample();
  const std::string mine = "// flags: --dp=2\n" + body;
  const std::string other = "// flags: --target=cuda\n" + body;
  std::mt19937_64 random(5);
  int tookFlags = 0, spliced = 0;
  for (int i = 0; i < 50; ++i) {
    std::string mixed = crossOverIr(mine, other, random);
    if (mixed == other) {
      ++tookFlags; // the other's flags line on this body
      continue;
    }
    // Otherwise this input's flags stay and lines of the other are added.
    EXPECT_EQ(mixed.rfind("// flags: --dp=2\n", 0), 0u);
    EXPECT_GT(mixed.size(), mine.size());
    ++spliced;
  }
  EXPECT_GT(tookFlags, 0);
  EXPECT_GT(spliced, 0);
  // An input without a flags line gets the other's (half of the time).
  bool gotFlags = false;
  for (int i = 0; i < 20 && !gotFlags; ++i)
    gotFlags = crossOverIr(body, other, random) == other;
  EXPECT_TRUE(gotFlags);
}

} // namespace
