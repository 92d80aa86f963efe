//===- Validate.cpp - loomc's options, checked before compiling -----------===//
//
// Every option is checked before any IR is built, so that a bad value is
// named by its flag rather than reported by a pass at an unknown location,
// and a flag that would have no effect is refused rather than ignored. The
// checks run in a fixed order: the first that fails is the one reported.
//
//===----------------------------------------------------------------------===//
#include "Compilation.h"

#include "loom/Driver/MachineSpec.h"
#include "loom/Driver/Specs.h"
#include "loom/runtime/abi.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::driver;

/// The optimizer schedule's flags, against the optimizer's lr.
static LogicalResult checkScheduleFlags(const Compilation &c) {
  const CompileOptions &options = c.options;
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v);
    return std::string(text);
  };
  double lr = c.optimizer.lr;
  if (!std::isfinite(options.clipNorm) || options.clipNorm < 0)
    return c.error("--clip-norm must be a non-negative number (0: off), got " +
                   number(options.clipNorm));
  if (!std::isfinite(options.minLr) || options.minLr < 0 || options.minLr > lr)
    return c.error("--min-lr must be between 0 and the optimizer's lr (" +
                   number(lr) + "), got " + number(options.minLr));
  if (options.warmupSteps < 0)
    return c.error("--warmup-steps must be non-negative, got " +
                   llvm::Twine(options.warmupSteps));
  if (options.decaySteps < 0)
    return c.error("--decay-steps must be non-negative, got " +
                   llvm::Twine(options.decaySteps));
  if (!std::isfinite(options.bucketMiB) || options.bucketMiB < 0)
    return c.error("--bucket-mib must be positive (0: chosen from the cost "
                   "model), got " +
                   number(options.bucketMiB));
  return success();
}

/// A flag of `flags` given with the one they do not combine with: an error
/// "`<lead><flag>` `<verb>`: <why>" for the first, in the table's order.
using FlagReasons = ArrayRef<std::pair<const char *, const char *>>;
static LogicalResult refuseGiven(const Compilation &c, FlagReasons flags,
                                 const llvm::Twine &lead, const char *verb) {
  for (auto [flag, why] : flags)
    if (c.given(flag))
      return c.error(lead + flag + " " + verb + ": " + why);
  return success();
}

/// --zo, parsed into `c`, and the flags it does not combine with: a
/// zeroth-order step has no gradients to clip or shard and no optimizer.
static LogicalResult parseZO(Compilation &c) {
  if (c.options.zo.empty())
    return success();
  auto spec = driver::parseZOSpec(c.options.zo);
  if (!spec)
    return c.error(llvm::toString(spec.takeError()));
  static constexpr std::pair<const char *, const char *> kExclusive[] = {
      {"optimizer", "its update is MeZO's, with the lr of --zo=mezo:lr=.."},
      {"warmup-steps", "its learning rate is constant"},
      {"decay-steps", "its learning rate is constant"},
      {"min-lr", "its learning rate is constant"},
      {"clip-norm", "it has no gradients to clip"},
      {"zero", "it keeps no optimizer state or gradients to shard"},
      {"co2", "its data-parallel ranks already exchange one scalar a step"},
      {"overlap", "its one scalar all-reduce has nothing to overlap"}};
  if (failed(refuseGiven(c, kExclusive, "--", "does not apply to --zo")))
    return failure();
  if (spec->directions == "rank" &&
      (c.options.dp < 2 || spec->perturbationRanks != 1))
    return c.error("--zo=mezo:directions=rank needs --dp=N with N > 1 and "
                   "pert=1: each data-parallel rank perturbs along its own "
                   "direction");
  c.zo = *spec;
  return success();
}

/// --compress, parsed into `c`, and what it does not combine with yet.
static LogicalResult parseCompress(Compilation &c) {
  const CompileOptions &options = c.options;
  if (options.compress.empty())
    return success();
  auto spec = driver::parseCompressSpec(options.compress, !options.co2.empty());
  if (!spec)
    return c.error(llvm::toString(spec.takeError()));
  if (!*spec)
    return success(); // none
  if (options.dp < 2)
    return c.error("--compress needs --dp=N with N > 1: it compresses the "
                   "gradients the data-parallel ranks average");
  if (!options.zo.empty())
    return c.error("--compress does not apply to --zo: its ranks average "
                   "one scalar a step");
  if (options.zero > 1)
    return c.error("--compress and --zero=" + llvm::Twine(options.zero) +
                   " do not combine: compression averages whole gradients, "
                   "ZeRO-2 and 3 reduce-scatter them (--zero=1 combines)");
  if (options.target == "cuda")
    return c.error("--compress runs on the CPU only for now "
                   "(--target=cpu)");
  c.compress = **spec;
  return success();
}

