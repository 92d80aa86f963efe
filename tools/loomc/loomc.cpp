//===- loomc.cpp - The Loom compiler driver -------------------------------===//
//
// Thin main: flags -> CompileOptions -> mlir::loom::driver::compile().
//
//===----------------------------------------------------------------------===//
#include "loom/Driver/Driver.h"
#include "loom/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

namespace cl = llvm::cl;
using namespace mlir::loom::driver;

static cl::OptionCategory cat("loomc options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[MODEL.mlir]"),
                                      cl::init(""), cl::cat(cat));
// Before the option whose description points into it.
static const std::string modelHelp = modelSpecHelp();
static cl::opt<std::string> modelSpec("model", cl::desc(modelHelp.c_str()),
                                      cl::value_desc("SPEC"), cl::cat(cat));
static cl::opt<std::string>
    output("o",
           cl::desc("Output directory (artifact), or file for "
                    "--emit=mlir (default: stdout)"),
           cl::value_desc("OUT"), cl::init(""), cl::cat(cat));
static cl::opt<std::string>
    emit("emit", cl::desc("What to produce: artifact (default) or mlir"),
         cl::init("artifact"), cl::cat(cat));
// Its values are the stages' names (passes/Analysis/Stage.h), added in
// main().
static cl::opt<Stage>
    stage("stage", cl::desc("With --emit=mlir: print the IR at the end of"),
          cl::init(Stage::Lowered), cl::cat(cat));
// The optimizer's and the schedule's defaults are OptimizerOptions.def's.
static const mlir::loom::OptimizerOptions schedule;
static cl::opt<std::string>
    optimizer("optimizer",
              cl::desc("adamw:lr=..,beta1=..,beta2=..,eps=..,wd=.. or "
                       "sgd:lr=..,momentum=..,wd=.. (default adamw)"),
              cl::init(schedule.optimizer), cl::cat(cat));
static cl::opt<int64_t> warmup("warmup-steps",
                               cl::desc("Linear LR warmup steps"),
                               cl::init(schedule.warmupSteps), cl::cat(cat));
static cl::opt<int64_t>
    decay("decay-steps",
          cl::desc("Cosine LR decay steps after warmup (0: constant LR)"),
          cl::init(schedule.decaySteps), cl::cat(cat));
static cl::opt<double> minLr("min-lr", cl::desc("LR at the end of the decay"),
                             cl::init(schedule.minLr), cl::cat(cat));
static cl::opt<double> clip("clip-norm",
                            cl::desc("Clip the global gradient norm (0: off)"),
                            cl::init(schedule.clipNorm), cl::cat(cat));
static cl::opt<int64_t>
    dp("dp",
       cl::desc("Data-parallel ranks: average gradients over N ranks (the "
                "artifact then runs on exactly N ranks; see loom-run --ranks)"),
       cl::init(1), cl::cat(cat));
static cl::opt<int64_t>
    tp("tp",
       cl::desc("Tensor-parallel ranks: each attention's heads and each MLP's "
                "hidden units split over T ranks as Megatron-LM splits them "
                "(one all-reduce per block each way; the artifact then runs on "
                "exactly T ranks; docs/layouts.md)"),
       cl::init(1), cl::cat(cat));
static cl::opt<bool> sequenceParallel(
    "sequence-parallel",
    cl::desc("With --tp: the layer norms and residual adds between the "
             "tensor-parallel blocks computed on each rank's share of the "
             "tokens, a reduce-scatter and an all-gather in place of each "
             "all-reduce (Megatron-LM's sequence parallelism; "
             "docs/layouts.md)"),
    cl::init(false), cl::cat(cat));
static cl::opt<int64_t>
    pp("pp",
       cl::desc("Pipeline stages: the model cut between layers into P stages "
                "of balanced cost, each on its own rank, run in the 1F1B "
                "order over --micro-batches (the artifact then runs on "
                "exactly P ranks, times --dp and --tp; docs/layouts.md)"),
       cl::init(1), cl::cat(cat));
static cl::opt<int64_t> microBatches(
    "micro-batches",
    cl::desc("With --pp: micro-batches per step; the --model's batch is the "
             "step's and must be a multiple of it"),
    cl::init(1), cl::cat(cat));
static cl::opt<bool> planLayouts(
    "plan",
    cl::desc("Rank the layouts of the --model on --cluster's ranks (data x "
             "pipeline x tensor parallelism with their micro-batches, ZeRO "
             "stage, overlap; the spec's batch is the global batch) by "
             "predicted step time, with each one's memory per rank; with -o, "
             "compile the best (docs/layouts.md)"),
    cl::init(false), cl::cat(cat));
