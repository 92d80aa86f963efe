//===- loom-opt.cpp - Runs Loom and upstream passes on MLIR files ---------===//
#include "loom/InitAll.h"
#include "loom/Version.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  mlir::loom::registerAllPasses();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << LOOM_VERSION_STRING << "\n"; });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Loom optimizer driver: loom and upstream passes\n",
      registry));
}
