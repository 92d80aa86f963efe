//===- loom-opt.cpp - Runs Loom and upstream passes on MLIR files ---------===//
#include "loom/InitAll.h"
#include "loom/Support/IsolatedBytecode.h"
#include "loom/Support/Nesting.h"
#include "loom/Support/PassCounter.h"
#include "loom/Version.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

static llvm::cl::opt<double> bytecodeCpuLimit(
    "bytecode-cpu-limit",
    llvm::cl::desc("CPU seconds the child process that reads bytecode input "
                   "may take (default: 30 and 2 per MiB of input); MLIR's "
                   "bytecode reader can loop on malformed bytecode"),
    llvm::cl::init(0.0));

/// Checks the input before MLIR parses it, as loomc does. Bytecode: MLIR's
/// reader is not safe on malformed bytecode, so a child process reads it
/// (loom/Support/IsolatedBytecode.h) and `input` becomes the text it passes
/// back. Text: MLIR's parser recurses once per nesting level, so deeply
/// nested text would overflow the stack (loom/Support/Nesting.h).
static LogicalResult checkInput(std::unique_ptr<llvm::MemoryBuffer> &input,
                                const DialectRegistry &registry,
                                const MlirOptMainConfig &config) {
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  loom::BytecodeReadLimits limits;
  limits.cpuSeconds = bytecodeCpuLimit;
  if (failed(loom::replaceBytecodeWithText(input, &context, limits)))
    return failure();
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  return loom::checkTextNesting(sourceMgr, &context);
}

/// What upstream's MlirOptMain(argc, argv, ...) does, except that the input
/// (a file or stdin, read once) is checked before it is parsed.
static LogicalResult run(int argc, char **argv, StringRef inputFilename,
                         StringRef outputFilename, DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // --mlir-pass-statistics with the counts of Loom's passes, which MLIR's
  // report leaves out (loom/Support/PassCounter.h).
  config.setPassPipelineSetupFn(
      [pipeline = MlirOptMainConfig(config)](PassManager &pm) {
        if (failed(pipeline.setupPassPipeline(pm)))
          return failure();
        loom::addPassCounterReport(pm);
        return success();
      });
  // Those read no input: upstream's driver prints them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return MlirOptMain(argc, argv, inputFilename, outputFilename, registry);
  if (inputFilename == "-" &&
      llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  // 0 is the default (chosen from the input's size); a negative or NaN
  // limit would make every bytecode input look like a runaway read.
  if (!(bytecodeCpuLimit >= 0) || !std::isfinite(bytecodeCpuLimit) ||
      (bytecodeCpuLimit.getNumOccurrences() && bytecodeCpuLimit == 0)) {
    llvm::errs() << "loom-opt: error: --bytecode-cpu-limit must be a positive "
                    "number of seconds, got "
                 << bytecodeCpuLimit << "\n";
    return failure();
  }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return failure();
  }
  if (failed(checkInput(input, registry, config)))
    return failure();
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return failure();
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return failure();
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  DialectRegistry registry;
  loom::registerAllDialects(registry);
  loom::registerAllPasses();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << LOOM_VERSION_STRING << "\n"; });
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "Loom optimizer driver: loom and upstream passes\n",
      registry);
  return asMainReturnCode(
      run(argc, argv, inputFilename, outputFilename, registry));
}
