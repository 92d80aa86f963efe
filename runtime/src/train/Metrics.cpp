//===- Metrics.cpp - JSON-lines metrics files -------------------*- C++ -*-===//
//
// Non-finite values are written as null (JSON has no NaN).
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Metrics.h"
#include "loom/runtime/Error.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>

using nlohmann::ordered_json;

namespace loom::rt {

namespace {
ordered_json number(double value) {
  if (!std::isfinite(value))
    return nullptr;
  return value;
}
} // namespace

std::string rankMetricsPath(const std::string &path, int rank) {
  return rank == 0 ? path : path + ".rank" + std::to_string(rank);
}

MetricsWriter::~MetricsWriter() { close(); }

void MetricsWriter::open(const std::string &path) {
  close();
  file = std::fopen(path.c_str(), "w");
  if (!file)
    fail("cannot write metrics file %s: %s", path.c_str(),
         std::strerror(errno));
  filePath = path;
}

void MetricsWriter::writeLine(const std::string &line) {
  if (!file)
    return;
  if (std::fputs(line.c_str(), file) < 0 || std::fputc('\n', file) < 0 ||
      std::fflush(file) != 0)
    fail("cannot write metrics file %s: %s", filePath.c_str(),
         std::strerror(errno));
}

void MetricsWriter::writeStep(const StepRecord &record) {
  ordered_json line = {{"step", record.step},
                       {"rank", record.rank},
                       {"loss", number(record.loss)},
                       {"rank_loss", number(record.rankLoss)},
                       {"lr", number(record.lr)},
                       {"grad_norm", number(record.gradNorm)},
                       {"step_time_s", number(record.stepTimeS)},
                       {"comm_time_s", number(record.commTimeS)},
                       {"exposed_comm_s", number(record.exposedCommS)},
                       {"tokens_per_s", number(record.tokensPerS)}};
  if (std::isfinite(record.roundLoss))
    line["round_loss"] = record.roundLoss;
  writeLine(line.dump());
}

void MetricsWriter::writeSummary(const RunSummary &summary) {
  ordered_json inner = {
      {"rank", summary.rank},
      {"steps", summary.steps},
      {"first_loss", number(summary.firstLoss)},
      {"final_loss", number(summary.finalLoss)},
      {"min_loss", number(summary.minLoss)},
      {"mean_step_time_s", number(summary.meanStepTimeS)},
      {"comm_time_s", number(summary.commTimeS)},
      {"exposed_comm_s", number(summary.exposedCommS)},
      {"comm_hidden_fraction", number(summary.hiddenCommFraction)},
      {"tokens_per_s", number(summary.tokensPerS)},
      {"wall_s", number(summary.wallS)},
      {"peak_temp_bytes", summary.peakTempBytes},
      {"param_bytes", summary.paramBytes},
      {"grad_bytes", summary.gradBytes},
      {"optimizer_state_bytes", summary.optimizerStateBytes},
      {"peak_rss_bytes", summary.peakRssBytes}};
  if (summary.peakDeviceBytes)
    inner["peak_device_bytes"] = summary.peakDeviceBytes;
  if (!summary.stoppedBy.empty())
    inner["stopped_by"] = summary.stoppedBy;
  ordered_json line = {{"summary", inner}};
  writeLine(line.dump());
}

void MetricsWriter::writeEval(int rank, double loss, int64_t batches,
                              int64_t tokens, int64_t step) {
  ordered_json inner = ordered_json::object();
  if (step >= 0)
    inner["step"] = step;
  inner["rank"] = rank;
  inner["loss"] = number(loss);
  inner["batches"] = batches;
  inner["tokens"] = tokens;
  ordered_json line = {{"eval", inner}};
  writeLine(line.dump());
}

void MetricsWriter::writeRecord(const std::string &key,
                                const std::string &json) {
  writeLine("{" + ordered_json(key).dump() + ": " + json + "}");
}

void MetricsWriter::close() {
  if (file)
    std::fclose(file);
  file = nullptr;
}

} // namespace loom::rt
