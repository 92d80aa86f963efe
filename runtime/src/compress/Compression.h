//===- Compression.h - Per-layer gradient compression of a run --*- C++ -*-===//
//
// Internal to the runtime. What a run's compressed all-reduces do
// (loom_rt_compressed_all_reduce, one per gradient "slot" of the manifest's
// compression object): which candidate averages each slot at each step, the
// slots' error-feedback state, and for L-GreCo the measurements and the
// knapsack that re-chooses the candidates every few steps without
// recompiling (docs/compression.md).
//
// Threads: average() runs on the communication thread while a step runs;
// beginStep() and solve() run on the trainer's thread between steps, when
// the step's collectives are done (the trainer waited for them), so the two
// never overlap.
//
// Every rank computes the same plan: uniform plans depend on the shapes
// only, and L-GreCo's knapsack gets identical inputs on every rank (one
// all-reduce of the measurements) and is deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMPRESS_COMPRESSION_H
#define LOOM_RUNTIME_SRC_COMPRESS_COMPRESSION_H

#include "compress/Compressors.h"
#include "loom/runtime/Manifest.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::rt {

class Communicator;

/// One layer of a plan, as printed and written to the metrics.
struct PlanRow {
  std::string param;
  int64_t rows = 0, cols = 0;
  std::string method;
  /// Bytes this rank sends per step for it (ring model), and its error
  /// (NaN where it was not measured).
  double bytes = 0;
  double error = 0;
};

/// What a (re-)choice of the plan decided.
struct PlanReport {
  /// The step after which it was chosen (0: before the first step).
  int64_t step = 0;
  std::vector<PlanRow> rows;
  /// Per step and rank: the plan's bytes, plain fp32's, and (L-GreCo) the
  /// uniform baseline's, whose total error is the budget.
  double bytes = 0, fp32Bytes = 0, baselineBytes = 0;
  double budget = 0, error = 0;
  /// The knapsack's time, seconds (L-GreCo).
  double solveSeconds = 0;
  /// What one averaging of every slot is: a "step", or CO2's outer "round"
  /// (then `step` counts rounds and the bytes are per round).
  std::string unit = "step";

  /// The per-layer table and its totals, for the log.
  std::string table() const;
  /// {"step": ..., "layers": [...], ...}: the metrics' record.
  std::string json() const;
};

class GradientCompression {
public:
  GradientCompression(const CompressionSpec &spec, int ranks);

  /// In place: slot `slot`'s gradient (`count` elements) becomes its
  /// average over the ranks with this step's candidate. Collective.
  void average(Communicator &comm, int64_t slot, float *grad, int64_t count);

  /// Before step `step`: what it does (warm-up, measuring).
  void beginStep(int64_t step);
  /// After step `step`: whether the ranks re-choose the plan now.
  bool solveDue(int64_t step) const;
  /// Collective, after a measured step: the ranks sum their measurements
  /// and each solves the same knapsack; the new plan holds from the next
  /// step on.
  PlanReport solve(Communicator &comm, int64_t step);
  /// The plan in force (for uniform methods, the only one).
  PlanReport current() const;

  bool adaptive() const { return isAdaptive; }
  /// Under CO2: its steps are outer rounds, its slots the parameters'
  /// changes over a round (what describe() and the plans say).
  void countRounds() { rounds = true; }

  /// CO2's outer rounds drive the compression themselves (its steps are
  /// rounds, and a plan is chosen while no round is in flight, which the
  /// step observer cannot see); they leave each plan and what to call it
  /// here, for the observer to print and record.
  void post(PlanReport report, std::string what);
  std::vector<std::pair<PlanReport, std::string>> takePosted();
  /// "powersgd:rank=4 on 12 of 16 gradients" or "lgreco (...)".
  std::string describe() const;

  /// L-GreCo's candidates, in the order of the measurements.
  static std::vector<Candidate> lgrecoCandidates(int budgetRank);

private:
  Candidate uniformFor(size_t slot) const;
  void measure(size_t slot, const float *accumulated);
  double cost(size_t slot, size_t candidate) const;

  CompressionSpec spec;
  int ranks;
  bool isAdaptive = false, rounds = false;
  Candidate uniform;
  std::vector<SlotState> slots;
  /// The candidate each slot uses after the warm-up.
  std::vector<Candidate> plan;
  std::vector<double> planErrors;
  /// This step: all fp32 (warm-up), and whether average() measures.
  bool warmingUp = false, measuring = false;
  int64_t firstStep = -1;
  /// L-GreCo: candidates, and per slot and candidate (error, seconds).
  std::vector<Candidate> candidates;
  size_t baselineIndex = 0;
  std::vector<double> measurements;
  std::vector<std::pair<PlanReport, std::string>> posted;
};

/// The compression of the running job's compressed all-reduces (nullptr:
/// none; they then average plainly).
GradientCompression *currentCompression();

/// Installs `compression` for the guard's lifetime.
class ScopedCompression {
public:
  explicit ScopedCompression(GradientCompression *compression);
  ~ScopedCompression();
  ScopedCompression(const ScopedCompression &) = delete;
  ScopedCompression &operator=(const ScopedCompression &) = delete;

private:
  GradientCompression *previous;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMPRESS_COMPRESSION_H
