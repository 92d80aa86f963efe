//===- CompressionObserver.cpp - The gradient compression's schedule ------===//
//
// Between steps, when the step's collectives are done: tells the
// compression which step comes next (warm-up, measuring) and, after a
// measured step, has the ranks re-choose L-GreCo's plan (one all-reduce of
// the measurements, then the same knapsack on every rank). Every rank runs
// it at the same point of the same steps, so the all-reduce matches.
//
// Under CO2 the compression averages the outer rounds (CO2Rounds drives
// it, a round being its step); the observer then only prints and records
// the plans the rounds chose.
//
//===----------------------------------------------------------------------===//

#include "compress/Compression.h"
#include "loom/runtime/Communicator.h"
#include "train/StepObserver.h"

#include <ostream>

namespace loom::rt {

namespace {

class CompressionObserver final : public StepObserver {
public:
  CompressionObserver(GradientCompression &compression, Communicator &comm,
                      MetricsWriter &metrics, std::ostream &log,
                      int64_t firstStep, bool rounds)
      : compression(compression), comm(comm), metrics(metrics), log(log),
        rounds(rounds) {
    if (!rounds)
      compression.beginStep(firstStep);
    if (comm.isRoot())
      log << compression.describe() << "\n";
    if (!compression.adaptive())
      publish(compression.current(), "plan");
  }

  void onStep(const StepEvent &event) override {
    for (auto &[report, what] : compression.takePosted())
      publish(report, what);
    if (rounds)
      return;
    const int64_t step = event.record.step;
    if (compression.solveDue(step))
      publish(compression.solve(comm, step),
              "plan chosen after step " + std::to_string(step));
    compression.beginStep(step + 1);
  }

private:
  void publish(const PlanReport &report, const std::string &what) {
    if (comm.isRoot())
      log << (rounds ? "outer-round compression " : "gradient compression ")
          << what << ":\n"
          << report.table();
    if (metrics.isOpen())
      metrics.writeRecord("compression", report.json());
  }

  GradientCompression &compression;
  Communicator &comm;
  MetricsWriter &metrics;
  std::ostream &log;
  const bool rounds;
};

} // namespace

std::unique_ptr<StepObserver>
makeCompressionObserver(GradientCompression &compression, Communicator &comm,
                        MetricsWriter &metrics, std::ostream &log,
                        int64_t firstStep, bool rounds) {
  return std::make_unique<CompressionObserver>(compression, comm, metrics, log,
                                               firstStep, rounds);
}

} // namespace loom::rt