/// --optimizer (and the schedule over its lr), --zo and --co2, parsed into
/// `c`.
static LogicalResult parseTrainSpecs(Compilation &c) {
  const CompileOptions &options = c.options;
  auto optimizer = parseOptimizerSpec(options.optimizer);
  if (!optimizer)
    return c.error(llvm::toString(optimizer.takeError()));
  c.optimizer = *optimizer;
  if (failed(checkScheduleFlags(c)))
    return failure();
  c.optimizer.warmupSteps = options.warmupSteps;
  c.optimizer.decaySteps = options.decaySteps;
  c.optimizer.minLr = options.minLr;
  c.optimizer.clipNorm = options.clipNorm;
  if (failed(parseZO(c)) || failed(parseCompress(c)))
    return failure();
  if (options.co2.empty())
    return success();
  auto spec = parseCO2Spec(options.co2);
  if (!spec)
    return c.error(llvm::toString(spec.takeError()));
  if (options.dp < 2)
    return c.error("--co2 needs --dp=N with N > 1 (CO2 averages the ranks' "
                   "models every local-steps steps)");
  if (options.zero > 0)
    return c.error("--co2 and --zero do not combine yet: CO2's inner "
                   "optimizer state is each rank's own (--co2=sharded=1 "
                   "shards its outer state)");
  if (options.overlap)
    return c.error("--co2 and --overlap do not combine: CO2's inner steps "
                   "do not communicate, and its outer all-reduce already "
                   "overlaps the next local steps");
  if (c.compress && spec->sharded)
    return c.error("--compress and --co2=sharded=1 do not combine: a sharded "
                   "outer round reduce-scatters the parameters, and "
                   "compression averages whole ones (drop sharded=1)");
  c.co2 = *spec;
  return success();
}

/// A rank count of a mesh axis (--tp, --pp) within the runtime's limit.
static LogicalResult checkAxisRanks(const Compilation &c, const char *flag,
                                    int64_t ranks) {
  if (ranks < 1 || ranks > LOOM_MAX_RANKS)
    return c.error(llvm::Twine(flag) + " must be between 1 and " +
                   llvm::Twine(LOOM_MAX_RANKS) +
                   " (the runtime's limit on ranks), got " +
                   llvm::Twine(ranks));
  return success();
}

/// --tp, and what it does not combine with yet.
static LogicalResult checkTensorParallel(const Compilation &c) {
  const CompileOptions &options = c.options;
  if (failed(checkAxisRanks(c, "--tp", options.tp)))
    return failure();
  if (options.tp == 1) {
    if (options.sequenceParallel)
      return c.error("--sequence-parallel needs --tp=T with T > 1: it shares "
                     "the tokens between the tensor-parallel blocks over the "
                     "T ranks");
    return success();
  }
  if (options.dp * options.tp > LOOM_MAX_RANKS)
    return c.error("--dp x --tp must be at most " +
                   llvm::Twine(LOOM_MAX_RANKS) +
                   " (the runtime's limit on ranks), got " +
                   llvm::Twine(options.dp * options.tp));
  if (options.sequenceParallel && !options.modelSpec.empty()) {
    if (auto spec = parseModelSpec(options.modelSpec)) {
      const bool gpt = spec->isGpt();
      // A pipelined step's activations are one micro-batch's.
      int64_t rows = spec->batch();
      if (options.pp > 1 && options.microBatches > 0)
        rows /= options.microBatches;
      const int64_t tokens = gpt ? rows * spec->gpt.seq : rows;
      if (tokens % options.tp)
        return c.error("--sequence-parallel: the " + llvm::Twine(tokens) +
                       (gpt ? " tokens of a step's (micro-)batch"
                            : " rows of a step's (micro-)batch") +
                       " cannot be shared equally by --tp=" +
                       llvm::Twine(options.tp) + " ranks");
    } else {
      llvm::consumeError(spec.takeError());
    }
  }
  if (options.dp > 1 && options.target == "cuda")
    return c.error("--tp and --dp do not combine on --target=cuda yet: the "
                   "collectives of a group smaller than the job (each "
                   "data-parallel all-reduce spans one rank of every tp "
                   "group) run on the CPU only");
  // Each combination needs its own tests first.
  static constexpr std::pair<const char *, const char *> kNotYet[] = {
      {"zo", "its forward-only steps have no backward pass to split"},
      {"co2", "not tested together yet"},
      {"compress", "not tested together yet"},
      {"partition-sequences", "not tested together yet"}};
  return refuseGiven(c, kNotYet, "--tp and --", "do not combine yet");
}

