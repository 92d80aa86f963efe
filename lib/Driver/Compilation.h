//===- Compilation.h - What compile()'s steps share --------------*- C++
//-*-===//
//
// compile() (Driver.cpp) runs as a pipeline of steps, each in its own file:
// check the options (Validate.cpp), make the context and load the module
// (Load.cpp), run the table of stages (Stages.cpp), then print the IR or
// write the artifact. This header is what they pass along.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DRIVER_COMPILATION_H
#define LOOM_LIB_DRIVER_COMPILATION_H

#include "Manifest.h"

#include "loom/Driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>

namespace mlir::loom::driver {

/// One compile's state besides the IR: the options as given, what they
/// resolve to, and the manifest as the stages fill it in.
struct Compilation {
  explicit Compilation(const CompileOptions &options);

  const CompileOptions &options;
  /// The options as the manifest records them: the machine model from
  /// --calibration and --link, an input file's element type, and the
  /// all-reduce bucket size the train stage chose.
  CompileOptions resolved;
  /// --optimizer parsed, with the schedule flags: what the train stage
  /// hands --loom-add-optimizer whole.
  OptimizerOptions optimizer;
  std::optional<CO2Options> co2;           ///< --co2, parsed (none: not given)
  std::optional<CompressOptions> compress; ///< --compress (none: off)
  std::optional<ZOOptions> zo;             ///< --zo, parsed (none: not given)
  llvm::raw_ostream &diagnostics;
  ManifestBuilder manifest;

  bool cuda() const { return options.target == "cuda"; }
  bool bf16() const { return options.precision == "bf16"; }
  /// Whether the user gave --`flag` explicitly.
  bool given(StringRef flag) const;
  /// Prints "loomc: error: `msg`": loomc's own errors about options and
  /// files, which are not diagnostics about the IR.
  void report(const llvm::Twine &msg) const;
  /// report(), then failure().
  LogicalResult error(const llvm::Twine &msg) const;
};

/// The MLIR context a compile runs in. Diagnostics about the IR are printed
/// to `diagnostics` with their source line, after options.onDiagnostic (if
/// any) has seen them.
struct CompileContext {
  explicit CompileContext(const Compilation &c);

  MLIRContext ctx;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler;
};

/// Checks the options, reporting the first that is wrong, and resolves
/// what they name: parses --optimizer and --co2 into `c`, reads
/// --calibration and --link into c.resolved.machine.
LogicalResult validate(Compilation &c);

/// Builds the --model or reads the input file, then verifies the module and
/// its loom.task. Null after an error (already reported).
OwningOpRef<ModuleOp> loadModule(Compilation &c, CompileContext &context);

/// Runs the stages from the model up to the one that produces `last` (none
/// for Stage::Model), each timed under `root`.
LogicalResult runStages(Compilation &c, ModuleOp module, TimingScope &root,
                        Stage last);

} // namespace mlir::loom::driver

#endif // LOOM_LIB_DRIVER_COMPILATION_H
