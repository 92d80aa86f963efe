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
// Checkpoint saves are in TrainerSave.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Trainer.h"
#include "CO2Rounds.h"
#include "Clock.h"
#include "TestHooks.h"
#include "loom/runtime/AllocCache.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Progress.h"
#include "loom/runtime/StopRequest.h"
#include "loom/runtime/Trace.h"
#include "loom/runtime/World.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>

namespace loom::rt {

namespace {

/// What rank 0 used at most: a cpu artifact's temporaries (its parameters
/// and state are the size of the checkpoint), a cuda artifact's device
/// memory, all of it.
std::string memoryLine(const RunSummary &summary) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (summary.peakDeviceBytes)
    return formatString("memory: GPU peak %.1f MiB in use (parameters, "
                        "optimizer state, temporaries)",
                        summary.peakDeviceBytes / kMiB);
  return formatString("memory: temporaries peak %.1f MiB",
                      summary.peakTempBytes / kMiB);
}

/// The train_step output called `name` (nullptr if optional and absent).
Tensor *output(Artifact &artifact, const EntrySpec &entry, const char *name,
               bool required) {
  const EntryArg *arg = entry.findOutput(name);
  if (!arg) {
    if (required)
      fail("%s: entries.%s has no output named '%s'",
           artifact.manifest().source.c_str(), entry.name.c_str(), name);
    return nullptr;
  }
  if (!arg->shape.empty() || !isFloat(arg->dtype))
    fail("%s: entries.%s: output '%s' must be an f32 or f64 scalar",
         artifact.manifest().source.c_str(), entry.name.c_str(), name);
  return &artifact.tensor(name);
}

/// This rank's batches of `spec` (Data.h: each rank reads its own rows).
std::unique_ptr<DataSource> rankDataSource(const std::string &spec,
                                           uint64_t seed, bool shuffle,
                                           const Communicator &comm,
                                           const TaskSpec &task) {
  DataOptions options;
  options.spec = spec;
  options.seed = seed;
  options.shuffle = shuffle;
  options.rank = comm.rank();
  options.worldSize = comm.size();
  return makeDataSource(options, task);
}

/// What evaluating needs: the loss entry, its output, the held-out data and
/// how many global batches of it make one evaluation.
struct EvalSetup {
  Entry *loss = nullptr;
  Tensor *lossOut = nullptr;
  std::unique_ptr<DataSource> data;
  int64_t batches = 0;
  int64_t tokens = 0; // over all ranks
  /// For the log: --eval-batches was capped at what the data holds.
  std::string note;
};

/// Throws Error if the artifact cannot be evaluated on `spec`.
EvalSetup prepareEval(Artifact &artifact, const std::string &spec,
                      uint64_t seed, const Communicator &comm,
                      int64_t batches) {
  const Manifest &manifest = artifact.manifest();
  EvalSetup eval;
  if (!artifact.hasEntry("loss"))
    fail("artifact %s has no loss entry to evaluate",
         artifact.directory().c_str());
  eval.loss = &artifact.entry("loss");
  eval.lossOut = output(artifact, eval.loss->spec(), "loss", true);
  eval.data =
      rankDataSource(spec, seed, /*shuffle=*/false, comm, manifest.task);
  const int64_t rowsPerPass = eval.data->rowsPerPass();
  const int64_t perPass =
      std::max<int64_t>(1, rowsPerPass / (manifest.task.batch * comm.size()));
  if (batches == 0) {
    if (rowsPerPass == 0)
      fail("evaluating on %s needs --eval-batches N (the data has no end)",
           eval.data->describe().c_str());
    batches = perPass;
  } else if (rowsPerPass > 0 && batches > perPass) {
    // More would read the same windows again (the source wraps around)
    // and count them twice in the mean, under a larger batch count.
    eval.note = formatString(
        "--eval-batches %lld: %s holds %lld global batches of %lld rows; "
        "evaluating those %lld",
        static_cast<long long>(batches), spec.c_str(),
        static_cast<long long>(perPass),
        static_cast<long long>(manifest.task.batch * comm.size()),
        static_cast<long long>(perPass));
    batches = perPass;
  }
  eval.batches = batches;
  eval.tokens = manifest.task.tokensPerStep() * comm.size() * batches;
  return eval;
}

/// The loss entry's mean over the evaluation's batches and the ranks. The
/// batch buffers are the training inputs: the next step refills them.
double evalLoss(Artifact &artifact, EvalSetup &eval, const BatchBuffers &batch,
                Communicator &comm) {
  double sum = 0;
  for (int64_t k = 0; k < eval.batches; ++k) {
    eval.data->fill(k, batch);
    artifact.uploadInputs();
    eval.loss->call();
    artifact.downloadOutputs({eval.lossOut});
    sum += eval.lossOut->get(0);
  }
  double loss = sum / static_cast<double>(eval.batches);
  comm.allReduceSum(&loss, 1);
  return loss / comm.size();
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
  /// CO2: local steps, and an outer step every local_steps steps whose
  /// collective stays in flight across steps (CO2Rounds.h).
  std::unique_ptr<CO2Rounds> co2;
  /// --eval-data: the held-out loss during training.
  std::optional<EvalSetup> eval;
};

Trainer::Trainer(Artifact &artifact, const TrainOptions &options,
                 Communicator &comm, std::ostream &log, std::ostream &out)
    : artifact(artifact), options(options), comm(comm), log(log), out(out) {}

Trainer::~Trainer() = default;

void Trainer::prepare(Setup &setup) {
  const Manifest &manifest = artifact.manifest();
  const bool root = comm.isRoot();
  checkJobMatchesMesh(manifest.mesh, comm.size(), options.externalLauncher);
  if (options.saveEvery > 0 && options.savePath.empty())
    fail("--save-every needs --save PATH");
  // Rank 0 writes a replicated checkpoint; every CO2 rank its own part.
  const bool writesCheckpoints = root || manifest.co2.localSteps > 0;
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
  if (!artifact.hasEntry("train_step"))
    fail("artifact %s has no train_step entry (was it compiled without an "
         "optimizer?); loom-gradcheck can still check its gradients",
         artifact.directory().c_str());
  setup.trainStep = &artifact.entry("train_step");
  const EntrySpec &spec = setup.trainStep->spec();
  setup.lossOut = output(artifact, spec, "loss", true);
  setup.lrOut = output(artifact, spec, "lr", false);
  setup.gradNormOut = output(artifact, spec, "grad_norm", false);

  TrainerState &state = setup.state;
  state.seed = options.seed;
  state.shuffle = options.shuffle;
  state.data = options.data;
  state.ranks = comm.size();
  state.rowsPerStep = manifest.task.batch * comm.size();
  artifact.initialize(options.seed);
  if (manifest.co2.localSteps > 0)
    setup.co2 = std::make_unique<CO2Rounds>(artifact, comm);
  bool resumed = false;
  if (!options.loadPath.empty()) {
    // CO2 ranks resume from their own part of a per-rank checkpoint.
    std::optional<PerRankTensors> perRank;
    if (setup.co2)
      perRank = setup.co2->checkpointTensors();
    LoadResult loaded = loadCheckpoint(options.loadPath, artifact, comm.rank(),
                                       perRank ? &*perRank : nullptr);
    if (root && !loaded.note.empty())
      log << "note: " << loaded.note << "\n";
    if (loaded.full) {
      resumed = true;
      state.step = loaded.state.step;
      state.dataPosition = loaded.state.dataPosition;
      if (loaded.state.ranks != comm.size()) {
        DataResume moved = resumeUnderOtherRanks(
            loaded, comm.size(), state.rowsPerStep, setup.co2 != nullptr,
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
        log << "note: the checkpoint was trained on --data "
            << loaded.state.data << "; continuing on " << options.data << "\n";
      if (root && options.shuffle != loaded.state.shuffle)
        log << "note: the checkpoint was saved "
            << (loaded.state.shuffle ? "with" : "without")
            << " --shuffle; this run is "
            << (options.shuffle ? "shuffled" : "sequential") << "\n";
      if (root)
        log << "resuming from " << loaded.path << " at step " << state.step
            << "\n";
    } else if (root) {
      log << "loaded weights from " << loaded.path
          << " (fresh optimizer state, step 0)\n";
    }
  }

  // The step counter and the data rows of the last step must fit in
  // int64_t: past it the step number wrapped negative and the run stopped
  // after one step, reporting success.
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

  artifact.uploadModel(); // a cuda artifact's copy of what was loaded

  // The anchors come from the checkpoint, or from the starting weights.
  if (setup.co2 && resumed)
    setup.co2->restore();
  else if (setup.co2)
    setup.co2->start();

  setup.data = rankDataSource(options.data, state.seed, options.shuffle, comm,
                              manifest.task);
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
    setup.eval = prepareEval(artifact, options.evalData, state.seed, comm,
                             options.evalBatches);
    if (root && !setup.eval->note.empty())
      log << "note: " << setup.eval->note << "\n";
  }
}

TrainResult Trainer::run() {
  const Clock::time_point start = Clock::now();
  if (!options.tracePath.empty()) {
    setTracing(true);
    takeTraceEvents(); // only this run's events
  }
  ScopedCurrentCommunicator current(comm);
  const Manifest &manifest = artifact.manifest();
  const bool root = comm.isRoot();

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
  TrainerState &state = setup.state;
  // Ranks that loaded different checkpoints would resume at other steps.
  agreeOnSettings(comm,
                  {{"the step it resumes from", std::to_string(state.step)},
                   {"the data position", std::to_string(state.dataPosition)},
                   {"the seed", std::to_string(state.seed)}});
  if (options.saveAsync && setup.co2) {
    // CO2's writers average and agree on a communicator of their own, so
    // their collectives never meet the training's (a collective, hence
    // here, where every rank arrives).
    writers = comm.duplicate();
    agreeOnFailure(comm, writers ? ""
                                 : "--save-async with a CO2 artifact needs "
                                   "an MPI library with MPI_THREAD_MULTIPLE "
                                   "(its ranks' writers run collectives "
                                   "beside the training's); leave "
                                   "--save-async out");
  }
  Entry &trainStep = *setup.trainStep;

  const int64_t firstStep = state.step + 1;
  const int64_t lastStep = state.step + options.steps;
  const int64_t tokensPerStep = manifest.task.tokensPerStep() * comm.size();
  if (root) {
    log << "training "
        << (manifest.modelSpec.empty() ? artifact.directory()
                                       : manifest.modelSpec)
        << " on " << setup.data->describe();
    if (manifest.precision != "f32")
      log << " in " << manifest.precision << " mixed precision";
    if (comm.size() > 1)
      log << " with " << comm.size() << " ranks (" << comm.backend() << ")";
    if (options.steps == 0)
      log << ": no steps (--steps 0)\n";
    else
      log << ": steps " << firstStep << ".." << lastStep << "\n";
  }

  // Classify counts rows (samples), not tokens; task none counts steps.
  const char *unit = manifest.task.kind == TaskSpec::Kind::LM         ? "tok"
                     : manifest.task.kind == TaskSpec::Kind::Classify ? "rows"
                                                                      : "steps";
  ProgressReporter progress(firstStep, lastStep, options.logEvery,
                            tokensPerStep, unit);
  CO2Rounds *co2 = setup.co2.get();
  if (co2 && root)
    log << "co2: an outer step every " << co2->localSteps() << " steps, its "
        << (co2->sharded() ? "reduce-scatter, update of this rank's shard "
                             "and all-gather"
                           : "all-reduce")
        << " overlapping the next " << co2->localSteps() << "\n";
  RunSummary summary;
  summary.rank = comm.rank();
  double totalStepSeconds = 0;
  int64_t lastSaved = -1;
  // A stop on request (StopRequest.h): whether the ranks agreed on it at
  // this step, and whether rank 0 said it heard its own request.
  bool stopping = false, heard = false;

  for (int64_t step = firstStep; step <= lastStep; ++step) {
    const double commBefore = collectiveSeconds();
    const double blockedBefore = blockedCollectiveSeconds();
    const int64_t traceStart = traceNowNanos();
    Clock::time_point stepStart = Clock::now();
    setup.data->fill(state.dataPosition, setup.batch);
    artifact.step() = step;
    artifact.uploadInputs(); // a cuda artifact's copy of the batch and step
    trainStep.call();
    artifact.downloadOutputs(
        {setup.lossOut, setup.lrOut, setup.gradNormOut}); // and of results
    // Compiled code waits for what it starts; this also keeps the
    // trainer's own reductions below out of the communication thread's way.
    // CO2's round stays in flight: its inner steps do not communicate and
    // the trainer reduces only at outer steps.
    const double rankLoss =
        lossForTests(step, comm.rank(), setup.lossOut->get(0));
    stopSignalForTests(step, comm.rank());
    const int wantStop = stopSignal();
    double roundLoss = NAN;
    if (!co2) {
      waitForAllCollectives();
    } else {
      co2->addLoss(rankLoss);
      if (co2->isBoundary(step)) {
        roundLoss = co2->outerStep(step, wantStop != 0);
        stopping = co2->stopAgreed();
      } else {
        co2->poll();
      }
    }
    if (wantStop && !heard && root && co2 && !stopping) {
      // Votes travel with the next outer step's round and are read at the
      // one after it.
      const int64_t tau = co2->localSteps();
      const int64_t voted = (step + tau - 1) / tau * tau;
      log << "stop requested (" << stopSignalName(wantStop)
          << "): CO2 ranks agree on it at outer steps; stopping after step "
          << voted + tau << " at the latest" << std::endl;
    }
    heard = heard || wantStop;
    double stepSeconds = secondsSince(stepStart);
    double commSeconds = collectiveSeconds() - commBefore;
    double exposedSeconds = blockedCollectiveSeconds() - blockedBefore;
    if (tracingEnabled())
      recordTrace({"step " + std::to_string(step), TraceLane::Compute,
                   traceStart, traceNowNanos() - traceStart, -1, ""});
    state.step = step;
    ++state.dataPosition;

    // The reported loss is the mean over ranks, the loss of the global
    // batch; lr and grad_norm come from the (replicated) optimizer. With
    // CO2 the ranks' models differ within a round and the ranks do not
    // talk: loss is this rank's; at an outer step, round_loss is the
    // previous round's mean over ranks and steps, which arrives with that
    // round's all-reduce.
    double loss = rankLoss;
    if (!co2) {
      // The stop votes ride on the reduction every step runs.
      double reduced[2] = {rankLoss, wantStop ? 1.0 : 0.0};
      comm.allReduceSum(reduced, 2);
      loss = reduced[0] / comm.size();
      stopping = reduced[1] > 0;
    }
    StepRecord record;
    record.step = step;
    record.rank = comm.rank();
    record.loss = loss;
    record.rankLoss = rankLoss;
    record.roundLoss = roundLoss;
    record.lr = setup.lrOut ? setup.lrOut->get(0) : NAN;
    record.gradNorm = setup.gradNormOut ? setup.gradNormOut->get(0) : NAN;
    record.stepTimeS = stepSeconds;
    record.commTimeS = commSeconds;
    record.exposedCommS = exposedSeconds;
    record.tokensPerS = stepSeconds > 0 ? tokensPerStep / stepSeconds : 0;
    setup.metrics.writeStep(record);
    // Checked after the metrics line so the file shows the failing step.
    if (!std::isfinite(loss)) {
      std::string message = formatString(
          "loss is %s at step %lld (lr %.3g, grad_norm %.3g%s); stopping. Try "
          "a lower learning rate or gradient clipping when compiling",
          std::isnan(loss) ? "NaN" : "infinite", static_cast<long long>(step),
          record.lr, record.gradNorm, co2 ? "; this rank's local model" : "");
      // With CO2 the loss is this rank's own, and the others, in local
      // steps without collectives, cannot learn of it: this rank stops the
      // job (and says a restart would meet the same loss).
      if (co2 && comm.size() > 1)
        abortJob(message, &comm, kAbortStatusFinal);
      failTogether(comm, message);
    }
    ++summary.steps;
    totalStepSeconds += stepSeconds;
    summary.commTimeS += commSeconds;
    summary.exposedCommS += exposedSeconds;
    if (summary.steps == 1)
      summary.firstLoss = summary.minLoss = loss;
    summary.finalLoss = co2 && std::isfinite(roundLoss) ? roundLoss : loss;
    summary.minLoss = std::min(summary.minLoss, loss);
    std::string line =
        progress.step(step, loss, record.lr, stepSeconds, stopping);
    if (root && !line.empty())
      log << line << std::endl;
    if (stopping) {
      summary.stoppedBy = wantStop ? stopSignalName(wantStop) : "another rank";
      if (root)
        log << "stopping after step " << step << " on request ("
            << (wantStop ? stopSignalName(wantStop)
                         : "a signal to another rank")
            << ")" << std::endl;
    }

    if (setup.eval &&
        ((options.evalEvery > 0 && step % options.evalEvery == 0) ||
         step == lastStep)) {
      // CO2: the round in flight finishes first (the trainer's collectives
      // must not race the communication thread); at an outer step every
      // rank then holds the new anchor, between them its local model.
      if (co2)
        co2->complete();
      double heldOut = evalLoss(artifact, *setup.eval, setup.batch, comm);
      setup.metrics.writeEval(comm.rank(), heldOut, setup.eval->batches,
                              setup.eval->tokens, step);
      if (root)
        log << formatString("step %lld: eval loss %.4f",
                            static_cast<long long>(step), heldOut)
            << std::endl;
    }
    if (!options.savePath.empty() && options.saveEvery > 0 &&
        step % options.saveEvery == 0) {
      save(state, co2);
      lastSaved = state.step;
    }
    killPointForTests(state.step, comm.rank());
    strayCollectiveForTests(state.step, comm);
    if (stopping)
      break;
  }
  if (co2) {
    // The last round's mean loss arrives with its all-reduce.
    double last = co2->complete();
    if (std::isfinite(last))
      summary.finalLoss = last;
  }
  if (!options.savePath.empty() && lastSaved != state.step)
    save(state, co2);
  // The last save is done before the job reports success.
  if (options.saveAsync)
    agreeAfterRootWrote(finishBackgroundSave());
  if (stopping && root) {
    const int64_t left = lastStep - state.step;
    if (options.savePath.empty())
      log << "stopped " << left << " steps early; nothing saved (no --save)"
          << std::endl;
    else
      log << "stopped " << left << " steps early; to go on: --load "
          << options.savePath << " --steps " << left << std::endl;
  }

  summary.meanStepTimeS = summary.steps ? totalStepSeconds / summary.steps : 0;
  summary.tokensPerS = totalStepSeconds > 0
                           ? tokensPerStep * summary.steps / totalStepSeconds
                           : 0;
  summary.wallS = secondsSince(start);
  summary.hiddenCommFraction =
      summary.commTimeS > 0
          ? std::clamp(1 - summary.exposedCommS / summary.commTimeS, 0.0, 1.0)
          : 0;
  summary.peakTempBytes = allocCacheStats().peakLiveBytes;
  summary.peakDeviceBytes = artifact.peakDeviceBytes();
  setup.metrics.writeSummary(summary);
  if (!options.tracePath.empty()) {
    setTracing(false);
    writeChromeTrace(options.tracePath, comm, takeTraceEvents());
    if (root)
      log << "wrote trace " << options.tracePath << "\n";
  }
  if (root) {
    if (summary.steps) {
      out << formatString("final loss %.6f after %lld steps (first loss %.6f)",
                          summary.finalLoss,
                          static_cast<long long>(summary.steps),
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
    } else {
      out << "no steps run (model at step " << state.step << ")" << std::endl;
    }
  }
  TrainResult result{summary, state};
  result.stopped = stopping;
  result.stopSignal = stopping ? stopSignal() : 0;
  return result;
}

EvalResult Trainer::evaluate() {
  ScopedCurrentCommunicator current(comm);
  const Manifest &manifest = artifact.manifest();
  const bool root = comm.isRoot();
  EvalSetup eval;
  BatchBuffers batch;
  MetricsWriter metrics;
  if (comm.size() > 1)
    agreeOnSettings(comm, jobSettings(artifact, options, /*eval=*/true));
  std::string failure;
  try {
    checkJobMatchesMesh(manifest.mesh, comm.size(), options.externalLauncher);
    artifact.initialize(options.seed);
    if (!options.loadPath.empty()) {
      LoadResult loaded = loadModelWeights(options.loadPath, artifact);
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
