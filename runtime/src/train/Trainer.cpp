//===- Trainer.cpp - The training loop of loom-run --------------*- C++ -*-===//
//
// One iteration: fill batch `dataPosition`, set the step scalar to the 1-based
// global step, call train_step, read the outputs. Everything a step touches
// was allocated before the loop. The step number and data position are the
// whole trainer state, which is why saving them makes resumes exact.
//
// Multi-rank runs meet at three kinds of points: the start and the end of
// setup and every checkpoint save (agreeOnSettings: every rank runs the same
// artifact, options and resumed state; agreeOnFailure: a failure on any rank
// ends every rank with one message), and every step's loss reduction, whose
// result all ranks share (so a NaN loss stops them all at the same step).
//
// The loop itself knows no training scheme and no feature: a SyncPolicy
// (SyncPolicy.h) says how the ranks synchronise around a step, and
// StepObservers (StepObserver.h) do everything else around it: metrics,
// progress, evaluation, saves (TrainerSave.cpp), tracing, injected faults.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Trainer.h"
#include "compress/Compression.h"
#include "loom/runtime/AllocCache.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/StopRequest.h"
#include "loom/runtime/Trace.h"
#include "loom/runtime/Transfers.h"
#include "loom/runtime/World.h"
#include "support/Clock.h"
#include "train/Evaluation.h"
#include "train/StepObserver.h"
#include "train/SyncPolicy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>

#include <sys/resource.h>

namespace loom::rt {

namespace {

/// What rank 0 used at most: a cpu artifact's temporaries (modelMemoryLine
/// gives its parameters and state), a cuda artifact's device memory, all of
/// it.
std::string memoryLine(const RunSummary &summary) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (summary.peakDeviceBytes)
    return formatString("memory: GPU peak %.1f MiB in use (parameters, "
                        "optimizer state, temporaries)",
                        summary.peakDeviceBytes / kMiB);
  return formatString("memory: temporaries peak %.1f MiB",
                      summary.peakTempBytes / kMiB);
}

/// What the model takes on this rank, and the process's peak.
std::string modelMemoryLine(const RunSummary &summary) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return formatString("memory per rank: parameters %.1f MiB, gradients %.1f "
                      "MiB (temporaries of the step), optimizer state %.1f "
                      "MiB; process peak %.1f MiB resident",
                      summary.paramBytes / kMiB, summary.gradBytes / kMiB,
                      summary.optimizerStateBytes / kMiB,
                      summary.peakRssBytes / kMiB);
}

/// The bytes of `tensors`.
uint64_t totalBytes(const std::vector<Tensor *> &tensors) {
  uint64_t bytes = 0;
  for (const Tensor *tensor : tensors)
    bytes += tensor->byteSize();
  return bytes;
}

/// The bytes of the gradients a rank keeps: a whole gradient of every
/// parameter (data parallelism averages them, ZeRO stage 1 too), or from
/// ZeRO stage 2 on the rank's slice of each, which the step reduce-scatters
/// (ceil(n / ranks) of its n elements); none for a zeroth-order step.
uint64_t gradientBytes(const Manifest &manifest) {
  // A zeroth-order step computes no gradients (docs/zo.md).
  if (manifest.optimizerKind == "zo")
    return 0;
  uint64_t bytes = 0;
  for (const TensorSpec &param : manifest.params) {
    // A tensor-parallel rank computes the gradient of its part.
    const int64_t whole = param.split.enabled()
                              ? param.numElements()
                              : numElements(manifest.wholeShape(param));
    const int64_t kept =
        manifest.zero.stage >= 2 ? manifest.zero.shardElements(whole) : whole;
    bytes += static_cast<uint64_t>(kept) * dtypeSize(param.dtype);
  }
  return bytes;
}

/// Ranks that read batches of their own (MeshSpec::dataPosition): all of
/// them, but for a zeroth-order perturbation pair, which shares its batch.
int64_t dataRanks(const Manifest &manifest, const Communicator &comm) {
  return manifest.mesh.dataPosition(comm.rank(), comm.size()).second;
}

/// Tokens of the global batch of a step.
int64_t globalTokensPerStep(const Manifest &manifest,
                            const Communicator &comm) {
  return manifest.task.tokensPerStep() * dataRanks(manifest, comm);
}

