//===- Compression.cpp - Per-layer gradient compression of a run -*- C++ -*-=//
#include "compress/Compression.h"

#include "compress/Knapsack.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "support/Clock.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>

namespace loom::rt {

namespace {

/// Error units of L-GreCo's knapsack (its discretisation of the budget).
constexpr int kBuckets = 1000;

std::atomic<GradientCompression *> installed{nullptr};

std::string humanBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  return formatString(u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
}

Candidate uniformCandidate(const CompressionSpec &spec) {
  std::optional<CompressMethod> method = parseMethodName(spec.method);
  if (!method)
    return Candidate::powerSgd(int(spec.rank)); // lgreco: its baseline
  switch (*method) {
  case CompressMethod::PowerSGD:
    return Candidate::powerSgd(int(spec.rank));
  case CompressMethod::Quant:
    return Candidate::quant(int(spec.bits));
  case CompressMethod::TopK:
    return Candidate::topK(spec.density);
  case CompressMethod::Bf16:
    return Candidate::bf16();
  case CompressMethod::Fp32:
    break;
  }
  return Candidate::fp32();
}

} // namespace

std::vector<Candidate> GradientCompression::lgrecoCandidates(int budgetRank) {
  std::vector<Candidate> all{Candidate::fp32(), Candidate::bf16()};
  for (int r : {1, 2, 4, 8, 16, 32})
    all.push_back(Candidate::powerSgd(r));
  if (budgetRank > 32 || (budgetRank & (budgetRank - 1)) != 0)
    all.push_back(Candidate::powerSgd(budgetRank));
  for (int b : {2, 4, 8})
    all.push_back(Candidate::quant(b));
  for (double d : {0.01, 0.03, 0.1})
    all.push_back(Candidate::topK(d));
  return all;
}

GradientCompression::GradientCompression(const CompressionSpec &spec, int ranks)
    : spec(spec), ranks(ranks), isAdaptive(spec.method == "lgreco"),
      uniform(uniformCandidate(spec)) {
  for (size_t i = 0; i < spec.slots.size(); ++i) {
    SlotState state;
    state.rows = spec.slots[i].rows;
    state.cols = spec.slots[i].cols;
    state.seed = i + 1;
    slots.push_back(std::move(state));
    plan.push_back(isAdaptive ? Candidate::fp32() : uniformFor(i));
    planErrors.push_back(NAN);
  }
  if (isAdaptive) {
    candidates = lgrecoCandidates(int(spec.rank));
    for (size_t i = 0; i < candidates.size(); ++i)
      if (candidates[i] == uniform)
        baselineIndex = i;
    measurements.assign(slots.size() * candidates.size() * 2, 0.0);
  }
}

Candidate GradientCompression::uniformFor(size_t slot) const {
  const SlotState &s = slots[slot];
  return whyNotApplicable(uniform, s.rows, s.cols).empty() ? uniform
                                                           : Candidate::fp32();
}

void GradientCompression::average(Communicator &comm, int64_t slot, float *grad,
                                  int64_t count) {
  if (slot < 0 || slot >= int64_t(slots.size()))
    throw Error(formatString("compressed gradient %lld does not exist (the "
                             "manifest's compression lists %zu)",
                             static_cast<long long>(slot), slots.size()));
  SlotState &state = slots[size_t(slot)];
  if (count != state.rows * state.cols)
    throw Error(formatString(
        "compressed gradient %lld (%s) has %lld elements, but the manifest "
        "says %lld x %lld",
        static_cast<long long>(slot), spec.slots[size_t(slot)].param.c_str(),
        static_cast<long long>(count), static_cast<long long>(state.rows),
        static_cast<long long>(state.cols)));
  if (measuring) {
    std::vector<float> accumulated(static_cast<size_t>(count));
    accumulate(state, grad, accumulated.data());
    measure(size_t(slot), accumulated.data());
  }
  averageCompressed(comm, warmingUp ? Candidate::fp32() : plan[size_t(slot)],
                    state, grad);
}

void GradientCompression::measure(size_t slot, const float *accumulated) {
  const SlotState &state = slots[slot];
  const int64_t n = state.rows * state.cols;
  std::vector<float> sent(static_cast<size_t>(n));
  // Relative: each layer's error as a share of its accumulated gradient
  // (Adam scales a layer's update by its own gradient's size, so the share
  // is what harms); a zero gradient has no error to share.
  double scale = 1;
  if (spec.errorMeasure == "relative") {
    std::fill(sent.begin(), sent.end(), 0.0f);
    double norm = squaredError(accumulated, sent.data(), n);
    scale = norm > 0 ? 1 / norm : 0;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    double *cell = &measurements[(slot * candidates.size() + i) * 2];
    if (!whyNotApplicable(candidates[i], state.rows, state.cols).empty()) {
      cell[0] = std::numeric_limits<double>::infinity();
      continue;
    }
    auto start = Clock::now();
    compressLocally(candidates[i], state, accumulated, sent.data());
    cell[1] = secondsSince(start);
    cell[0] = scale * squaredError(accumulated, sent.data(), n);
  }
}

void GradientCompression::beginStep(int64_t step) {
  if (firstStep < 0)
    firstStep = step;
  warmingUp = step < firstStep + spec.warmupSteps;
  measuring = solveDue(step);
}

bool GradientCompression::solveDue(int64_t step) const {
  if (!isAdaptive || firstStep < 0)
    return false;
  const int64_t lastWarmup = firstStep + spec.warmupSteps - 1;
  if (step == lastWarmup)
    return true;
  return step > lastWarmup && spec.resolveEvery > 0 &&
         (step - lastWarmup) % spec.resolveEvery == 0;
}

double GradientCompression::cost(size_t slot, size_t candidate) const {
  const SlotState &s = slots[slot];
  const Candidate &c = candidates[candidate];
  double bytes = wireBytes(c, s.rows, s.cols, ranks);
  if (spec.objective == "bytes")
    return bytes;
  double seconds = measurements[(slot * candidates.size() + candidate) * 2 + 1];
  return seconds + bytes / (spec.linkGbps * 1e9 / 8) +
         collectivesPerAveraging(c) * spec.linkLatencyUs * 1e-6;
}

PlanReport GradientCompression::solve(Communicator &comm, int64_t step) {
  comm.allReduceSum(measurements.data(), int64_t(measurements.size()));
  const size_t count = candidates.size();
  for (size_t i = 1; i < measurements.size(); i += 2)
    measurements[i] /= ranks;
  double budget = 0;
  std::vector<std::vector<KnapsackItem>> layers(slots.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    double baseline = measurements[(s * count + baselineIndex) * 2];
    if (std::isfinite(baseline))
      budget += baseline;
    for (size_t c = 0; c < count; ++c)
      layers[s].push_back({measurements[(s * count + c) * 2], cost(s, c)});
  }
  auto start = Clock::now();
  std::optional<std::vector<int>> picks =
      solveKnapsack(layers, budget, kBuckets);
  double solveSeconds = secondsSince(start);
  // The uniform baseline itself is within the budget, but rounding the
  // errors up to the knapsack's grid can leave it out; never choose a plan
  // that costs more than it (fp32, index 0, where it does not apply).
  std::vector<int> baseline(slots.size());
  double baselineCost = 0, pickedCost = 0;
  for (size_t s = 0; s < slots.size(); ++s) {
    bool applies = std::isfinite(measurements[(s * count + baselineIndex) * 2]);
    baseline[s] = applies ? int(baselineIndex) : 0;
    baselineCost += layers[s][size_t(baseline[s])].cost;
    if (picks)
      pickedCost += layers[s][size_t((*picks)[s])].cost;
  }
  if (!picks || pickedCost > baselineCost)
    picks = baseline;
  for (size_t s = 0; s < slots.size(); ++s) {
    size_t pick = size_t((*picks)[s]);
    plan[s] = candidates[pick];
    planErrors[s] = measurements[(s * count + pick) * 2];
  }
  PlanReport report = current();
  report.step = step;
  report.budget = budget;
  report.solveSeconds = solveSeconds;
  std::fill(measurements.begin(), measurements.end(), 0.0);
  return report;
}

void GradientCompression::post(PlanReport report, std::string what) {
  posted.emplace_back(std::move(report), std::move(what));
}

std::vector<std::pair<PlanReport, std::string>>
GradientCompression::takePosted() {
  return std::exchange(posted, {});
}

PlanReport GradientCompression::current() const {
  PlanReport report;
  report.unit = rounds ? "round" : "step";
  report.error = 0;
  for (size_t s = 0; s < slots.size(); ++s) {
    const SlotState &state = slots[s];
    PlanRow row{spec.slots[s].param,
                state.rows,
                state.cols,
                plan[s].name(),
                wireBytes(plan[s], state.rows, state.cols, ranks),
                planErrors[s]};
    report.bytes += row.bytes;
    report.fp32Bytes +=
        wireBytes(Candidate::fp32(), state.rows, state.cols, ranks);
    report.baselineBytes +=
        wireBytes(uniformFor(s), state.rows, state.cols, ranks);
    report.error += row.error;
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string GradientCompression::describe() const {
  // Under CO2 a round is the compression's step and a slot a parameter's
  // change over it.
  const char *what =
      rounds ? "outer-round compression" : "gradient compression";
  const char *slotNames = rounds ? "parameters" : "gradients";
  const char *unit = rounds ? "rounds" : "steps";
  if (isAdaptive)
    return formatString(
        "%s: L-GreCo chooses among %zu candidates per layer for %zu %s, "
        "within the %s error of uniform %s; %lld fp32 warm-up %s, re-chosen "
        "every %lld %s; cost: %s",
        what, candidates.size(), slots.size(), slotNames,
        spec.errorMeasure.c_str(), uniform.name().c_str(), static_cast<long long>(spec.warmupSteps), unit,
        static_cast<long long>(spec.resolveEvery), unit,
        spec.objective == "bytes"
            ? "bytes sent"
            : formatString("modelled time on a %g Gbit/s, %g us link",
                           spec.linkGbps, spec.linkLatencyUs)
                  .c_str());
  size_t compressed = 0;
  for (const Candidate &c : plan)
    compressed += !(c == Candidate::fp32());
  return formatString(
      "%s: %s for %zu of %zu %s%s%s", what, uniform.name().c_str(), compressed,
      slots.size(), slotNames,
      compressed < slots.size() ? " (the others would not shrink: sent as fp32)"
                                : "",
      spec.warmupSteps > 0
          ? formatString(" after %lld fp32 warm-up %s",
                         static_cast<long long>(spec.warmupSteps), unit)
                .c_str()
          : "");
}

std::string PlanReport::table() const {
  size_t width = 5;
  for (const PlanRow &row : rows)
    width = std::max(width, row.param.size());
  const int w = static_cast<int>(width);
  std::ostringstream out;
  out << formatString("  %-*s %-11s %-20s %12s %10s\n", w, "layer", "shape",
                      "method", ("bytes/" + unit).c_str(), "error");
  for (const PlanRow &row : rows)
    out << formatString(
        "  %-*s %-11s %-20s %12s %10s\n", w, row.param.c_str(),
        formatString("%lldx%lld", static_cast<long long>(row.rows),
                     static_cast<long long>(row.cols))
            .c_str(),
        row.method.c_str(), humanBytes(row.bytes).c_str(),
        std::isnan(row.error) ? "-" : formatString("%.3g", row.error).c_str());
  out << formatString("  total %s/%s (fp32 %s: %.2fx less",
                      humanBytes(bytes).c_str(), unit.c_str(),
                      humanBytes(fp32Bytes).c_str(),
                      bytes > 0 ? fp32Bytes / bytes : 0.0);
  if (budget > 0)
    out << formatString("; uniform baseline %s: %.2fx less); error %.4g of "
                        "budget %.4g; solved in %.3f ms\n",
                        humanBytes(baselineBytes).c_str(),
                        bytes > 0 ? baselineBytes / bytes : 0.0, error, budget,
                        solveSeconds * 1e3);
  else
    out << ")\n";
  return out.str();
}

std::string PlanReport::json() const {
  nlohmann::json layers = nlohmann::json::array();
  for (const PlanRow &row : rows)
    layers.push_back(
        {{"param", row.param},
         {"shape", {row.rows, row.cols}},
         {"method", row.method},
         {"bytes", row.bytes},
         {"error", std::isnan(row.error) ? nlohmann::json(nullptr)
                                         : nlohmann::json(row.error)}});
  nlohmann::json out{{"step", step},
                     {"per", unit},
                     {"bytes_per_step", bytes},
                     {"fp32_bytes_per_step", fp32Bytes},
                     {"baseline_bytes_per_step", baselineBytes},
                     {"layers", std::move(layers)}};
  if (budget > 0) {
    out["budget"] = budget;
    out["error"] = error;
    out["solve_seconds"] = solveSeconds;
  }
  return out.dump();
}

GradientCompression *currentCompression() { return installed.load(); }

ScopedCompression::ScopedCompression(GradientCompression *compression)
    : previous(installed.exchange(compression)) {}

ScopedCompression::~ScopedCompression() { installed.store(previous); }

} // namespace loom::rt
