//===- Observers.cpp - The trainer's step observers -------------*- C++ -*-===//
//
// The observers that need nothing of the trainer but what they are given:
// metrics, the divergence guard, progress, tracing and the injected faults.
// Evaluation and saving have files of their own (Evaluation.cpp,
// TrainerSave.cpp).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Communicator.h"
#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Progress.h"
#include "loom/runtime/StopRequest.h"
#include "loom/runtime/Trace.h"
#include "testhooks/TestHooks.h"
#include "train/StepObserver.h"
#include "train/SyncPolicy.h"

#include <cmath>
#include <ostream>

namespace loom::rt {

StepObserver::~StepObserver() = default;

namespace {

class MetricsObserver final : public StepObserver {
public:
  explicit MetricsObserver(MetricsWriter &metrics) : metrics(metrics) {}
  void onStep(const StepEvent &event) override {
    metrics.writeStep(event.record);
  }
  void onSummary(const RunSummary &summary) override {
    metrics.writeSummary(summary);
  }

private:
  MetricsWriter &metrics;
};

/// Told after the metrics, so that the file shows the failing step.
class DivergenceGuard final : public StepObserver {
public:
  DivergenceGuard(Communicator &comm, const SyncPolicy &sync)
      : comm(comm), sync(sync) {}
  void onStep(const StepEvent &event) override {
    const StepRecord &record = event.record;
    if (std::isfinite(record.loss))
      return;
    const bool shared = sync.lossIsShared();
    std::string message = formatString(
        "loss is %s at step %lld (lr %.3g, grad_norm %.3g%s); stopping. Try "
        "a lower learning rate or gradient clipping when compiling",
        std::isnan(record.loss) ? "NaN" : "infinite",
        static_cast<long long>(record.step), record.lr, record.gradNorm,
        shared ? "" : "; this rank's local model");
    // Where the loss is this rank's own, the others cannot learn of it:
    // this rank stops the job (and says a restart would meet the same
    // loss).
    if (!shared && comm.size() > 1)
      abortJob(message, &comm, kAbortStatusFinal);
    failTogether(comm, message);
  }

private:
  Communicator &comm;
  const SyncPolicy &sync;
};

class ProgressObserver final : public StepObserver {
public:
  ProgressObserver(std::ostream &log, bool root, int64_t firstStep,
                   int64_t lastStep, int64_t every, int64_t tokensPerStep,
                   const char *unit)
      : log(log), root(root),
        progress(firstStep, lastStep, every, tokensPerStep, unit) {}
  void onStep(const StepEvent &event) override {
    const StepRecord &record = event.record;
    std::string line = progress.step(record.step, record.loss, record.lr,
                                     record.stepTimeS, event.stopping);
    if (root && !line.empty())
      log << line << std::endl;
    if (event.stopping && root)
      log << "stopping after step " << record.step << " on request ("
          << (event.wantStop ? stopSignalName(event.wantStop)
                             : "a signal to another rank")
          << ")" << std::endl;
  }

private:
  std::ostream &log;
  bool root;
  ProgressReporter progress;
};

class TraceObserver final : public StepObserver {
public:
  TraceObserver(const std::string &path, Communicator &comm, std::ostream &log)
      : path(path), comm(comm), log(log) {
    setTracing(true);
    takeTraceEvents(); // only this run's events
  }
  void onStep(const StepEvent &event) override {
    if (tracingEnabled())
      recordTrace({"step " + std::to_string(event.record.step),
                   TraceLane::Compute, event.traceStart, event.traceNanos, -1,
                   ""});
  }
  void onSummary(const RunSummary &) override {
    setTracing(false);
    writeChromeTrace(path, comm, takeTraceEvents());
    if (comm.isRoot())
      log << "wrote trace " << path << "\n";
  }

private:
  std::string path;
  Communicator &comm;
  std::ostream &log;
};

class FaultInjector final : public StepObserver {
public:
  explicit FaultInjector(Communicator &comm) : comm(comm) {}
  void afterCompute(int64_t step, double &rankLoss) override {
    rankLoss = lossForTests(step, comm.rank(), rankLoss);
    stopSignalForTests(step, comm.rank());
  }
  // After the step's save, as a crash after it would come.
  void onStep(const StepEvent &event) override {
    killPointForTests(event.record.step, comm.rank());
    strayCollectiveForTests(event.record.step, comm);
  }

private:
  Communicator &comm;
};

} // namespace

std::unique_ptr<StepObserver> makeMetricsObserver(MetricsWriter &metrics) {
  return std::make_unique<MetricsObserver>(metrics);
}

std::unique_ptr<StepObserver> makeDivergenceGuard(Communicator &comm,
                                                  const SyncPolicy &sync) {
  return std::make_unique<DivergenceGuard>(comm, sync);
}

std::unique_ptr<StepObserver>
makeProgressObserver(std::ostream &log, bool root, int64_t firstStep,
                     int64_t lastStep, int64_t every, int64_t tokensPerStep,
                     const char *unit) {
  return std::make_unique<ProgressObserver>(log, root, firstStep, lastStep,
                                            every, tokensPerStep, unit);
}

std::unique_ptr<StepObserver> makeTraceObserver(const std::string &path,
                                                Communicator &comm,
                                                std::ostream &log) {
  return std::make_unique<TraceObserver>(path, comm, log);
}

std::unique_ptr<StepObserver> makeFaultInjector(Communicator &comm) {
  return std::make_unique<FaultInjector>(comm);
}

} // namespace loom::rt