/// The process's peak resident memory so far (Linux: ru_maxrss in KiB).
uint64_t peakResidentBytes() {
  struct rusage usage {};
  return getrusage(RUSAGE_SELF, &usage) == 0
             ? static_cast<uint64_t>(usage.ru_maxrss) * 1024
             : 0;
}

std::string givenOrNot(const std::string &value) {
  return value.empty() ? "not given" : "given";
}

/// What every rank must share before setup (agreeOnSettings): the artifact
/// and each option that decides which collectives a rank issues and when,
/// or which data it trains on. Paths that may differ between hosts (--load,
/// --save, --trace) count only as given or not.
std::vector<JobSetting> jobSettings(const Artifact &artifact,
                                    const TrainOptions &options, bool eval) {
  std::string digest;
  try {
    digest = "sha256 " + artifact.contentDigest().substr(0, 16);
  } catch (const std::exception &e) {
    digest = std::string("unknown (") + e.what() + ")";
  }
  std::vector<JobSetting> settings = {
      {"--eval", eval ? "given" : "not given"},
      {"the artifact's content", digest},
      {"--data", options.data},
      {"--seed",
       options.seedGiven ? std::to_string(options.seed) : "not given"},
      {"--load", givenOrNot(options.loadPath)},
      {"--eval-batches", std::to_string(options.evalBatches)}};
  if (eval)
    return settings;
  settings.insert(settings.end(),
                  {{"--steps", std::to_string(options.steps)},
                   {"--shuffle", options.shuffle ? "given" : "not given"},
                   {"--save", givenOrNot(options.savePath)},
                   {"--save-every", std::to_string(options.saveEvery)},
                   {"--save-async", options.saveAsync ? "given" : "not given"},
                   {"--eval-data",
                    options.evalData.empty() ? "not given" : options.evalData},
                   {"--eval-every", std::to_string(options.evalEvery)},
                   {"--trace", givenOrNot(options.tracePath)}});
  return settings;
}

} // namespace

struct Trainer::Setup {
  TrainerState state;
  Entry *trainStep = nullptr;
  Tensor *lossOut = nullptr, *lrOut = nullptr, *gradNormOut = nullptr;
  std::unique_ptr<DataSource> data;
  BatchBuffers batch;
  MetricsWriter metrics;
  /// How the ranks synchronise around a step (SyncPolicy.h).
  std::unique_ptr<SyncPolicy> sync;
  /// --eval-data: the held-out loss during training.
  std::optional<EvalSetup> eval;
  /// Manifest "compression": what the compressed all-reduces do.
  std::unique_ptr<GradientCompression> compression;
  /// Rank 0 said it heard its own stop request.
  bool heard = false;
};

Trainer::Trainer(Artifact &artifact, const TrainOptions &options,
                 Communicator &comm, std::ostream &log, std::ostream &out)
    : artifact(artifact), options(options), comm(comm), log(log), out(out) {}

Trainer::~Trainer() = default;

void Trainer::checkOptions() {
  checkZeroJob(artifact.manifest(), comm.size(), options.externalLauncher);
  checkJobMatchesMesh(artifact.manifest().mesh, comm.size(),
                      options.externalLauncher);
  if (options.saveEvery > 0 && options.savePath.empty())
    fail("--save-every needs --save PATH");
  // Rank 0 writes a replicated checkpoint; every CO2 or ZeRO rank its own
  // part.
  const bool writesCheckpoints = comm.isRoot() ||
                                 artifact.manifest().co2.localSteps > 0 ||
                                 artifact.manifest().zeroSavesShards();
  if (!options.savePath.empty()) {
    if (writesCheckpoints)
      checkCanSaveTo(options.savePath);
    else
      checkSaveTarget(options.savePath);
  }
  if (options.saveAsync && options.savePath.empty())
    fail("--save-async needs --save PATH");
  if (options.saveAsync && writesCheckpoints)
    background = std::make_unique<BackgroundSave>();
}

