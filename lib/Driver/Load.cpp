//===- Load.cpp - The context, and the module loomc compiles --------------===//
//
// The model comes from --model (built here, in the element type --dtype
// names) or from a file (text, or bytecode read in a child process). A file
// decides its own element type, and one that is already a training step
// was made with its own train flags: both are checked against what the
// user gave. Either way the module is verified, loom.task included, before
// any stage runs.
//
//===----------------------------------------------------------------------===//
#include "Compilation.h"
#include "TaskCheck.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Driver/ModelZoo.h"
#include "loom/InitAll.h"
#include "loom/Support/IsolatedBytecode.h"
#include "loom/Support/Nesting.h"
#include "passes/Analysis/Stage.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

static DialectRegistry allDialects() {
  DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}

CompileContext::CompileContext(const Compilation &c)
    : ctx(allDialects()), handler(sourceMgr, &ctx, c.diagnostics) {
  ctx.loadDialect<LoomDialect>();
  const CompileOptions &options = c.options;
  if (!options.printOpOnDiagnostic)
    ctx.printOpOnDiagnostic(false);
  // Registered last, so it sees each diagnostic first; failure() passes it
  // on to the printer.
  if (options.onDiagnostic)
    ctx.getDiagEngine().registerHandler([&options](Diagnostic &diagnostic) {
      options.onDiagnostic(diagnostic);
      return failure();
    });
}

/// The --model, with parameters of the type --dtype names.
static OwningOpRef<ModuleOp> buildFromSpec(const Compilation &c,
                                           MLIRContext *ctx) {
  auto spec = parseModelSpec(c.options.modelSpec);
  if (!spec) {
    c.report(llvm::toString(spec.takeError()));
    return {};
  }
  // --tp's divisibility by the spec's field names (the pass says the same
  // of any model, at the op).
  const int64_t tp = c.options.tp;
  const bool gpt = spec->isGpt();
  const int64_t units = spec->splitUnits();
  if (tp > 1 && units % tp) {
    c.report("--tp=" + std::to_string(tp) + ": the model's " +
             std::to_string(units) + (gpt ? " heads" : " hidden units") +
             " cannot be shared equally by " + std::to_string(tp) +
             " ranks; use a --tp that divides " + (gpt ? "heads" : "hidden"));
    return {};
  }
  // A pipelined model is built for one micro-batch: its step runs
  // --micro-batches of them (Validate.cpp checks that they divide it).
  if (c.options.pp > 1)
    spec->batch() /= c.options.microBatches;
  Type et = c.options.dtype == "f64" ? Type(Float64Type::get(ctx))
                                     : Type(Float32Type::get(ctx));
  return buildModel(ctx, *spec, et);
}

/// The input file (or inputText), parsed.
static OwningOpRef<ModuleOp> parseInputFile(const Compilation &c,
                                            CompileContext &context) {
  const CompileOptions &options = c.options;
  std::string err;
  std::unique_ptr<llvm::MemoryBuffer> file =
      options.inputText ? llvm::MemoryBuffer::getMemBufferCopy(
                              *options.inputText, options.inputFile)
                        : openInputFile(options.inputFile, &err);
  if (!file) {
    c.report(err);
    return {};
  }
  // MLIR's bytecode reader is not safe on malformed input: a child
  // process reads bytecode and passes back its text.
  if (failed(replaceBytecodeWithText(file, &context.ctx)))
    return {};
  context.sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  if (failed(checkTextNesting(context.sourceMgr, &context.ctx)))
    return {};
  return parseSourceFile<ModuleOp>(context.sourceMgr, &context.ctx);
}

/// The flags that configure the train stage: an input that is already a
/// training step was made with its own, and they cannot change it now.
static constexpr const char *kTrainFlags[] = {"optimizer",
                                              "warmup-steps",
                                              "decay-steps",
                                              "min-lr",
                                              "clip-norm",
                                              "dp",
                                              "tp",
                                              "overlap",
                                              "pp",
                                              "micro-batches",
                                              "sequence-parallel",
                                              "bucket-mib",
                                              "co2",
                                              "calibration",
                                              "link",
                                              "zero",
                                              "zo",
                                              "compress",
                                              "partition-sequences"};

/// Takes the element type of a file's model from its IR (--dtype, which
/// chooses it for a --model, may only agree), and refuses train flags for a
/// file that is already a training step.
static LogicalResult checkInputAgainstFlags(Compilation &c, ModuleOp module) {
  const CompileOptions &options = c.options;
  for (ParamOp p : module.getOps<ParamOp>()) {
    std::string irType =
        p.getTensorType().getElementType().isF64() ? "f64" : "f32";
    if (c.given("dtype") && options.dtype != irType)
      return c.error("--dtype=" + options.dtype + " does not apply to " +
                     options.inputFile + ": its parameters are " + irType +
                     " (--dtype chooses the element type of a --model)");
    c.resolved.dtype = irType;
    break;
  }
  if (!isTrainingStep(module))
    return success();
  std::string flags;
  for (const char *flag : kTrainFlags)
    if (c.given(flag))
      flags += (flags.empty() ? "--" : ", --") + std::string(flag);
  if (flags.empty())
    return success();
  return c.error(options.inputFile +
                 " is already a training step (it defines "
                 "@loss_and_grad), made with its own optimizer and "
                 "parallelism: " +
                 flags + " cannot change it; compile the model instead");
}

/// loomc compiles a model or a training step. The IR of a later stage (a
/// --stage=linalg, bufferized or lowered output fed back) has lost what
/// the manifest is made from (the parameters' initialisers, the task's
/// inputs), so it is refused, with what continues it instead (for the
/// target asked for).
static LogicalResult checkInputStage(ModuleOp module, bool cuda) {
  StageEvidence found = detectStage(module);
  if (found.stage <= Stage::Train)
    return success();
  Operation *at = found.op ? found.op : module.getOperation();
  InFlightDiagnostic diag = at->emitError();
  diag << "this is the " << getStageName(found.stage)
       << " stage's IR (as `loomc --emit=mlir --stage="
       << getStageName(found.stage)
       << "` prints it), but loomc compiles the model or train stage only; ";
  if (found.stage == Stage::Lowered)
    return diag << "`mlir-translate --mlir-to-llvmir` translates this one "
                   "to LLVM IR";
  return diag << "continue this one with loom-opt: "
              << getPipelinesBetween(found.stage, Stage::Lowered, cuda)
              << " (docs/pipeline.md)";
}

OwningOpRef<ModuleOp> mlir::loom::driver::loadModule(Compilation &c,
                                                     CompileContext &context) {
  OwningOpRef<ModuleOp> module;
  if (!c.options.modelSpec.empty()) {
    module = buildFromSpec(c, &context.ctx);
  } else {
    module = parseInputFile(c, context);
    if (module && (failed(checkInputStage(*module, c.cuda())) ||
                   failed(checkInputAgainstFlags(c, *module))))
      return {};
  }
  if (!module || failed(verify(*module)) || failed(verifyTask(*module)))
    return {};
  return module;
}
