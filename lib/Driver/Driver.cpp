//===- Driver.cpp - The loomc compiler driver -----------------------------===//
//
// compile() is a pipeline: check the options (Validate.cpp), make the
// context and load the module (Load.cpp), run the stages (Stages.cpp), then
// print the IR (--emit=mlir) or write the artifact: model.so and
// manifest.json.
//
//===----------------------------------------------------------------------===//
#include "loom/Driver/Driver.h"

#include "Compilation.h"
#include "EmitObject.h"

#include "loom/InitAll.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cctype>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

void mlir::loom::driver::registerPassesOnce() {
  // The pipelines name upstream passes textually, and
  // --mlir-print-ir-after=<pass> looks passes up while options are parsed.
  static const bool registered = (registerAllPasses(), true);
  (void)registered;
  // Every stage applies these (Stages.cpp), and applying them fails (silently)
  // unless they were constructed; both calls only construct them once.
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
}

std::string mlir::loom::driver::withoutCompileTimes(std::string ir) {
  const std::string key = "TimeInMs = ", type = " : i64";
  for (size_t at = ir.find(key); at != std::string::npos;
       at = ir.find(key, at)) {
    size_t begin = at;
    while (begin > 0 && std::isalpha(static_cast<unsigned char>(ir[begin - 1])))
      --begin;
    size_t end = ir.find(type, at);
    if (end == std::string::npos)
      break;
    ir.erase(begin, end + type.size() - begin);
    at = begin;
  }
  return ir;
}

Compilation::Compilation(const CompileOptions &options)
    : options(options), resolved(options),
      diagnostics(options.diagnostics ? *options.diagnostics : llvm::errs()) {}

bool Compilation::given(StringRef flag) const {
  return llvm::is_contained(options.givenFlags, flag);
}

void Compilation::report(const llvm::Twine &msg) const {
  diagnostics << "loomc: error: " << msg << "\n";
}

LogicalResult Compilation::error(const llvm::Twine &msg) const {
  report(msg);
  return failure();
}

/// Prints `module` to options.printTo, else to the -o file, or stdout when
/// none (or "-") was given.
static LogicalResult printModule(const Compilation &c, ModuleOp module) {
  if (c.options.printTo) {
    module.print(*c.options.printTo);
    return success();
  }
  StringRef output = c.options.outputDir;
  std::string err;
  auto file = openOutputFile(output.empty() ? "-" : output, &err);
  if (!file)
    return c.error(err);
  module.print(file->os());
  file->os() << "\n";
  file->keep();
  return success();
}

/// Writes OUTDIR/model.so and OUTDIR/manifest.json.
static LogicalResult writeArtifact(Compilation &c, ModuleOp module,
                                   TimingScope &root) {
  StringRef dir = c.options.outputDir;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return c.error("cannot create " + dir + ": " + ec.message());
  {
    TimingScope scope = root.nest("emit-shared-object");
    EmitOptions emit;
    emit.threads = c.options.compileThreads;
    emit.timePasses = c.options.timeLlvmPasses;
    if (failed(emitSharedObject(module, dir, emit, scope)))
      return failure();
  }
  return c.manifest.write(dir);
}

LogicalResult mlir::loom::driver::compile(const CompileOptions &options) {
  Compilation c(options);
  if (failed(validate(c)))
    return failure();
  registerPassesOnce();
  CompileContext context(c);
  OwningOpRef<ModuleOp> module = loadModule(c, context);
  if (!module)
    return failure();
  // The model stage runs no passes: --mlir-timing prints no report for it.
  if (options.emitMlir && options.stage == Stage::Model)
    return printModule(c, *module);

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  Stage last = options.emitMlir ? options.stage : Stage::Lowered;
  if (failed(runStages(c, *module, root, last)))
    return failure();
  if (options.emitMlir)
    return printModule(c, *module);
  return writeArtifact(c, *module, root);
}
