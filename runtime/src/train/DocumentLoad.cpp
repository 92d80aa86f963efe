//===- DocumentLoad.cpp - How evenly packed documents load the ranks ------===//
//
// A model compiled with docs=1 attends within documents, so a row's
// attention work is the number of (query, key) pairs a causal mask inside
// each document leaves, sum of L(L+1)/2 over the row's documents, not the
// row's T(T+1)/2: rows of many short documents do less of it than rows of
// one long one, and packed data parallelism (each rank fills its rows in
// stream order) loads the ranks unevenly. This observer measures that from
// the segments each step fed: per rank and step the pairs, then at the end
// one all-reduce (max and sum per step; the same call on every rank) gives
// the max/mean over ranks, which rank 0 prints and writes to the metrics
// ("documents" record). Beside it, the balance the per-step planner
// (SequencePlan.h) would give the same documents: rank 0 plans the
// global batch from the data source alone (no collective needed; the
// other ranks would compute the same plan, which nothing there uses). For
// a model compiled with --partition-sequences the fed load is the plan's:
// a rank's tokens are one list of pieces whose queries each see their
// document's keys from its start, position + 1 pairs. docs/sequences.md.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Communicator.h"
#include "loom/runtime/Data.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Progress.h"
#include "loom/runtime/SequencePlan.h"
#include "train/StepObserver.h"

#include <algorithm>
#include <ostream>
#include <vector>

namespace loom::rt {

namespace {

class DocumentLoad final : public StepObserver {
public:
  DocumentLoad(const BatchBuffers &batch, const TaskSpec &task,
               const DataSource &data, const int64_t &position, bool logPlan,
               Communicator &comm, MetricsWriter &metrics, std::ostream &log)
      : batch(batch), task(task), data(data), position(position), comm(comm),
        metrics(metrics), log(log), logPlan(logPlan) {}

  void afterCompute(int64_t step, double &) override {
    // The plan, reported beside the fed load, only matters where it is
    // printed (a partitioned model's data source executes its own copy).
    std::vector<int64_t> lengths;
    if (comm.isRoot())
      lengths = data.stepDocuments(position);
    if (!lengths.empty()) {
      const SequencePlan plan =
          planSequences(lengths, stepPlanOptions(comm.size(), task.partitioned,
                                                 task.batch * task.seq));
      planned.push_back(plan.maxOverMean());
      if (logPlan)
        printPlan(step, lengths, plan);
    }
    double pairs = 0;
    int64_t documents = 0;
    if (task.partitioned) {
      // One list of pieces; a piece's queries see the keys of its
      // document from its start, wherever they lie.
      const int64_t n = task.batch * task.seq;
      for (int64_t t = 0; t < n; ++t) {
        pairs += static_cast<double>(batch.positions[t]) + 1;
        documents += t == 0 || batch.segments[t] != batch.segments[t - 1];
      }
      load.push_back(pairs);
      pieces += documents;
      return;
    }
    for (int64_t row = 0; row < task.batch; ++row) {
      const int32_t *seg = batch.segments + row * task.seq;
      for (int64_t t = 0; t < task.seq;) {
        int64_t end = t + 1;
        while (end < task.seq && seg[end] == seg[t])
          ++end;
        const double length = static_cast<double>(end - t);
        pairs += length * (length + 1) / 2;
        ++documents;
        t = end;
      }
    }
    load.push_back(pairs);
    pieces += documents;
  }

