//===- Trainer.h - The training loop of loom-run ----------------*- C++ -*-===//
//
// Runs `train_step` of a loaded artifact for a number of steps: feeds batches
// from a DataSource, reads the loss/lr/grad_norm outputs, reports progress
// and metrics, and saves/loads checkpoints. Peers are reached only through a
// Communicator, which the trainer also makes the current one for the
// loom_rt_* collectives of the compiled step.
//
// With several ranks (data parallelism): rank r reads rows [r*B, (r+1)*B) of
// each global batch of R*B rows, rank 0 prints and saves, every rank writes
// its own metrics file, and failures every rank reaches together (setup
// errors, a NaN loss, a failed save) end all ranks with one message.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TRAINER_H
#define LOOM_RUNTIME_TRAINER_H

#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Metrics.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

class Artifact;
class Communicator;
class StepObserver;
class SyncPolicy;

/// loom-run --async-collectives: where an --overlap artifact's
/// loom_rt_*_start collectives run (Collectives.h: setAsyncCollectives).
enum class AsyncCollectives {
  /// Measure both ways for a few steps, keep the faster (OverlapTuner.cpp).
  Auto,
  /// On the communication thread, overlapping compute.
  On,
  /// At once on the caller, as synchronous collectives.
  Off,
};

struct TrainOptions {
  /// Steps to run in this invocation (after a resume: this many more).
  int64_t steps = 0;
  std::string data = "synthetic";
  uint64_t seed = 0;
  /// False: a full-checkpoint resume uses the checkpoint's seed.
  bool seedGiven = false;
  bool shuffle = false;
  std::string metricsPath;
  /// Chrome trace JSON of every rank's compute and communication ("": none).
  std::string tracePath;
  std::string loadPath;
  std::string savePath;
  /// Save every K global steps (plus at the end); 0: only at the end.
  int64_t saveEvery = 0;
  /// Rank 0 writes each checkpoint from a copy on a thread of its own while
  /// training goes on (BackgroundSave.h); not for CO2 artifacts.
  bool saveAsync = false;
  /// Progress line every K steps plus first and last; 0: first and last.
  int64_t logEvery = 10;
  /// The job was started by an external launcher (mpirun, srun), for advice
  /// in messages about the rank count.
  bool externalLauncher = false;
  /// Global batches one evaluation averages (0: one pass over the data).
  int64_t evalBatches = 0;
  /// run(): held-out data whose loss is evaluated every evalEvery steps (0:
  /// only after the last step); "": none.
  std::string evalData;
  int64_t evalEvery = 0;
  AsyncCollectives asyncCollectives = AsyncCollectives::Auto;
  /// Documents: rank 0 prints each step's plan (SequencePlan.h).
  bool logPlan = false;
};

struct EvalResult {
  /// Mean loss over the batches and ranks.
  double loss = 0;
  int64_t batches = 0;
  /// Tokens (lm) or rows (classify) evaluated over all ranks.
  int64_t tokens = 0;
};

struct TrainResult {
  RunSummary summary;
  /// Trainer state after the last step (what a save would record).
  TrainerState state;
  /// The ranks stopped before --steps on request (StopRequest.h), after
  /// state.step; `stopSignal` is this rank's signal (0: another rank's).
  bool stopped = false;
  int stopSignal = 0;
};

class BackgroundSave;
struct StepSync;

class Trainer {
public:
  /// `log` receives progress lines and notes (stderr in loom-run), `out` the
  /// final summary line (stdout). Only rank 0 writes to either.
  Trainer(Artifact &artifact, const TrainOptions &options, Communicator &comm,
          std::ostream &log, std::ostream &out);
  ~Trainer();

  /// Initialises or loads, then trains. Throws Error on any failure,
  /// including a non-finite loss; JobError/SilentError (Error.h) for the
  /// failures all ranks reach together.
  TrainResult run();

  /// Loads the weights (a checkpoint directory's model.safetensors: for a
  /// CO2 checkpoint the consensus model) and averages the artifact's loss
  /// entry over `evalBatches` global batches read in order from the start
  /// of the data, without training. Throws like run().
  EvalResult evaluate();

private:
  struct Setup;
  /// Everything before the first step (the steps of it below); throws Error.
  void prepare(Setup &setup);
  void checkOptions();
  void findOutputs(Setup &setup);
  /// --load; returns whether the run resumes a full checkpoint.
  bool load(Setup &setup);
  void resumeState(Setup &setup, const LoadResult &loaded);
  void checkStepRange(const TrainerState &state);
  void openInputsAndOutputs(Setup &setup);
  /// After setup, on every rank: the ranks agree on where they start.
  void agreeOnStart(Setup &setup);
  /// Rank 0's line before the first step.
  void announce(const Setup &setup, int64_t firstStep, int64_t lastStep);
  /// What watches the steps (StepObserver.h), in the order they are told.
  std::vector<std::unique_ptr<StepObserver>>
  makeObservers(Setup &setup, std::unique_ptr<StepObserver> trace,
                int64_t firstStep, int64_t lastStep);
  /// One step: the batch, train_step, the ranks' synchronisation.
  StepRecord trainStep(Setup &setup, int64_t step, StepSync &sync,
                       int &wantStop);
  /// After the loop: the final lines of rank 0.
  void report(const RunSummary &summary, const TrainerState &state,
              bool stopping, int64_t lastStep);
  /// Saves at --save-every and at the end (TrainerSave.cpp).
  std::unique_ptr<StepObserver> saveObserver(TrainerState &state,
                                             SyncPolicy &sync);
  /// Saves a checkpoint; with a per-rank policy every rank writes its own
  /// part.
  void save(TrainerState &state, SyncPolicy &sync);
  void savePerRank(TrainerState &state, SyncPolicy &sync);
  /// A ZeRO artifact's save: every rank writes its shards (ZeroShards.h).
  void saveShards(const TrainerState &state);
  /// Before every rank writes its part of a checkpoint: the previous
  /// background save finished, rank 0's fresh temp dir, whose path it
  /// returns on every rank (agreed: a failure stops every rank).
  std::string beginSaveOnEveryRank();
  /// After rank 0 wrote a checkpoint: every rank learns whether it failed.
  void agreeAfterRootWrote(const std::string &failure);
  /// --save-async: waits for this rank's save in flight, if any, and
  /// logs it; returns its failure ("" if none).
  std::string finishBackgroundSave();

  Artifact &artifact;
  TrainOptions options;
  Communicator &comm;
  std::ostream &log;
  std::ostream &out;
  /// --save-async with CO2 or ZeRO: the ranks' writers' communicator. Declared
  /// before `background`, whose writer uses it until it is destroyed.
  std::unique_ptr<Communicator> writers;
  /// --save-async: rank 0's writer, or with CO2 or ZeRO every rank's.
  std::unique_ptr<BackgroundSave> background;
  /// run(): what watches the steps, made once the setup is done.
  std::vector<std::unique_ptr<StepObserver>> observers;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_TRAINER_H