static LogicalResult checkPipelineParallel(const Compilation &c) {
  const CompileOptions &options = c.options;
  if (failed(checkAxisRanks(c, "--pp", options.pp)))
    return failure();
  if (options.microBatches < 1)
    return c.error("--micro-batches must be at least 1, got " +
                   llvm::Twine(options.microBatches));
  if (options.pp == 1) {
    if (c.given("micro-batches"))
      return c.error("--micro-batches applies to --pp only (the micro-batches "
                     "a pipelined step runs)");
    return success();
  }
  if (options.dp * options.tp * options.pp > LOOM_MAX_RANKS)
    return c.error("--dp x --tp x --pp must be at most " +
                   llvm::Twine(LOOM_MAX_RANKS) +
                   " (the runtime's limit on ranks), got " +
                   llvm::Twine(options.dp * options.tp * options.pp));
  if (!options.modelSpec.empty()) {
    auto spec = parseModelSpec(options.modelSpec);
    if (spec) {
      const int64_t batch = spec->batch(), layers = spec->layers();
      if (options.pp > layers)
        return c.error("--pp=" + llvm::Twine(options.pp) +
                       " is more pipeline stages than the --model's " +
                       llvm::Twine(layers) +
                       " layers; use at most one stage per layer");
      if (batch % options.microBatches)
        return c.error("--micro-batches=" + llvm::Twine(options.microBatches) +
                       " does not divide the --model's batch of " +
                       llvm::Twine(batch) +
                       " (the step's batch, cut into equal micro-batches)");
    } else {
      llvm::consumeError(spec.takeError());
    }
  }
  // Each combination needs its own tests first.
  static constexpr std::pair<const char *, const char *> kNotYet[] = {
      {"zo", "its forward-only steps have no backward pass to pipeline"},
      {"co2", "not tested together yet"},
      {"compress", "not tested together yet"},
      {"partition-sequences", "not tested together yet"}};
  return refuseGiven(c, kNotYet, "--pp and --", "do not combine yet");
}

/// Data parallelism, what to print, the element types, the model and the
/// output.
static LogicalResult checkModelFlags(const Compilation &c) {
  const CompileOptions &options = c.options;
  if (options.dp < 1)
    return c.error("--dp must be at least 1, got " + llvm::Twine(options.dp));
  if (options.dp > LOOM_MAX_RANKS)
    return c.error("--dp must be at most " + llvm::Twine(LOOM_MAX_RANKS) +
                   " (the runtime's limit on ranks), got " +
                   llvm::Twine(options.dp));
  if (options.overlap && options.dp < 2)
    return c.error("--overlap needs --dp=N with N > 1: it overlaps the "
                   "gradient all-reduce of data parallelism with compute");
  if (c.given("zero") && (options.zero < 0 || options.zero > 3))
    return c.error("--zero must be 1, 2 or 3 (0: off), got " +
                   llvm::Twine(options.zero));
  if (options.zero > 0 && options.dp < 2)
    return c.error("--zero needs --dp=N with N > 1: it shards the "
                   "optimizer state over the data-parallel ranks");
  if (options.zero == 3 && (options.tp > 1 || options.pp > 1))
    return c.error("--zero=3 does not combine with --tp or --pp yet (its "
                   "parameter slices would be cut from the tensor-parallel "
                   "parts and gathered per stage); --zero=1 and 2 combine");
  if (failed(checkTensorParallel(c)) || failed(checkPipelineParallel(c)))
    return failure();
  if (options.partitionSequences) {
    // Each combination needs its own tests first.
    static constexpr std::pair<const char *, const char *> kNotYet[] = {
        {"zo", "its forward-only steps have no gathers to differentiate"},
        {"co2", "its local steps would still read the other ranks' keys"},
        {"zero", "not tested together yet"},
        {"compress", "not tested together yet"}};
    if (failed(refuseGiven(c, kNotYet, "--partition-sequences and --",
                           "do not combine yet")))
      return failure();
  }
  if (c.given("bucket-mib") && !options.overlap)
    return c.error("--bucket-mib applies to --overlap only (the size of the "
                   "all-reduce buckets it overlaps)");
  if (c.given("stage") && !options.emitMlir)
    return c.error("--stage applies to --emit=mlir only (which stage's IR to "
                   "print); an artifact is always compiled to the end");
  if (options.dtype != "f32" && options.dtype != "f64")
    return c.error("--dtype must be f32 or f64, got '" + options.dtype + "'");
  if (options.precision != "f32" && options.precision != "bf16")
    return c.error("--precision must be f32 or bf16, got '" +
                   options.precision + "'");
  if (c.bf16() && options.dtype != "f32")
    return c.error("--precision=bf16 needs f32 parameters (--dtype=f32): its "
                   "master weights are f32 and only f32 GEMMs are demoted");
  if (options.inputFile.empty() == options.modelSpec.empty())
    return c.error("give exactly one model: an input .mlir file or "
                   "--model=SPEC (see --help)");
  if (!options.emitMlir && options.outputDir.empty())
    return c.error("no output directory: use -o OUTDIR (or --emit=mlir)");
  return success();
}

