//===- Metrics.h - JSON-lines metrics files ---------------------*- C++ -*-===//
//
// `--metrics FILE` writes one JSON object per step and a final summary
// object, flushed line by line so that a crashed run still leaves a
// parseable prefix.
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
  double loss = NAN;
  /// NaN when the entry has no such output; written as null.
  double lr = NAN;
  double gradNorm = NAN;
  double stepTimeS = 0;
  double tokensPerS = 0;
};

struct RunSummary {
  int64_t steps = 0;
  double firstLoss = NAN;
  double finalLoss = NAN;
  double minLoss = NAN;
  double meanStepTimeS = 0;
  double tokensPerS = 0;
  double wallS = 0;
};

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
  void close();

private:
  void writeLine(const std::string &line);
  std::FILE *file = nullptr;
  std::string filePath;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_METRICS_H
