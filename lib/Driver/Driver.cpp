//===- Driver.cpp - The loomc compiler driver -----------------------------===//
#include "loom/Driver/Driver.h"

#include "EmitObject.h"
#include "Manifest.h"
#include "TaskCheck.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "loom/Analysis/MachineSpec.h"
#include "loom/Driver/ModelZoo.h"
#include "loom/InitAll.h"
#include "loom/Support/IsolatedBytecode.h"
#include "loom/Support/Nesting.h"
#include "loom/runtime/abi.h"
#include "passes/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Triple.h"

#include <cctype>
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

static LogicalResult runStage(PassManager &pm, ModuleOp module,
                              TimingScope &root, StringRef name,
                              const CompileOptions &options,
                              llvm::raw_ostream &diagnostics) {
  if (options.dumpPassPipeline) {
    diagnostics << "loomc: stage " << name << ": ";
    pm.printAsTextualPipeline(diagnostics);
    diagnostics << "\n";
  }
  TimingScope scope = root.nest(name);
  pm.enableTiming(scope);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  if (options.configurePasses)
    options.configurePasses(pm);
  return pm.run(module);
}

void mlir::loom::driver::registerPassesOnce() {
  // The pipelines name upstream passes textually, and
  // --mlir-print-ir-after=<pass> looks passes up while options are parsed.
  static const bool registered = (registerAllPasses(), true);
  (void)registered;
  // runStage applies these, and applying them fails (silently) unless they
  // were constructed; both calls only construct them once.
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

static bool given(const CompileOptions &options, StringRef flag) {
  return llvm::is_contained(options.givenFlags, flag);
}

/// The optimizer schedule's flags, checked here so that a bad value is
/// named by its flag rather than reported by a pass at an unknown location.
static LogicalResult checkScheduleFlags(
    const CompileOptions &options, double lr,
    llvm::function_ref<LogicalResult(const llvm::Twine &)> error) {
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v);
    return std::string(text);
  };
  if (!std::isfinite(options.clipNorm) || options.clipNorm < 0)
    return error("--clip-norm must be a non-negative number (0: off), got " +
                 number(options.clipNorm));
  if (!std::isfinite(options.minLr) || options.minLr < 0 || options.minLr > lr)
    return error("--min-lr must be between 0 and the optimizer's lr (" +
                 number(lr) + "), got " + number(options.minLr));
  if (options.warmupSteps < 0)
    return error("--warmup-steps must be non-negative, got " +
                 llvm::Twine(options.warmupSteps));
  if (options.decaySteps < 0)
    return error("--decay-steps must be non-negative, got " +
                 llvm::Twine(options.decaySteps));
  if (!std::isfinite(options.bucketMiB) || options.bucketMiB < 0)
    return error("--bucket-mib must be positive (0: chosen from the cost "
                 "model), got " +
                 number(options.bucketMiB));
  return success();
}

/// Checks --cuda-chip against the architectures LLVM's NVPTX backend
/// knows, before the compile: an unknown one otherwise surfaced at the very
/// end, as repeated "not a recognized processor" warnings and a ptxas log.
static LogicalResult
checkCudaChip(StringRef chip,
              llvm::function_ref<LogicalResult(const llvm::Twine &)> error) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target)
    return error("--target=cuda: this LLVM has no NVPTX backend: " +
                 lookupError);
  // Created for no particular chip: an unknown one would print a warning.
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (info && info->isCPUStringValid(chip))
    return success();
  std::string known;
  if (info)
    for (const llvm::SubtargetSubTypeKV &cpu :
         info->getAllProcessorDescriptions())
      if (StringRef(cpu.Key).starts_with("sm_"))
        known += (known.empty() ? "" : ", ") + std::string(cpu.Key);
  return error("--cuda-chip: '" + chip +
               "' is not an NVIDIA GPU architecture LLVM knows (" + known +
               ")");
}

/// The flags that configure the train stage: an input that is already a
/// training step was made with its own, and they cannot change it now.
static constexpr const char *kTrainFlags[] = {
    "optimizer", "warmup-steps", "decay-steps", "min-lr",
    "clip-norm", "dp",           "overlap",     "bucket-mib",
    "co2",       "calibration",  "link"};

