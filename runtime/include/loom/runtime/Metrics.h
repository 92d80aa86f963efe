//===- Metrics.h - JSON-lines metrics files ---------------------*- C++ -*-===//
//
// `--metrics FILE` writes one JSON object per step and a final summary
// object, flushed line by line so that a crashed run still leaves a
// parseable prefix. In a multi-rank job every rank writes its own file
// (rankMetricsPath): per-rank timings are what show a straggler or a slow
// link, and writing locally needs no extra communication.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_METRICS_H
#define LOOM_RUNTIME_METRICS_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace loom::rt {

struct StepRecord {
  int64_t step = 0;
  int rank = 0;
  /// The mean of the ranks' losses (the loss of the global batch).
  double loss = NAN;
  /// This rank's train_step loss output.
  double rankLoss = NAN;
  /// NaN when the entry has no such output; written as null.
  double lr = NAN;
  double gradNorm = NAN;
  double stepTimeS = 0;
  /// Time inside the loom_rt_* collectives during the step.
  double commTimeS = 0;
  /// Time the step was blocked waiting for collectives (communication not
  /// hidden behind compute).
  double exposedCommS = 0;
  double tokensPerS = 0;
  /// CO2, at the outer step ending round k > 1: round k-1's mean loss over
  /// ranks and steps, which travels with its all-reduce (NaN otherwise; then
  /// not written).
  double roundLoss = NAN;
};

struct RunSummary {
  int rank = 0;
  int64_t steps = 0;
  double firstLoss = NAN;
  double finalLoss = NAN;
  double minLoss = NAN;
  double meanStepTimeS = 0;
  /// Total time inside the loom_rt_* collectives over all steps.
  double commTimeS = 0;
  /// Total time blocked waiting for collectives over all steps.
  double exposedCommS = 0;
  /// 1 - exposedCommS / commTimeS, clamped to [0, 1] (0 without comm).
  double hiddenCommFraction = 0;
  double tokensPerS = 0;
  double wallS = 0;
  /// The most bytes of compiled code's temporaries (AllocCache) and, for a
  /// cuda artifact, of device memory (Artifact::peakDeviceBytes) in use at
  /// once.
  uint64_t peakTempBytes = 0;
  uint64_t peakDeviceBytes = 0;
  /// What this rank keeps for the model: its parameters, the gradients its
  /// step keeps (one per parameter, or from ZeRO stage 2 on its slice of
  /// each; they are temporaries of the step, so also within peakTempBytes),
  /// and the optimizer's state (CO2's outer state included). A ZeRO
  /// artifact's ranks count the slices they hold.
  uint64_t paramBytes = 0;
  uint64_t gradBytes = 0;
  uint64_t optimizerStateBytes = 0;
  /// The process's peak resident memory (getrusage's ru_maxrss).
  uint64_t peakRssBytes = 0;
  /// The run stopped early on request: "SIGINT", "SIGTERM", "SIGUSR2"
  /// (this rank's signal) or "another rank"; "" when it ran all its steps.
  std::string stoppedBy;
};

/// FILE for rank 0, FILE.rank<R> for rank R > 0.
std::string rankMetricsPath(const std::string &path, int rank);

class MetricsWriter {
public:
  MetricsWriter() = default;
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter &) = delete;
  MetricsWriter &operator=(const MetricsWriter &) = delete;

  /// Truncates and opens `path`; throws Error if it cannot.
  void open(const std::string &path);
  bool isOpen() const { return file != nullptr; }
  void writeStep(const StepRecord &record);
  void writeSummary(const RunSummary &summary);
  /// An evaluation: {"eval": {[step,] rank, loss, batches, tokens}}, with
  /// the step during training (--eval-data), without it for loom-run --eval.
  void writeEval(int rank, double loss, int64_t batches, int64_t tokens,
                 int64_t step = -1);
  /// A line {"<key>": <json>} of another record (the gradient
  /// compression's plan); `json` is one JSON value.
  void writeRecord(const std::string &key, const std::string &json);
  void close();

private:
  void writeLine(const std::string &line);
  std::FILE *file = nullptr;
  std::string filePath;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_METRICS_H
