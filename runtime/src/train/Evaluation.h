//===- Evaluation.h - Held-out loss, the trainer's entry I/O ---*- C++ -*-===//
//
// Internal to the runtime. Evaluating an artifact's loss entry on held-out
// data, for `loom-run --eval` (Trainer::evaluate) and during training
// (--eval-data: an observer), and the two lookups evaluation shares with the
// training loop: a scalar output of an entry and this rank's data source.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_TRAIN_EVALUATION_H
#define LOOM_RUNTIME_SRC_TRAIN_EVALUATION_H

#include "loom/runtime/Data.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

namespace loom::rt {

class Artifact;
class Communicator;
class Entry;
class MetricsWriter;
class StepObserver;
class SyncPolicy;
class Tensor;
struct EntrySpec;
struct TaskSpec;

/// The output of `entry` called `name` (nullptr if optional and absent);
/// throws Error unless it is an f32 or f64 scalar.
Tensor *scalarOutput(Artifact &artifact, const EntrySpec &entry,
                     const char *name, bool required);

/// This rank's batches of `spec` (Data.h: each data-parallel rank reads its
/// own rows; MeshSpec::dataPosition says which).
std::unique_ptr<DataSource> rankDataSource(const std::string &spec,
                                           uint64_t seed, bool shuffle,
                                           const Communicator &comm,
                                           const MeshSpec &mesh,
                                           const TaskSpec &task);

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
                      uint64_t seed, const Communicator &comm, int64_t batches);

/// The loss entry's mean over the evaluation's batches and the ranks. The
/// batch buffers are the training inputs: the next step refills them.
double evalLoss(Artifact &artifact, EvalSetup &eval, const BatchBuffers &batch,
                Communicator &comm);

/// --eval-data during training: every `every` steps (0: none) and after
/// `lastStep`, the policy's collectives finished first.
std::unique_ptr<StepObserver>
makeEvalObserver(Artifact &artifact, EvalSetup &eval, const BatchBuffers &batch,
                 Communicator &comm, SyncPolicy &sync, MetricsWriter &metrics,
                 std::ostream &log, int64_t every, int64_t lastStep);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_TRAIN_EVALUATION_H