  void onEnd() override {
    const int64_t steps = static_cast<int64_t>(load.size());
    if (steps == 0)
      return;
    // [max per step..., sum per step..., documents]: two all-reduces of
    // the same length on every rank (every rank ran the same steps).
    std::vector<double> most(load), sum(load);
    sum.push_back(static_cast<double>(pieces));
    comm.allReduce(most.data(), steps, DType::F64, ReduceOp::Max);
    comm.allReduceSum(sum.data(), steps + 1);
    const double ranks = comm.size();
    double meanRatio = 0, worst = 0, pairs = 0;
    for (int64_t s = 0; s < steps; ++s) {
      const double ratio = sum[s] > 0 ? most[s] / (sum[s] / ranks) : 1;
      meanRatio += ratio / static_cast<double>(steps);
      worst = std::max(worst, ratio);
      pairs += sum[s];
    }
    const double rows = ranks * static_cast<double>(task.batch * steps);
    const double dense = rows * static_cast<double>(task.seq) *
                         static_cast<double>(task.seq + 1) / 2;
    const double perRow = sum[steps] / rows;
    double plannedMean = 0, plannedWorst = 0;
    for (double r : planned) {
      plannedMean += r / static_cast<double>(planned.size());
      plannedWorst = std::max(plannedWorst, r);
    }
    if (!comm.isRoot())
      return;
    std::string line = formatString(
        "documents: %.1f per row; attention pairs %.0f%% of the rows' "
        "without the mask",
        perRow, 100 * pairs / dense);
    if (comm.size() > 1) {
      line += formatString("; per rank max/mean %.3f (mean over steps; "
                           "worst %.3f)",
                           meanRatio, worst);
      if (task.partitioned)
        line += " as planned (--partition-sequences)";
      else if (!planned.empty())
        line += formatString(", planned %.3f (worst %.3f; the plan is "
                             "executed by --partition-sequences)",
                             plannedMean, plannedWorst);
    }
    log << line << std::endl;
    if (metrics.isOpen())
      metrics.writeRecord(
          "documents",
          formatString("{\"per_row\": %.6g, \"pairs_fraction\": %.6g, "
                       "\"load_max_over_mean\": %.6g, "
                       "\"load_max_over_mean_worst\": %.6g, "
                       "\"planned_max_over_mean\": %.6g, "
                       "\"planned_max_over_mean_worst\": %.6g, "
                       "\"steps\": %lld}",
                       perRow, pairs / dense, meanRatio, worst,
                       planned.empty() ? 1.0 : plannedMean,
                       planned.empty() ? 1.0 : plannedWorst,
                       static_cast<long long>(steps)));
  }

private:
  /// --log-plan: per rank, its whole documents and the pieces of split
  /// ones (document index in the step, token range), tokens and pairs.
  void printPlan(int64_t step, const std::vector<int64_t> &lengths,
                 const SequencePlan &plan) {
    log << formatString("plan for step %lld (%zu documents, %lld split): "
                        "max/mean %.3f",
                        static_cast<long long>(step), lengths.size(),
                        static_cast<long long>(plan.split), plan.maxOverMean())
        << std::endl;
    for (int r = 0; r < comm.size(); ++r) {
      int64_t whole = 0;
      std::string pieces;
      for (const SequencePiece &p : plan.pieces) {
        if (p.rank != r)
          continue;
        if (p.begin == 0 && p.end == lengths[p.doc])
          ++whole;
        else
          pieces += formatString(
              ", document %lld [%lld, %lld)", static_cast<long long>(p.doc),
              static_cast<long long>(p.begin), static_cast<long long>(p.end));
      }
      log << formatString("  rank %d: %lld whole%s; %lld tokens, %s pairs", r,
                          static_cast<long long>(whole), pieces.c_str(),
                          static_cast<long long>(plan.tokens[r]),
                          formatCount(plan.load[r]).c_str())
          << std::endl;
    }
  }

  const BatchBuffers &batch;
  TaskSpec task;
  const DataSource &data;
  /// The trainer's data position: the batch a step fed.
  const int64_t &position;
  Communicator &comm;
  MetricsWriter &metrics;
  std::ostream &log;
  const bool logPlan;
  std::vector<double> load, planned;
  int64_t pieces = 0;
};

} // namespace

std::unique_ptr<StepObserver>
makeDocumentLoadObserver(const BatchBuffers &batch, const TaskSpec &task,
                         const DataSource &data, const int64_t &position,
                         bool logPlan, Communicator &comm,
                         MetricsWriter &metrics, std::ostream &log) {
  if (!task.documents || !batch.segments)
    return nullptr;
  return std::make_unique<DocumentLoad>(batch, task, data, position, logPlan,
                                        comm, metrics, log);
}

} // namespace loom::rt