static cl::opt<std::string> cluster(
    "cluster",
    cl::desc(
        "With --plan: the ranks, e.g. nodes=2,ranks-per-node=2,"
        "intra-bw=10gbit,intra-lat=5us,inter-bw=1gbit,inter-lat=50us,"
        "memory=512MiB[,gflops=50,comm-cpu=0.2] (bandwidths and latencies "
        "as --link's, inter-bw a node's link, which its ranks share; gflops "
        "and comm-cpu as loom-run --calibrate measures "
        "them), or a level's link measured: intra-calibration=FILE, "
        "inter-calibration=FILE (loom-run --calibrate on two ranks of a "
        "node, of two nodes)"),
    cl::value_desc("SPEC"), cl::init(""), cl::cat(cat));
static cl::opt<bool> overlap(
    "overlap",
    cl::desc("With --dp: bucket the gradient all-reduces, run them "
             "asynchronously and schedule them to overlap with compute"),
    cl::init(false), cl::cat(cat));
static cl::opt<int64_t>
    zero("zero",
         cl::desc("With --dp=N: ZeRO, each rank keeping 1/N of the optimizer "
                  "state. 1: the optimizer state (each rank updates its "
                  "slice of every parameter, the parameters are "
                  "all-gathered); 2: also the gradients (reduce-scattered "
                  "instead of all-reduced); 3: also the parameters (each "
                  "rank stores its slice, all-gathered before each use). "
                  "With --tp or --pp (stages 1 and 2), over the N "
                  "data-parallel ranks. Default 0: off (docs/zero.md)"),
         cl::init(0), cl::cat(cat));
static cl::opt<bool> partitionSequences(
    "partition-sequences",
    cl::desc("A model with documents (gpt:...,docs=1): loom-run places each "
             "step's documents on the --dp ranks with a planner that "
             "balances attention work, short ones whole, long ones in "
             "pieces on several ranks whose queries read the keys of all "
             "ranks (docs/sequences.md)"),
    cl::init(false), cl::cat(cat));
static cl::opt<double> bucketMiB(
    "bucket-mib",
    cl::desc("With --overlap: largest bucket in MiB (default 0: chosen from "
             "the cost model's link, see --link/--calibration)"),
    cl::init(0.0), cl::cat(cat));
static cl::opt<std::string>
    dtype("dtype", cl::desc("Parameter type of --model: f32 (default) or f64"),
          cl::init("f32"), cl::cat(cat));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Numerics of the training step: f32 (default) or bf16 (mixed "
             "precision: every f32 GEMM, forward and backward, on bf16 "
             "operands with f32 accumulation; master weights, optimizer "
             "state and all other ops stay f32)"),
    cl::value_desc("f32|bf16"), cl::init("f32"), cl::cat(cat));

// Its defaults are CO2Options.def's.
static const std::string co2Help = mlir::loom::driver::co2SpecHelp();
static cl::opt<std::string> co2("co2", cl::desc(co2Help),
                                cl::value_desc("SPEC"), cl::init(""),
                                cl::cat(cat));
// Its defaults are CompressOptions.def's.
static const std::string compressHelp = mlir::loom::driver::compressSpecHelp();
static cl::opt<std::string> compress("compress", cl::desc(compressHelp),
                                     cl::value_desc("SPEC"), cl::init(""),
                                     cl::cat(cat));
// Its defaults are ZOOptions.def's.
static const std::string zoHelp = mlir::loom::driver::zoSpecHelp();
static cl::opt<std::string> zo("zo", cl::desc(zoHelp), cl::value_desc("SPEC"),
                               cl::init(""), cl::cat(cat));
static cl::opt<std::string> calibration(
    "calibration",
    cl::desc("The cost model's compute rate and link from FILE, written by "
             "`loom-run --calibrate FILE` on the ranks the job will use"),
    cl::value_desc("FILE"), cl::init(""), cl::cat(cat));
static cl::opt<std::string>
    link("link",
         cl::desc("The cost model's link, over any --calibration: "
                  "bw=<rate>,lat=<time> (e.g. bw=1gbit,lat=50us; a bare bw is "
                  "Gbit/s, a bare lat microseconds)"),
         cl::value_desc("SPEC"), cl::init(""), cl::cat(cat));

static cl::opt<std::string> target(
    "target",
    cl::desc("What the artifact runs on: cpu (default; LLVM for this "
             "machine, OpenBLAS, MPI) or cuda (NVIDIA GPU kernels as a cubin "
             "in model.so, cuBLAS, NCCL; docs/gpu.md)"),
    cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(cat));
static cl::opt<std::string>
    cudaChip("cuda-chip",
             cl::desc("With --target=cuda: the GPU architecture (sm_90: "
                      "H100/H200)"),
             cl::init("sm_90"), cl::cat(cat));