void Trainer::findOutputs(Setup &setup) {
  if (!artifact.hasEntry("train_step"))
    fail("artifact %s has no train_step entry (was it compiled without an "
         "optimizer?); loom-gradcheck can still check its gradients",
         artifact.directory().c_str());
  setup.trainStep = &artifact.entry("train_step");
  const EntrySpec &spec = setup.trainStep->spec();
  setup.lossOut = scalarOutput(artifact, spec, "loss", true);
  setup.lrOut = scalarOutput(artifact, spec, "lr", false);
  setup.gradNormOut = scalarOutput(artifact, spec, "grad_norm", false);
}

bool Trainer::load(Setup &setup) {
  // Per-rank policies resume from their own part of a per-rank checkpoint.
  std::optional<PerRankTensors> perRank;
  if (setup.sync->savesPerRank())
    perRank = setup.sync->checkpointTensors();
  LoadResult loaded = loadCheckpoint(options.loadPath, artifact, comm.rank(),
                                     perRank ? &*perRank : nullptr);
  const bool root = comm.isRoot();
  if (root && !loaded.note.empty())
    log << "note: " << loaded.note << "\n";
  if (loaded.full) {
    resumeState(setup, loaded);
    return true;
  }
  if (root)
    log << "loaded weights from " << loaded.path
        << " (fresh optimizer state, step 0)\n";
  return false;
}

void Trainer::resumeState(Setup &setup, const LoadResult &loaded) {
  TrainerState &state = setup.state;
  const bool root = comm.isRoot();
  state.step = loaded.state.step;
  state.dataPosition = loaded.state.dataPosition;
  if (loaded.state.ranks != comm.size()) {
    DataResume moved = resumeUnderOtherRanks(
        loaded, comm.size(), state.rowsPerStep, setup.sync->savesPerRank(),
        options.externalLauncher);
    state.dataPosition = moved.position;
    if (root)
      log << "note: " << moved.note << "\n";
  }
  if (!options.seedGiven)
    state.seed = loaded.state.seed;
  else if (root && options.seed != loaded.state.seed)
    log << "note: using --seed " << options.seed
        << "; the checkpoint was saved with seed " << loaded.state.seed
        << ", so the data order differs from the original run\n";
  if (root && options.data != loaded.state.data)
    log << "note: the checkpoint was trained on --data " << loaded.state.data
        << "; continuing on " << options.data << "\n";
  if (root && options.shuffle != loaded.state.shuffle)
    log << "note: the checkpoint was saved "
        << (loaded.state.shuffle ? "with" : "without")
        << " --shuffle; this run is "
        << (options.shuffle ? "shuffled" : "sequential") << "\n";
  if (root)
    log << "resuming from " << loaded.path << " at step " << state.step << "\n";
}

/// The step counter and the data rows of the last step must fit in int64_t:
/// past it the step number wrapped negative and the run stopped after one
/// step, reporting success.
void Trainer::checkStepRange(const TrainerState &state) {
  int64_t lastStep = 0, lastPosition = 0, lastRow = 0;
  if (__builtin_add_overflow(state.step, options.steps, &lastStep) ||
      __builtin_add_overflow(state.dataPosition, options.steps,
                             &lastPosition) ||
      __builtin_mul_overflow(lastPosition, state.rowsPerStep, &lastRow))
    fail("--steps %lld from step %lld (data position %lld) would count past "
         "2^63-1 steps or data rows; run fewer steps",
         static_cast<long long>(options.steps),
         static_cast<long long>(state.step),
         static_cast<long long>(state.dataPosition));
}

void Trainer::openInputsAndOutputs(Setup &setup) {
  const bool root = comm.isRoot();
  setup.data =
      rankDataSource(options.data, setup.state.seed, options.shuffle, comm,
                     artifact.manifest().mesh, artifact.manifest().task);
  // Only windows of a text or tokens file are drawn in order or at random.
  if (root && options.shuffle && options.data == "synthetic")
    log << "warning: --shuffle has no effect on --data synthetic, whose "
           "rows are drawn at random already\n";
  setup.batch = BatchBuffers::forArtifact(artifact);
  if (!options.metricsPath.empty())
    setup.metrics.open(rankMetricsPath(options.metricsPath, comm.rank()));
  if (!options.tracePath.empty())
    checkTraceWritable(options.tracePath, comm.rank());
  if (!options.evalData.empty()) {
    setup.eval = prepareEval(artifact, options.evalData, setup.state.seed, comm,
                             options.evalBatches);
    if (root && !setup.eval->note.empty())
      log << "note: " << setup.eval->note << "\n";
  }
}

