//===- StepObserver.h - What happens around the trainer's steps -*- C++ -*-===//
//
// Internal to the runtime. Everything the trainer does beside running steps
// and synchronising the ranks (SyncPolicy.h) watches the step loop as a
// StepObserver: metrics, the check for a diverged loss, progress lines,
// held-out evaluation, checkpoint saves, tracing and the faults the
// end-to-end tests inject. The loop tells them in a fixed order, the same on
// every rank, so the collectives an observer issues (an evaluation's, a
// save's) match across ranks. docs/trainer.md lists them.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_TRAIN_STEPOBSERVER_H
#define LOOM_RUNTIME_SRC_TRAIN_STEPOBSERVER_H

#include "loom/runtime/Metrics.h"
#include "loom/runtime/Trainer.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

namespace loom::rt {

struct BatchBuffers;
class DataSource;
struct TaskSpec;
class Communicator;
class GradientCompression;
class SyncPolicy;

/// A step, once the ranks agreed on it.
struct StepEvent {
  const StepRecord &record;
  /// The ranks stop after this step (on request).
  bool stopping = false;
  /// This rank's stop request (a signal number, 0: none).
  int wantStop = 0;
  /// Where the step's span began on the trace clock, and how long it took.
  int64_t traceStart = 0, traceNanos = 0;
};

class StepObserver {
public:
  virtual ~StepObserver();
  /// train_step of `step` returned and the ranks have not synchronised
  /// yet; `rankLoss` is this rank's loss (a fault injected may change it).
  virtual void afterCompute(int64_t step, double &rankLoss) {
    (void)step;
    (void)rankLoss;
  }
  virtual void onStep(const StepEvent &event) { (void)event; }
  /// After the last step (or the agreed stop) and the policy's finish.
  virtual void onEnd() {}
  /// The run's summary is complete.
  virtual void onSummary(const RunSummary &summary) { (void)summary; }
};

/// The gradient compression's schedule (train/CompressionObserver.cpp):
/// L-GreCo's re-choices after their measured steps (a collective), the plan
/// printed by rank 0 and written to `metrics`. `rounds`: CO2's outer rounds
/// drive it; the observer only prints and records their plans.
std::unique_ptr<StepObserver>
makeCompressionObserver(GradientCompression &compression, Communicator &comm,
                        MetricsWriter &metrics, std::ostream &log,
                        int64_t firstStep, bool rounds = false);
/// A model with document inputs (docs/sequences.md): each rank's attention
/// work per step from the segments fed, and at the end its max/mean over
/// ranks, and the per-step planner's for the same documents (`data`'s
/// batch `position`, the trainer's data position), printed by rank 0 and
/// written to `metrics`, and with `logPlan` each step's plan; nullptr
/// otherwise.
std::unique_ptr<StepObserver>
makeDocumentLoadObserver(const BatchBuffers &batch, const TaskSpec &task,
                         const DataSource &data, const int64_t &position,
                         bool logPlan, Communicator &comm,
                         MetricsWriter &metrics, std::ostream &log);
/// Writes each step's record and the summary to `metrics` (if open).
std::unique_ptr<StepObserver> makeMetricsObserver(MetricsWriter &metrics);
/// Stops the job at a non-finite loss, on every rank.
std::unique_ptr<StepObserver> makeDivergenceGuard(Communicator &comm,
                                                  const SyncPolicy &sync);
/// Rank 0's progress lines (ProgressReporter) and the stop message.
std::unique_ptr<StepObserver>
makeProgressObserver(std::ostream &log, bool root, int64_t firstStep,
                     int64_t lastStep, int64_t every, int64_t tokensPerStep,
                     const char *unit);
/// Tracing from construction on; the Chrome trace written with the summary.
std::unique_ptr<StepObserver> makeTraceObserver(const std::string &path,
                                                Communicator &comm,
                                                std::ostream &log);
/// --async-collectives (OverlapTuner.cpp): Off runs every loom_rt_*_start
/// at once on the caller; Auto, on several ranks, measures steps both ways
/// and keeps the faster; nullptr for On (the default behaviour) and for
/// Auto on one rank.
std::unique_ptr<StepObserver> makeOverlapTuner(Communicator &comm,
                                               AsyncCollectives mode,
                                               int64_t firstStep,
                                               std::ostream &log);
/// The LOOM_TEST_* faults of TestHooks.h, at their steps.
std::unique_ptr<StepObserver> makeFaultInjector(Communicator &comm);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_TRAIN_STEPOBSERVER_H
