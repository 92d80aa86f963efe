//===- Knapsack.h - L-GreCo's per-layer choice ------------------*- C++ -*-===//
//
// Internal to the runtime. L-GreCo (Markov et al., MLSys 2024) picks one
// compression candidate per layer so that the total cost (bytes, or the
// modelled time) is least while the total compression error stays within
// the error of a uniform baseline. Errors are discretised into `buckets`
// units of budget / buckets, each rounded up (so the chosen total never
// exceeds the budget), and a knapsack over layers x candidates x buckets
// solves it exactly for the discretised errors: O(layers x candidates x
// buckets), after dropping each layer's dominated candidates.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_COMPRESS_KNAPSACK_H
#define LOOM_RUNTIME_SRC_COMPRESS_KNAPSACK_H

#include <cstdint>
#include <optional>
#include <vector>

namespace loom::rt {

/// One candidate of one layer: its error and cost. A non-finite error
/// marks a candidate the layer cannot use.
struct KnapsackItem {
  double error = 0;
  double cost = 0;
};

/// The error units an error takes: ceil(error / unit), unit = budget /
/// buckets (0 units for error 0; budget 0 allows only error-0 items).
int64_t errorUnits(double error, double budget, int buckets);

/// The candidate index per layer with the least total cost whose total of
/// discretised errors is at most `buckets` units; among equal costs, fewer
/// error units, then the lower index, win. nullopt when no choice fits (some
/// layer has no item within the budget). Deterministic: the same inputs give
/// the same answer on every rank.
std::optional<std::vector<int>>
solveKnapsack(const std::vector<std::vector<KnapsackItem>> &layers,
              double budget, int buckets);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_COMPRESS_KNAPSACK_H