void Trainer::prepare(Setup &setup) {
  checkOptions();
  // A pipelined artifact's entries and tensors are its stage's from here.
  artifact.selectPipelineStage(comm.rank());
  findOutputs(setup);
  TrainerState &state = setup.state;
  state.seed = options.seed;
  state.shuffle = options.shuffle;
  state.data = options.data;
  state.ranks = comm.size();
  // Rows of the global batch: those of the data-parallel ranks (a
  // perturbation pair's two ranks read the same rows).
  state.rowsPerStep =
      artifact.manifest().task.batch * dataRanks(artifact.manifest(), comm);
  artifact.initialize(options.seed, comm.rank());
  setup.sync = makeSyncPolicy(artifact, comm);
  const bool resumed = !options.loadPath.empty() && load(setup);
  checkStepRange(state);
  artifact.uploadModel(); // a cuda artifact's copy of what was loaded
  setup.sync->begin(resumed);
  openInputsAndOutputs(setup);
}

void Trainer::agreeOnStart(Setup &setup) {
  const TrainerState &state = setup.state;
  // Ranks that loaded different checkpoints would resume at other steps.
  agreeOnSettings(comm,
                  {{"the step it resumes from", std::to_string(state.step)},
                   {"the data position", std::to_string(state.dataPosition)},
                   {"the seed", std::to_string(state.seed)}});
  if (options.saveAsync &&
      (setup.sync->savesPerRank() || artifact.manifest().zeroSavesShards())) {
    // The per-rank writers' collectives (CO2's averages, ZeRO-3's gathers,
    // their agreement) run on a communicator of their own, so that they
    // never meet the training's (a collective, hence here, where every
    // rank arrives).
    writers = comm.duplicate();
    agreeOnFailure(comm, writers ? ""
                                 : "--save-async with a CO2 or ZeRO artifact "
                                   "needs an MPI library with "
                                   "MPI_THREAD_MULTIPLE "
                                   "(its ranks' writers run collectives "
                                   "beside the training's); leave "
                                   "--save-async out");
  }
}

void Trainer::announce(const Setup &setup, int64_t firstStep,
                       int64_t lastStep) {
  if (!comm.isRoot())
    return;
  const Manifest &manifest = artifact.manifest();
  log << "training "
      << (manifest.modelSpec.empty() ? artifact.directory()
                                     : manifest.modelSpec)
      << " on " << setup.data->describe();
  if (manifest.precision != "f32")
    log << " in " << manifest.precision << " mixed precision";
  if (comm.size() > 1) {
    log << " with " << comm.size() << " ranks (" << comm.backend();
    // A layout of several axes says how the ranks are arranged: ranks
    // differing only along the last axis are neighbours (row-major).
    if (manifest.mesh.axes.size() > 1)
      log << "; " << manifest.mesh.layout();
    log << ")";
  }
  if (options.steps == 0)
    log << ": no steps (--steps 0)\n";
  else
    log << ": steps " << firstStep << ".." << lastStep << "\n";
  std::string policy = setup.sync->describe();
  if (!policy.empty())
    log << policy << "\n";
}

