//===- Evaluation.cpp - Held-out loss, and the trainer's entry I/O --------===//
//
// Evaluation.h says what is here. The evaluation's batches are read in order
// from the start of the data, so every evaluation of a model sees the same
// rows and two runs' numbers compare.
//
//===----------------------------------------------------------------------===//

#include "train/Evaluation.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Metrics.h"
#include "train/StepObserver.h"
#include "train/SyncPolicy.h"

#include <algorithm>
#include <ostream>

namespace loom::rt {

Tensor *scalarOutput(Artifact &artifact, const EntrySpec &entry,
                     const char *name, bool required) {
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

std::unique_ptr<DataSource> rankDataSource(const std::string &spec,
                                           uint64_t seed, bool shuffle,
                                           const Communicator &comm,
                                           const MeshSpec &mesh,
                                           const TaskSpec &task) {
  DataOptions options;
  options.spec = spec;
  options.seed = seed;
  options.shuffle = shuffle;
  auto [rank, ranks] = mesh.dataPosition(comm.rank(), comm.size());
  options.rank = static_cast<int>(rank);
  options.worldSize = static_cast<int>(ranks);
  return makeDataSource(options, task);
}

EvalSetup prepareEval(Artifact &artifact, const std::string &spec,
                      uint64_t seed, const Communicator &comm,
                      int64_t batches) {
  const Manifest &manifest = artifact.manifest();
  EvalSetup eval;
  if (!artifact.hasEntry("loss"))
    fail("artifact %s has no loss entry to evaluate",
         artifact.directory().c_str());
  eval.loss = &artifact.entry("loss");
  eval.lossOut = scalarOutput(artifact, eval.loss->spec(), "loss", true);
  eval.data = rankDataSource(spec, seed, /*shuffle=*/false, comm, manifest.mesh,
                             manifest.task);
  const int64_t rowsPerPass = eval.data->rowsPerPass();
  // Ranks that read rows of their own: the data-parallel ones (the ranks
  // of a tensor-parallel group or a perturbation pair read the same).
  const int64_t dataRanks =
      manifest.mesh.dataPosition(comm.rank(), comm.size()).second;
  // A task without batch rows (kind none) reads no data set: no pass.
  const int64_t rowsPerStep = manifest.task.batch * dataRanks;
  const int64_t perPass =
      rowsPerStep > 0 ? std::max<int64_t>(1, rowsPerPass / rowsPerStep) : 1;
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
        static_cast<long long>(perPass), static_cast<long long>(rowsPerStep),
        static_cast<long long>(perPass));
    batches = perPass;
  }
  eval.batches = batches;
  eval.tokens = manifest.task.tokensPerStep() * dataRanks * batches;
  return eval;
}

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

namespace {

class EvalObserver final : public StepObserver {
public:
  EvalObserver(Artifact &artifact, EvalSetup &eval, const BatchBuffers &batch,
               Communicator &comm, SyncPolicy &sync, MetricsWriter &metrics,
               std::ostream &log, int64_t every, int64_t lastStep)
      : artifact(artifact), eval(eval), batch(batch), comm(comm), sync(sync),
        metrics(metrics), log(log), every(every), lastStep(lastStep) {}

  void onStep(const StepEvent &event) override {
    const int64_t step = event.record.step;
    if (!((every > 0 && step % every == 0) || step == lastStep))
      return;
    // The trainer's collectives must not race the policy's in flight.
    sync.quiesce();
    double heldOut = evalLoss(artifact, eval, batch, comm);
    metrics.writeEval(comm.rank(), heldOut, eval.batches, eval.tokens, step);
    if (comm.isRoot())
      log << formatString("step %lld: eval loss %.4f",
                          static_cast<long long>(step), heldOut)
          << std::endl;
  }

private:
  Artifact &artifact;
  EvalSetup &eval;
  const BatchBuffers &batch;
  Communicator &comm;
  SyncPolicy &sync;
  MetricsWriter &metrics;
  std::ostream &log;
  int64_t every, lastStep;
};

} // namespace

std::unique_ptr<StepObserver>
makeEvalObserver(Artifact &artifact, EvalSetup &eval, const BatchBuffers &batch,
                 Communicator &comm, SyncPolicy &sync, MetricsWriter &metrics,
                 std::ostream &log, int64_t every, int64_t lastStep) {
  return std::make_unique<EvalObserver>(artifact, eval, batch, comm, sync,
                                        metrics, log, every, lastStep);
}

} // namespace loom::rt