LogicalResult mlir::loom::driver::compile(const CompileOptions &options) {
  llvm::raw_ostream &diagnostics =
      options.diagnostics ? *options.diagnostics : llvm::errs();
  auto error = [&](const llvm::Twine &msg) {
    diagnostics << "loomc: error: " << msg << "\n";
    return failure();
  };
  // Prints `module` to options.printTo, else to the -o file, or stdout when
  // none (or "-") was given.
  auto printModule = [&](ModuleOp module, StringRef output) {
    if (options.printTo) {
      module.print(*options.printTo);
      return success();
    }
    std::string err;
    auto file = openOutputFile(output.empty() ? "-" : output, &err);
    if (!file)
      return error(err);
    module.print(file->os());
    file->os() << "\n";
    file->keep();
    return success();
  };
  auto optimizer = parseOptimizerSpec(options.optimizer);
  if (!optimizer)
    return error(llvm::toString(optimizer.takeError()));
  if (failed(checkScheduleFlags(options, optimizer->lr, error)))
    return failure();
  std::optional<CO2Spec> co2;
  if (!options.co2.empty()) {
    auto spec = parseCO2Spec(options.co2);
    if (!spec)
      return error(llvm::toString(spec.takeError()));
    if (options.dp < 2)
      return error("--co2 needs --dp=N with N > 1 (CO2 averages the ranks' "
                   "models every local-steps steps)");
    if (options.overlap)
      return error("--co2 and --overlap do not combine: CO2's inner steps "
                   "do not communicate, and its outer all-reduce already "
                   "overlaps the next local steps");
    co2 = *spec;
  }
  if (options.dp < 1)
    return error("--dp must be at least 1, got " + llvm::Twine(options.dp));
  if (options.dp > LOOM_MAX_RANKS)
    return error("--dp must be at most " + llvm::Twine(LOOM_MAX_RANKS) +
                 " (the runtime's limit on ranks), got " +
                 llvm::Twine(options.dp));
  if (options.overlap && options.dp < 2)
    return error("--overlap needs --dp=N with N > 1: it overlaps the "
                 "gradient all-reduce of data parallelism with compute");
  if (given(options, "bucket-mib") && !options.overlap)
    return error("--bucket-mib applies to --overlap only (the size of the "
                 "all-reduce buckets it overlaps)");
  if (given(options, "stage") && !options.emitMlir)
    return error("--stage applies to --emit=mlir only (which stage's IR to "
                 "print); an artifact is always compiled to the end");
  if (options.dtype != "f32" && options.dtype != "f64")
    return error("--dtype must be f32 or f64, got '" + options.dtype + "'");
  if (options.precision != "f32" && options.precision != "bf16")
    return error("--precision must be f32 or bf16, got '" + options.precision +
                 "'");
  if (options.precision == "bf16" && options.dtype != "f32")
    return error("--precision=bf16 needs f32 parameters (--dtype=f32): its "
                 "master weights are f32 and only f32 GEMMs are demoted");
  if (options.inputFile.empty() == options.modelSpec.empty())
    return error("give exactly one model: an input .mlir file or "
                 "--model=SPEC (see --help)");
  if (!options.emitMlir && options.outputDir.empty())
    return error("no output directory: use -o OUTDIR (or --emit=mlir)");
  const bool cuda = options.target == "cuda";
  const bool bf16 = options.precision == "bf16";
  if (!cuda && options.target != "cpu")
    return error("--target must be cpu or cuda, got '" + options.target + "'");
  if (cuda && options.emulateGpuLoops)
    return error("--emulate-gpu-loops is for --target=cpu: it runs the GPU's "
                 "loop nests on the CPU");
  if (!options.emulateGpuKernels.empty() &&
      options.emulateGpuKernels != "forward" &&
      options.emulateGpuKernels != "reverse")
    return error("--emulate-gpu-kernels must be forward or reverse, got '" +
                 options.emulateGpuKernels + "'");
  if (!options.emulateGpuKernels.empty() && (cuda || options.emulateGpuLoops))
    return error("--emulate-gpu-kernels is for --target=cpu without "
                 "--emulate-gpu-loops: it runs the GPU's kernels on the CPU");
  if (cuda && failed(checkCudaChip(options.cudaChip, error)))
    return failure();
  if (cuda && !options.co2.empty())
    return error("--co2 does not support --target=cuda yet (its rounds "
                 "copy host buffers)");

  registerPassesOnce();
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadDialect<LoomDialect>();
  if (!options.printOpOnDiagnostic)
    ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagnostics);
  // Registered last, so it sees each diagnostic first; failure() passes it
  // on to the printer.
  if (options.onDiagnostic)
    ctx.getDiagEngine().registerHandler([&](Diagnostic &diagnostic) {
      options.onDiagnostic(diagnostic);
      return failure();
    });

  OwningOpRef<ModuleOp> module;
  CompileOptions opts = options;
  if (!options.calibrationFile.empty()) {
    int64_t ranks = 1;
    if (auto err =
            applyCalibrationFile(options.calibrationFile, opts.machine, ranks))
      return error(llvm::toString(std::move(err)));
    if (ranks > 1 && options.dp > 1 && ranks != options.dp)
      diagnostics << "loomc: warning: " << options.calibrationFile
                  << " was measured on " << ranks << " ranks, compiling for "
                  << options.dp << "\n";
  }
  if (!options.linkSpec.empty())
    if (auto err = applyLinkSpec(options.linkSpec, opts.machine))
      return error(llvm::toString(std::move(err)));
  if (!options.modelSpec.empty()) {
    auto spec = parseModelSpec(options.modelSpec);
    if (!spec)
      return error(llvm::toString(spec.takeError()));
    Type et = options.dtype == "f64" ? Type(Float64Type::get(&ctx))
                                     : Type(Float32Type::get(&ctx));
    module = buildModel(&ctx, *spec, et);
  } else {
    std::string err;
    std::unique_ptr<llvm::MemoryBuffer> file =
        options.inputText ? llvm::MemoryBuffer::getMemBufferCopy(
                                *options.inputText, options.inputFile)
                          : openInputFile(options.inputFile, &err);
    if (!file)
      return error(err);
    // MLIR's bytecode reader is not safe on malformed input: a child
    // process reads bytecode and passes back its text.
    if (failed(replaceBytecodeWithText(file, &ctx)))
      return failure();
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    if (failed(checkTextNesting(sourceMgr, &ctx)))
      return failure();
    module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
    if (!module)
      return failure();
    // The IR decides the element type of a model given as a file.
    for (ParamOp p : module->getOps<ParamOp>()) {
      std::string irType =
          p.getTensorType().getElementType().isF64() ? "f64" : "f32";
      if (given(options, "dtype") && options.dtype != irType)
        return error("--dtype=" + options.dtype + " does not apply to " +
                     options.inputFile + ": its parameters are " + irType +
                     " (--dtype chooses the element type of a --model)");
      opts.dtype = irType;
      break;
    }
    if (module->lookupSymbol("loss_and_grad")) {
      std::string flags;
      for (const char *flag : kTrainFlags)
        if (given(options, flag))
          flags += (flags.empty() ? "--" : ", --") + std::string(flag);
      if (!flags.empty())
        return error(options.inputFile +
                     " is already a training step (it defines "
                     "@loss_and_grad), made with its own optimizer and "
                     "parallelism: " +
                     flags + " cannot change it; compile the model instead");
    }
  }
  if (failed(verify(*module)) || failed(verifyTask(*module)))
    return failure();
  if (options.emitMlir && options.stage == Stage::Model)
    return printModule(*module, options.outputDir);

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();

  // A module that is already at the train stage (e.g. the output of
  // --stage=train fed back in) skips the train pipeline.
  if (!module->lookupSymbol("loss_and_grad")) {
    PassManager pm(&ctx);
    TrainPipelineOptions train;
    train.optimizer = optimizer->kind;
    train.lr = optimizer->lr;
    train.beta1 = optimizer->beta1;
    train.beta2 = optimizer->beta2;
    train.eps = optimizer->eps;
    train.weightDecay = optimizer->wd;
    train.momentum = optimizer->momentum;
    train.warmupSteps = options.warmupSteps;
    train.decaySteps = options.decaySteps;
    train.minLr = options.minLr;
    train.clipNorm = options.clipNorm;
    train.dp = options.dp;
    train.overlap = options.overlap;
    train.bucketMiB = options.bucketMiB > 0
                          ? options.bucketMiB
                          : chooseBucketBytes(opts.machine) / (1024 * 1024);
    opts.bucketMiB = train.bucketMiB;
    if (co2) {
      train.co2 = true;
      train.co2LocalSteps = co2->localSteps;
      train.co2OuterLr = co2->outerLr;
      train.co2OuterMomentum = co2->outerMomentum;
      train.co2GapPenalty = co2->gapPenalty;
      train.co2Clip = co2->clip;
      train.co2Sharded = co2->sharded;
    }
    train.linkGbps = opts.machine.linkBytesPerSecond * 8 / 1e9;
    train.linkLatencyUs = opts.machine.linkLatencySeconds * 1e6;
    train.gflops = opts.machine.flopsPerSecond / 1e9;
    train.commCpu = opts.machine.commCpuFraction;
    buildTrainPipeline(pm, train);
    if (failed(runStage(pm, *module, root, "train", options, diagnostics)))
      return failure();
    if (auto co2 = (*module)->getAttrOfType<DictionaryAttr>("loom.co2"))
      if (auto why = co2.getAs<StringAttr>("local_steps_reason");
          why && !why.getValue().empty())
        diagnostics << "loomc: co2: " << why.getValue() << "\n";
  }
  if (options.emitMlir && options.stage == Stage::Train)
    return printModule(*module, options.outputDir);

  ManifestBuilder manifest;
  if (failed(manifest.addModel(*module, opts)))
    return failure();

  {
    PassManager pm(&ctx);
    buildLowerToLinalgPipeline(pm, bf16);
    if (failed(runStage(pm, *module, root, "lower-to-linalg", options,
                        diagnostics)))
      return failure();
  }
  if (failed(manifest.addEntries(*module)))
    return failure();
  if (options.emitMlir && options.stage == Stage::Linalg)
    return printModule(*module, options.outputDir);

  {
    PassManager pm(&ctx);
    if (cuda) {
      CudaPipelineOptions gpu;
      gpu.chip = options.cudaChip;
      gpu.features = cudaFeatures(options.cudaChip);
      gpu.bf16 = bf16;
      gpu.lateFrees = options.lateFrees;
      buildBufferizeForDevicePipeline(pm);
      buildGpuKernelsPipeline(pm, gpu);
      buildGpuToLLVMPipeline(pm, gpu);
    } else {
      PrecisionOptions cpu;
      cpu.bf16 = bf16;
      cpu.gpuLoops = options.emulateGpuLoops;
      cpu.lateFrees = options.lateFrees;
      cpu.planBuffers = options.planBuffers;
      if (!options.emulateGpuKernels.empty()) {
        buildEmulatedGpuPipeline(pm, cpu,
                                 options.emulateGpuKernels == "reverse");
      } else {
        buildBufferizePipeline(pm, options.emulateGpuLoops);
        buildLowerToLLVMPipeline(pm, cpu);
      }
    }
    if (failed(
            runStage(pm, *module, root, "lower-to-llvm", options, diagnostics)))
      return failure();
  }
  if (options.emitMlir)
    return printModule(*module, options.outputDir);

  if (std::error_code ec = llvm::sys::fs::create_directories(options.outputDir))
    return error("cannot create " + options.outputDir + ": " + ec.message());
  {
    TimingScope scope = root.nest("emit-shared-object");
    if (failed(emitSharedObject(*module, options.outputDir)))
      return failure();
  }
  return manifest.write(options.outputDir);
}