std::vector<std::unique_ptr<StepObserver>>
Trainer::makeObservers(Setup &setup, std::unique_ptr<StepObserver> trace,
                       int64_t firstStep, int64_t lastStep) {
  const TaskSpec &task = artifact.manifest().task;
  // Classify counts rows (samples), not tokens; task none counts steps.
  const char *unit = task.kind == TaskSpec::Kind::LM         ? "tok"
                     : task.kind == TaskSpec::Kind::Classify ? "rows"
                                                             : "steps";
  // The order matters: the metrics line before the divergence check (the
  // file shows the failing step), evaluation before saving, the faults
  // after the save of their step, the trace written after the metrics.
  std::vector<std::unique_ptr<StepObserver>> observers;
  observers.push_back(makeMetricsObserver(setup.metrics));
  observers.push_back(makeDivergenceGuard(comm, *setup.sync));
  if (setup.compression)
    observers.push_back(makeCompressionObserver(
        *setup.compression, comm, setup.metrics, log, firstStep,
        /*rounds=*/artifact.manifest().co2.localSteps > 0));
  if (options.logPlan && !task.documents && comm.isRoot())
    log << "warning: --log-plan has no effect: the model has no documents "
           "(compile it with --model=gpt:...,docs=1)"
        << std::endl;
  if (auto load = makeDocumentLoadObserver(
          setup.batch, task, *setup.data, setup.state.dataPosition,
          options.logPlan, comm, setup.metrics, log))
    observers.push_back(std::move(load));
  observers.push_back(makeProgressObserver(
      log, comm.isRoot(), firstStep, lastStep, options.logEvery,
      globalTokensPerStep(artifact.manifest(), comm), unit));
  if (setup.eval)
    observers.push_back(makeEvalObserver(artifact, *setup.eval, setup.batch,
                                         comm, *setup.sync, setup.metrics, log,
                                         options.evalEvery, lastStep));
  observers.push_back(saveObserver(setup.state, *setup.sync));
  observers.push_back(makeFaultInjector(comm));
  // CO2 starts its outer round itself and waits for it steps later.
  if (artifact.manifest().co2.localSteps == 0)
    if (auto tuner =
            makeOverlapTuner(comm, options.asyncCollectives, firstStep, log))
      observers.push_back(std::move(tuner));
  if (trace)
    observers.push_back(std::move(trace));
  return observers;
}

StepRecord Trainer::trainStep(Setup &setup, int64_t step, StepSync &sync,
                              int &wantStop) {
  const double commBefore = collectiveSeconds();
  const double blockedBefore = blockedCollectiveSeconds();
  Clock::time_point stepStart = Clock::now();
  setup.data->fill(setup.state.dataPosition, setup.batch);
  artifact.step() = step;
  artifact.uploadInputs(); // a cuda artifact's copy of the batch and step
  setup.trainStep->call();
  artifact.downloadOutputs(
      {setup.lossOut, setup.lrOut, setup.gradNormOut}); // and of results
  double rankLoss = setup.lossOut->get(0);
  for (auto &observer : observers)
    observer->afterCompute(step, rankLoss);
  wantStop = stopSignal();
  setup.sync->completeStep(step, rankLoss, wantStop != 0, sync);
  if (wantStop && !setup.heard && comm.isRoot() && !sync.stopping) {
    std::string note = setup.sync->stopNote(step);
    if (!note.empty())
      log << "stop requested (" << stopSignalName(wantStop) << "): " << note
          << std::endl;
  }
  setup.heard = setup.heard || wantStop;
  StepRecord record;
  record.stepTimeS = secondsSince(stepStart);
  record.commTimeS = collectiveSeconds() - commBefore;
  record.exposedCommS = blockedCollectiveSeconds() - blockedBefore;
  setup.state.step = step;
  ++setup.state.dataPosition;
  setup.sync->agreeOnStep(rankLoss, wantStop != 0, sync);
  record.step = step;
  record.rank = comm.rank();
  record.loss = sync.loss;
  record.rankLoss = rankLoss;
  record.roundLoss = sync.roundLoss;
  record.lr = setup.lrOut ? setup.lrOut->get(0) : NAN;
  record.gradNorm = setup.gradNormOut ? setup.gradNormOut->get(0) : NAN;
  const int64_t tokensPerStep = globalTokensPerStep(artifact.manifest(), comm);
  record.tokensPerS =
      record.stepTimeS > 0 ? tokensPerStep / record.stepTimeS : 0;
  return record;
}

