//===- OverlapTuner.cpp - Asynchronous collectives only where they pay ----===//
//
// loom-run --async-collectives auto (the default): an artifact compiled with
// --overlap starts its collectives early and waits late, which hides them
// behind compute when a core and the link are free for them, and costs
// time when they are not (the communication thread's polling and the
// kernel's network work take cycles from the compute they overlap; on a
// 2-core machine with emulated hosts overlapped ZeRO-3 was 0.79x as fast
// as synchronous, bench/RESULTS.md). No model of the machine predicts that
// reliably, so the tuner measures: after kWarmup steps it runs kProbe
// steps with asynchronous starts and kProbe with starts run at once on the
// caller (Collectives.h: setAsyncCollectives), and keeps the faster for the
// rest of the run. Both issue the same collectives in the same order with
// the same values; the ranks agree on the medians (their maxima) so they
// switch alike, at the same step. An artifact whose steps start nothing
// (no --overlap, or its collectives on a GPU) is left alone.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "train/StepObserver.h"

#include <algorithm>
#include <ostream>
#include <vector>

namespace loom::rt {

namespace {

constexpr int64_t kWarmup = 2, kProbe = 4;

/// The middle value; of an even count, the upper of the two middle ones.
double upperMedian(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

class OverlapTuner final : public StepObserver {
public:
  OverlapTuner(Communicator &comm, int64_t firstStep, std::ostream &log)
      : comm(comm), firstStep(firstStep), log(log),
        startsBefore(asyncStartsIssued()) {}

  void onStep(const StepEvent &event) override {
    if (done)
      return;
    const int64_t k = event.record.step - firstStep;
    // The same count on every rank: the same compiled step.
    if (k == 0 && asyncStartsIssued() == startsBefore) {
      done = true;
      return;
    }
    if (k >= kWarmup && k < kWarmup + kProbe)
      async.push_back(event.record.stepTimeS);
    else if (k >= kWarmup + kProbe && k < kWarmup + 2 * kProbe)
      sync.push_back(event.record.stepTimeS);
    if (k == kWarmup + kProbe - 1)
      setAsyncCollectives(false);
    if (k == kWarmup + 2 * kProbe - 1)
      decide(event.record.step);
  }

  void onEnd() override { setAsyncCollectives(true); }

private:
  void decide(int64_t step) {
    done = true;
    double times[2] = {upperMedian(async), upperMedian(sync)};
    comm.allReduce(times, 2, DType::F64, ReduceOp::Max);
    const bool keepAsync = times[0] <= times[1];
    setAsyncCollectives(keepAsync);
    if (comm.isRoot())
      log << formatString(
                 "collectives: asynchronous %.1f ms/step, synchronous %.1f "
                 "ms/step (steps %lld-%lld): %s from step %lld on "
                 "(--async-collectives auto)",
                 1e3 * times[0], 1e3 * times[1],
                 static_cast<long long>(step - 2 * kProbe + 1),
                 static_cast<long long>(step),
                 keepAsync ? "asynchronous" : "synchronous",
                 static_cast<long long>(step + 1))
          << std::endl;
  }

  Communicator &comm;
  const int64_t firstStep;
  std::ostream &log;
  const int64_t startsBefore;
  std::vector<double> async, sync;
  bool done = false;
};

/// --async-collectives off: every start runs on the caller, the whole run.
class SynchronousStarts final : public StepObserver {
public:
  SynchronousStarts() { setAsyncCollectives(false); }
  void onEnd() override { setAsyncCollectives(true); }
};

} // namespace

std::unique_ptr<StepObserver> makeOverlapTuner(Communicator &comm,
                                               AsyncCollectives mode,
                                               int64_t firstStep,
                                               std::ostream &log) {
  if (mode == AsyncCollectives::Off)
    return std::make_unique<SynchronousStarts>();
  if (mode == AsyncCollectives::Auto && comm.size() > 1)
    return std::make_unique<OverlapTuner>(comm, firstStep, log);
  return nullptr;
}

} // namespace loom::rt
