//===- loom-opt.cpp - Runs Loom and upstream passes on MLIR files ---------===//
#include "loom/InitAll.h"
#include "loom/Support/Nesting.h"
#include "loom/Version.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

/// MLIR's parser recurses once per nesting level, so a deeply nested file
/// would overflow the stack (loom/Support/Nesting.h); a file (not stdin,
/// which MlirOptMain reads itself) gets the error loomc gives instead.
static bool nestsTooDeep(llvm::StringRef inputFilename) {
  if (inputFilename == "-")
    return false;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(inputFilename);
  if (!file) // MlirOptMain says why
    return false;
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  return mlir::failed(mlir::loom::checkTextNesting(sourceMgr, &context));
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  mlir::loom::registerAllPasses();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << LOOM_VERSION_STRING << "\n"; });
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Loom optimizer driver: loom and upstream passes\n",
      registry);
  if (nestsTooDeep(inputFilename))
    return EXIT_FAILURE;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