namespace {

/// Adds a step to the run's summary.
void addStep(RunSummary &summary, double &totalStepSeconds,
             const StepRecord &record) {
  ++summary.steps;
  totalStepSeconds += record.stepTimeS;
  summary.commTimeS += record.commTimeS;
  summary.exposedCommS += record.exposedCommS;
  if (summary.steps == 1)
    summary.firstLoss = summary.minLoss = record.loss;
  summary.finalLoss =
      std::isfinite(record.roundLoss) ? record.roundLoss : record.loss;
  summary.minLoss = std::min(summary.minLoss, record.loss);
}

/// The summary's rates and memory, after the last step.
void finishSummary(RunSummary &summary, double totalStepSeconds,
                   int64_t tokensPerStep, double wallSeconds,
                   Artifact &artifact) {
  summary.meanStepTimeS = summary.steps ? totalStepSeconds / summary.steps : 0;
  summary.tokensPerS = totalStepSeconds > 0
                           ? tokensPerStep * summary.steps / totalStepSeconds
                           : 0;
  summary.wallS = wallSeconds;
  summary.hiddenCommFraction =
      summary.commTimeS > 0
          ? std::clamp(1 - summary.exposedCommS / summary.commTimeS, 0.0, 1.0)
          : 0;
  summary.peakTempBytes = allocCacheStats().peakLiveBytes;
  summary.peakDeviceBytes = artifact.peakDeviceBytes();
  // What this rank holds: a ZeRO artifact's slices of the optimizer state,
  // and at stage 3 of the params.
  summary.paramBytes = totalBytes(artifact.params());
  summary.gradBytes = gradientBytes(artifact.manifest());
  summary.optimizerStateBytes = totalBytes(artifact.state());
  summary.peakRssBytes = peakResidentBytes();
}

} // namespace

TrainResult Trainer::run() {
  const Clock::time_point start = Clock::now();
  std::unique_ptr<StepObserver> trace;
  if (!options.tracePath.empty())
    trace = makeTraceObserver(options.tracePath, comm, log);
  ScopedCurrentCommunicator current(comm, &artifact.manifest().mesh);
  if (comm.size() > 1)
    agreeOnSettings(comm, jobSettings(artifact, options, /*eval=*/false));
  Setup setup;
  std::string failure;
  try {
    prepare(setup);
  } catch (const std::exception &e) {
    failure = e.what();
  }
  agreeOnFailure(comm, failure);
  agreeOnStart(setup);
  TrainerState &state = setup.state;
  const int64_t firstStep = state.step + 1;
  const int64_t lastStep = state.step + options.steps;
  announce(setup, firstStep, lastStep);
  if (artifact.manifest().compression.enabled()) {
    setup.compression = std::make_unique<GradientCompression>(
        artifact.manifest().compression, comm.size());
    if (artifact.manifest().co2.localSteps > 0)
      setup.compression->countRounds(); // CO2Rounds drives it
  }
  ScopedCompression compressing(setup.compression.get());
  observers = makeObservers(setup, std::move(trace), firstStep, lastStep);

  RunSummary summary;
  summary.rank = comm.rank();
  double totalStepSeconds = 0;
  bool stopping = false;
  for (int64_t step = firstStep; step <= lastStep && !stopping; ++step) {
    const int64_t traceStart = traceNowNanos();
    StepSync sync;
    int wantStop = 0;
    StepRecord record = trainStep(setup, step, sync, wantStop);
    const int64_t traceNanos = traceNowNanos() - traceStart;
    stopping = sync.stopping;
    addStep(summary, totalStepSeconds, record);
    if (stopping)
      summary.stoppedBy = wantStop ? stopSignalName(wantStop) : "another rank";
    for (auto &observer : observers)
      observer->onStep({record, stopping, wantStop, traceStart, traceNanos});
  }
  const double last = setup.sync->finish();
  if (std::isfinite(last))
    summary.finalLoss = last;
  for (auto &observer : observers)
    observer->onEnd();
  const int64_t tokensPerStep = globalTokensPerStep(artifact.manifest(), comm);
  finishSummary(summary, totalStepSeconds, tokensPerStep, secondsSince(start),
                artifact);
  for (auto &observer : observers)
    observer->onSummary(summary);
  report(summary, state, stopping, lastStep);
  TrainResult result{summary, state};
  result.stopped = stopping;
  result.stopSignal = stopping ? stopSignal() : 0;
  observers.clear();
  return result;
}