/// Checks --cuda-chip against the architectures LLVM's NVPTX backend
/// knows, before the compile: an unknown one otherwise surfaced at the very
/// end, as repeated "not a recognized processor" warnings and a ptxas log.
static LogicalResult checkCudaChip(const Compilation &c) {
  StringRef chip = c.options.cudaChip;
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target)
    return c.error("--target=cuda: this LLVM has no NVPTX backend: " +
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
  return c.error("--cuda-chip: '" + chip +
                 "' is not an NVIDIA GPU architecture LLVM knows (" + known +
                 ")");
}

/// --target and the options that apply to one target only.
static LogicalResult checkTargetFlags(const Compilation &c) {
  const CompileOptions &options = c.options;
  const bool cuda = c.cuda();
  if (!cuda && options.target != "cpu")
    return c.error("--target must be cpu or cuda, got '" + options.target +
                   "'");
  if (cuda && options.emulateGpuLoops)
    return c.error("--emulate-gpu-loops is for --target=cpu: it runs the "
                   "GPU's loop nests on the CPU");
  if (!options.emulateGpuKernels.empty() &&
      options.emulateGpuKernels != "forward" &&
      options.emulateGpuKernels != "reverse")
    return c.error("--emulate-gpu-kernels must be forward or reverse, got '" +
                   options.emulateGpuKernels + "'");
  if (!options.emulateGpuKernels.empty() && (cuda || options.emulateGpuLoops))
    return c.error("--emulate-gpu-kernels is for --target=cpu without "
                   "--emulate-gpu-loops: it runs the GPU's kernels on the CPU");
  if (cuda && failed(checkCudaChip(c)))
    return failure();
  if (cuda && !options.co2.empty())
    return c.error("--co2 does not support --target=cuda yet (its rounds "
                   "copy host buffers)");
  return success();
}

/// The cost model's inputs: a calibration file, then a --link spec over it.
static LogicalResult resolveMachine(Compilation &c) {
  const CompileOptions &options = c.options;
  if (!options.calibrationFile.empty()) {
    int64_t ranks = 1;
    if (auto err = applyCalibrationFile(options.calibrationFile,
                                        c.resolved.machine, ranks))
      return c.error(llvm::toString(std::move(err)));
    if (ranks > 1 && options.dp > 1 && ranks != options.dp)
      c.diagnostics << "loomc: warning: " << options.calibrationFile
                    << " was measured on " << ranks << " ranks, compiling for "
                    << options.dp << "\n";
  }
  if (!options.linkSpec.empty())
    if (auto err = applyLinkSpec(options.linkSpec, c.resolved.machine))
      return c.error(llvm::toString(std::move(err)));
  return success();
}

LogicalResult mlir::loom::driver::validate(Compilation &c) {
  if (failed(parseTrainSpecs(c)) || failed(checkModelFlags(c)) ||
      failed(checkTargetFlags(c)))
    return failure();
  return resolveMachine(c);
}