static cl::opt<bool> emulateGpuLoops(
    "emulate-gpu-loops",
    cl::desc("With --target=cpu, for testing the GPU lowering: split "
             "reductions and build every loop nest as for --target=cuda, "
             "then run them sequentially on the CPU"),
    cl::init(false), cl::Hidden, cl::cat(cat));

static cl::opt<std::string> emulateGpuKernels(
    "emulate-gpu-kernels",
    cl::desc("With --target=cpu, for testing the GPU lowering: compile "
             "through the GPU's kernel stage (kernels, host code left by "
             "--loom-gpu-host-to-device) with the CPU's GEMMs, and run each "
             "kernel launch as loops over its blocks and threads, in order "
             "(forward) or from the last thread down (reverse)"),
    cl::value_desc("forward|reverse"), cl::init(""), cl::Hidden, cl::cat(cat));

static cl::opt<bool> lateFrees(
    "late-frees",
    cl::desc("For comparison and debugging: free each temporary at the end "
             "of the step, not after its last use (no --loom-hoist-deallocs)"),
    cl::init(false), cl::Hidden, cl::cat(cat));

static cl::opt<bool> planBuffers(
    "plan-buffers",
    cl::desc("--target=cpu: place the step's temporaries at offsets of one "
             "arena planned from their lifetimes at compile time; "
             "--plan-buffers=false, for comparison: one allocation each"),
    cl::init(true), cl::Hidden, cl::cat(cat));

static cl::opt<bool> outlineNests(
    "outline-nests",
    cl::desc("--target=cpu: compile each distinct loop nest of the step as "
             "a function of its own, once however many layers repeat it; "
             "--outline-nests=false, for comparison: the step one function"),
    cl::init(true), cl::Hidden, cl::cat(cat));

static cl::opt<bool> outlineLayers(
    "outline-layers",
    cl::desc("--target=cpu: compile the ops each layer repeats (forward, "
             "backward, its gradient-norm terms) once, as a function each "
             "layer calls; --outline-layers=false, for comparison: every "
             "layer's copy compiled"),
    cl::init(true), cl::Hidden, cl::cat(cat));

static cl::opt<bool> rollLayers(
    "roll-layers",
    cl::desc("--target=cpu: each entry's runs of repeated calls (a model's "
             "layers) one loop over the layers, so that the entries do not "
             "grow with depth; --roll-layers=false, for comparison: one call "
             "per layer"),
    cl::init(true), cl::Hidden, cl::cat(cat));

static cl::opt<int64_t> segmentOps(
    "segment-ops",
    cl::desc("--target=cpu: cut each entry of the step into functions of at "
             "most this many ops, called in order (--loom-outline-segments), "
             "so that its compile time grows no faster than the model; 0: "
             "leave the entries whole"),
    cl::init(8000), cl::Hidden, cl::cat(cat));

static cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("Threads that optimise and compile the LLVM module, each a part "
             "of its functions (default 0: one per core; 1: the module whole "
             "on one thread)"),
    cl::init(0), cl::cat(cat));

static cl::opt<bool> timeLlvmPasses(
    "time-llvm-passes",
    cl::desc("With --mlir-timing: time each LLVM optimisation pass (under "
             "emit-shared-object, each part's llvm-optimize)"),
    cl::init(false), cl::cat(cat));

static cl::opt<bool> dumpPassPipeline(
    "dump-pass-pipeline",
    cl::desc("Print each stage's pass pipeline to stderr before running it "
             "(\"loomc: stage NAME: PIPELINE\"), every option spelled out: "
             "`loom-opt --pass-pipeline='PIPELINE'` runs the stage on the "
             "previous stage's --emit=mlir output"),
    cl::init(false), cl::cat(cat));

/// --stage's values: the stages' names and descriptions.
static void addStageValues() {
  for (int s = 0; s <= static_cast<int>(Stage::Lowered); ++s)
    stage.getParser().addLiteralOption(
        mlir::loom::getStageName(static_cast<Stage>(s)), static_cast<Stage>(s),
        mlir::loom::getStageDescription(static_cast<Stage>(s)));
}

/// --help lists loomc's own options; MLIR's and LLVM's hundreds only
/// --help-hidden. (cl::HideUnrelatedOptions alone hides them from both.)
static void showOnlyOwnOptions() {
  llvm::SmallVector<cl::Option *> shown;
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (option->getOptionHiddenFlag() == cl::NotHidden)
      shown.push_back(option);
  cl::HideUnrelatedOptions(cat);
  for (cl::Option *option : shown)
    if (option->getOptionHiddenFlag() == cl::ReallyHidden)
      option->setHiddenFlag(cl::Hidden);
}