void Trainer::report(const RunSummary &summary, const TrainerState &state,
                     bool stopping, int64_t lastStep) {
  if (!comm.isRoot())
    return;
  if (stopping) {
    const int64_t left = lastStep - state.step;
    if (options.savePath.empty())
      log << "stopped " << left << " steps early; nothing saved (no --save)"
          << std::endl;
    else
      log << "stopped " << left << " steps early; to go on: --load "
          << options.savePath << " --steps " << left << std::endl;
  }
  if (!summary.steps) {
    out << "no steps run (model at step " << state.step << ")" << std::endl;
    return;
  }
  out << formatString("final loss %.6f after %lld steps (first loss %.6f)",
                      summary.finalLoss, static_cast<long long>(summary.steps),
                      summary.firstLoss)
      << std::endl;
  // Multi-rank runs only: what the collectives cost and how much of it
  // compute hid (loomc --overlap).
  if (comm.size() > 1)
    out << formatString("communication %.1f ms/step, %.0f%% hidden, "
                        "exposed %.1f ms/step",
                        1e3 * summary.commTimeS / summary.steps,
                        100 * summary.hiddenCommFraction,
                        1e3 * summary.exposedCommS / summary.steps)
        << std::endl;
  out << memoryLine(summary) << std::endl;
  out << modelMemoryLine(summary) << std::endl;
  // Offloaded parameters (docs/zo.md): what moved over the host-device
  // link, the flushes of deferred updates included.
  const TransferTotals moved = transferTotals();
  if (moved.uploadBytes > 0)
    out << formatString("offload: %.2f MiB uploaded and %.2f MiB written "
                        "back per step, waited for %.1f ms/step",
                        moved.uploadBytes / 1048576.0 / summary.steps,
                        moved.offloadBytes / 1048576.0 / summary.steps,
                        1e3 * moved.blockedSeconds / summary.steps)
        << std::endl;
}
EvalResult Trainer::evaluate() {
  ScopedCurrentCommunicator current(comm, &artifact.manifest().mesh);
  const Manifest &manifest = artifact.manifest();
  const bool root = comm.isRoot();
  EvalSetup eval;
  BatchBuffers batch;
  MetricsWriter metrics;
  if (comm.size() > 1)
    agreeOnSettings(comm, jobSettings(artifact, options, /*eval=*/true));
  std::string failure;
  try {
    checkZeroJob(manifest, comm.size(), options.externalLauncher);
    checkJobMatchesMesh(manifest.mesh, comm.size(), options.externalLauncher);
    artifact.initialize(options.seed, comm.rank());
    if (!options.loadPath.empty()) {
      LoadResult loaded =
          loadModelWeights(options.loadPath, artifact, comm.rank());
      if (root && !loaded.note.empty())
        log << "note: " << loaded.note << "\n";
    } else if (root) {
      log << "note: no --load: evaluating the initial weights (--seed "
          << options.seed << ")\n";
    }
    artifact.uploadModel();
    eval = prepareEval(artifact, options.data, options.seed, comm,
                       options.evalBatches);
    if (root && !eval.note.empty())
      log << "note: " << eval.note << "\n";
    batch = BatchBuffers::forArtifact(artifact);
    if (!options.metricsPath.empty())
      metrics.open(rankMetricsPath(options.metricsPath, comm.rank()));
  } catch (const std::exception &e) {
    failure = e.what();
  }
  agreeOnFailure(comm, failure);

  if (root)
    log << "evaluating "
        << (manifest.modelSpec.empty() ? artifact.directory()
                                       : manifest.modelSpec)
        << " on " << eval.data->describe() << ": " << eval.batches << " batches"
        << (comm.size() > 1 ? " of " + std::to_string(comm.size()) + " ranks"
                            : "")
        << "\n";
  EvalResult result;
  result.loss = evalLoss(artifact, eval, batch, comm);
  result.batches = eval.batches;
  result.tokens = eval.tokens;
  metrics.writeEval(comm.rank(), result.loss, result.batches, result.tokens);
  if (!std::isfinite(result.loss))
    failTogether(comm,
                 formatString("the evaluation loss is %s",
                              std::isnan(result.loss) ? "NaN" : "infinite"));
  if (root)
    out << formatString("eval loss %.6f over %lld batches (%lld tokens)",
                        result.loss, static_cast<long long>(result.batches),
                        static_cast<long long>(result.tokens))
        << std::endl;
  return result;
}

} // namespace loom::rt
