//===- Trainer.cpp - The training loop of loom-run --------------*- C++ -*-===//
//
// One iteration: fill batch `dataPosition`, set the step scalar to the 1-based
// global step, call train_step, read the outputs. Everything a step touches
// was allocated before the loop. The step number and data position are the
// whole trainer state, which is why saving them makes resumes exact.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Trainer.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>

namespace loom::rt {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
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

} // namespace

Trainer::Trainer(Artifact &artifact, const TrainOptions &options,
                 Communicator &comm, std::ostream &log, std::ostream &out)
    : artifact(artifact), options(options), comm(comm), log(log), out(out) {}

TrainResult Trainer::run() {
  const Clock::time_point start = Clock::now();
  const Manifest &manifest = artifact.manifest();
  const bool root = comm.isRoot();
  if (options.saveEvery > 0 && options.savePath.empty())
    fail("--save-every needs --save PATH");
  if (!options.savePath.empty())
    checkSaveTarget(options.savePath);
  if (!artifact.hasEntry("train_step"))
    fail("artifact %s has no train_step entry (was it compiled without an "
         "optimizer?); loom-gradcheck can still check its gradients",
         artifact.directory().c_str());
  Entry &trainStep = artifact.entry("train_step");
  Tensor *lossOut = output(artifact, trainStep.spec(), "loss", true);
  Tensor *lrOut = output(artifact, trainStep.spec(), "lr", false);
  Tensor *gradNormOut = output(artifact, trainStep.spec(), "grad_norm", false);

  TrainerState state;
  state.seed = options.seed;
  state.shuffle = options.shuffle;
  state.data = options.data;
  artifact.initialize(options.seed);
  if (!options.loadPath.empty()) {
    LoadResult loaded = loadCheckpoint(options.loadPath, artifact);
    if (root && !loaded.note.empty())
      log << "note: " << loaded.note << "\n";
    if (loaded.full) {
      state.step = loaded.state.step;
      state.dataPosition = loaded.state.dataPosition;
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

  DataOptions dataOptions;
  dataOptions.spec = options.data;
  dataOptions.seed = state.seed;
  dataOptions.shuffle = options.shuffle;
  dataOptions.rank = comm.rank();
  dataOptions.worldSize = comm.size();
  std::unique_ptr<DataSource> data = makeDataSource(dataOptions, manifest.task);
  BatchBuffers batch = BatchBuffers::forArtifact(artifact);

  MetricsWriter metrics;
  if (root && !options.metricsPath.empty())
    metrics.open(options.metricsPath);

  const int64_t firstStep = state.step + 1;
  const int64_t lastStep = state.step + options.steps;
  const int64_t tokensPerStep = manifest.task.tokensPerStep() * comm.size();
  if (root)
    log << "training "
        << (manifest.modelSpec.empty() ? artifact.directory()
                                       : manifest.modelSpec)
        << " on " << data->describe() << ": steps " << firstStep << ".."
        << lastStep << "\n";

  ProgressReporter progress(firstStep, lastStep, options.logEvery,
                            tokensPerStep);
  RunSummary summary;
  double totalStepSeconds = 0;
  int64_t lastSaved = -1;
  auto save = [&] {
    if (root) {
      saveCheckpoint(options.savePath, artifact, state);
      log << "saved checkpoint " << options.savePath << " (step " << state.step
          << ")\n";
    }
    comm.barrier();
    lastSaved = state.step;
  };

  for (int64_t step = firstStep; step <= lastStep; ++step) {
    Clock::time_point stepStart = Clock::now();
    data->fill(state.dataPosition, batch);
    artifact.step() = step;
    trainStep.call();
    double stepSeconds = secondsSince(stepStart);
    state.step = step;
    ++state.dataPosition;

    // Ranks report the mean over the world (a no-op with one rank).
    double reported[3] = {lossOut->get(0), lrOut ? lrOut->get(0) : NAN,
                          gradNormOut ? gradNormOut->get(0) : NAN};
    comm.allReduceSum(reported, 3);
    for (double &value : reported)
      value /= comm.size();
    double loss = reported[0];
    StepRecord record;
    record.step = step;
    record.loss = loss;
    record.lr = reported[1];
    record.gradNorm = reported[2];
    record.stepTimeS = stepSeconds;
    record.tokensPerS = stepSeconds > 0 ? tokensPerStep / stepSeconds : 0;
    metrics.writeStep(record);
    // Checked after the metrics line so the file shows the failing step.
    if (!std::isfinite(loss))
      fail("loss is %s at step %lld (lr %.3g, grad_norm %.3g); stopping. Try "
           "a lower learning rate or gradient clipping when compiling",
           std::isnan(loss) ? "NaN" : "infinite", static_cast<long long>(step),
           reported[1], reported[2]);
    ++summary.steps;
    totalStepSeconds += stepSeconds;
    if (summary.steps == 1)
      summary.firstLoss = summary.minLoss = loss;
    summary.finalLoss = loss;
    summary.minLoss = std::min(summary.minLoss, loss);
    std::string line = progress.step(step, loss, reported[1], stepSeconds);
    if (root && !line.empty())
      log << line << std::endl;

    if (!options.savePath.empty() && options.saveEvery > 0 &&
        step % options.saveEvery == 0)
      save();
  }
  if (!options.savePath.empty() && lastSaved != state.step)
    save();

  summary.meanStepTimeS = summary.steps ? totalStepSeconds / summary.steps : 0;
  summary.tokensPerS = totalStepSeconds > 0
                           ? tokensPerStep * summary.steps / totalStepSeconds
                           : 0;
  summary.wallS = secondsSince(start);
  metrics.writeSummary(summary);
  if (root) {
    if (summary.steps)
      out << formatString("final loss %.6f after %lld steps (first loss %.6f)",
                          summary.finalLoss,
                          static_cast<long long>(summary.steps),
                          summary.firstLoss)
          << std::endl;
    else
      out << "no steps run (model at step " << state.step << ")" << std::endl;
  }
  return TrainResult{summary, state};
}

} // namespace loom::rt