/// The parsed flags as the driver takes them.
static CompileOptions compileOptions(int argc, char **argv) {
  CompileOptions options;
  options.inputFile = inputFile;
  options.modelSpec = modelSpec;
  options.outputDir = output;
  options.emitMlir = emit == "mlir";
  options.stage = stage;
  options.optimizer = optimizer;
  options.dtype = dtype;
  options.precision = precision;
  options.warmupSteps = warmup;
  options.decaySteps = decay;
  options.minLr = minLr;
  options.clipNorm = clip;
  options.dp = dp;
  options.tp = tp;
  options.sequenceParallel = sequenceParallel;
  options.pp = pp;
  options.microBatches = microBatches;
  options.overlap = overlap;
  options.bucketMiB = bucketMiB;
  options.zero = zero;
  options.partitionSequences = partitionSequences;
  options.calibrationFile = calibration;
  options.co2 = co2;
  options.zo = zo;
  options.compress = compress;
  options.linkSpec = link;
  options.target = target;
  options.emulateGpuLoops = emulateGpuLoops;
  options.emulateGpuKernels = emulateGpuKernels;
  options.lateFrees = lateFrees;
  options.planBuffers = planBuffers;
  options.outlineNests = outlineNests;
  options.segmentOps = segmentOps;
  options.outlineLayers = outlineLayers;
  options.rollLayers = rollLayers;
  options.compileThreads = compileThreads;
  options.timeLlvmPasses = timeLlvmPasses;
  options.cudaChip = cudaChip;
  options.dumpPassPipeline = dumpPassPipeline;
  options.plan = planLayouts;
  options.clusterSpec = cluster;
  // MLIR's option is on by default; loomc leaves the note out unless the
  // option is given (then MLIRContext applies its value).
  if (cl::Option *printOp =
          cl::getRegisteredOptions().lookup("mlir-print-op-on-diagnostic"))
    options.printOpOnDiagnostic = printOp->getNumOccurrences() > 0;
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (option->getNumOccurrences() > 0 && !option->isPositional())
      options.givenFlags.push_back(name.str());
  for (int i = 0; i < argc; ++i)
    options.commandLine += (i ? " " : "") + std::string(argv[i]);
  return options;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  registerPassesOnce();
  cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << LOOM_VERSION_STRING << "\n"; });
  addStageValues();
  showOnlyOwnOptions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "loomc: compiles a model into a training artifact\n\n"
      "  loomc MODEL.mlir -o OUTDIR\n"
      "  loomc --model=gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=4 "
      "-o OUTDIR\n"
      "  loomc --model=mlp:in=16,hidden=64,out=4,layers=2,batch=32 "
      "--emit=mlir --stage=train\n\n"
      "OUTDIR receives model.so and manifest.json; run it with loom-run.\n"
      "MODEL.mlir is MLIR text or bytecode (loom-opt --emit-bytecode); "
      "bytecode is read\nin a child process, as MLIR's bytecode reader is "
      "not safe on malformed input.\n\n"
      "MLIR's options work too: --mlir-print-ir-after-all, "
      "--mlir-print-ir-after=<pass>,\n--mlir-timing, --mlir-pass-statistics "
      "(--help-hidden lists every option).\n"
      "--mlir-print-op-on-diagnostic: errors also print the op they are "
      "about (MLIR's\n\"see current operation\" note; off in loomc).\n"
      "--mlir-pass-pipeline-crash-reproducer=FILE: when a pass fails or "
      "crashes, FILE gets\nthe failing stage's input IR and pass pipeline; "
      "`loom-opt --run-reproducer FILE`\nreplays it.\n");

  if (emit != "artifact" && emit != "mlir") {
    llvm::errs() << "loomc: error: --emit must be artifact or mlir, got '"
                 << emit << "'\n";
    return 1;
  }
  if (segmentOps < 0) {
    llvm::errs() << "loomc: error: --segment-ops must be 0 (entries whole) or "
                    "a number of ops, got "
                 << segmentOps << "\n";
    return 1;
  }
  CompileOptions options = compileOptions(argc, argv);
  if (!options.plan && !options.clusterSpec.empty()) {
    llvm::errs() << "loomc: error: --cluster applies to --plan only (the "
                    "ranks it plans for)\n";
    return 1;
  }
  if (options.plan && options.clusterSpec.empty()) {
    llvm::errs() << "loomc: error: --plan needs --cluster=SPEC (the ranks to "
                    "plan for, e.g. nodes=2,ranks-per-node=2)\n";
    return 1;
  }
  if (options.plan)
    return mlir::failed(plan(options)) ? 1 : 0;
  return mlir::failed(compile(options)) ? 1 : 0;
}
