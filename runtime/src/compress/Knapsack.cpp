//===- Knapsack.cpp - L-GreCo's per-layer choice ----------------*- C++ -*-===//
#include "compress/Knapsack.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace loom::rt {

namespace {

constexpr int64_t kUnusable = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Option {
  int64_t units;
  double cost;
  int index;
};

/// A layer's usable items without the dominated ones (another has no more
/// units and no more cost), by increasing units and decreasing cost.
std::vector<Option> frontier(const std::vector<KnapsackItem> &items,
                             double budget, int buckets) {
  std::vector<Option> options;
  for (int i = 0; i < int(items.size()); ++i) {
    int64_t units = errorUnits(items[i].error, budget, buckets);
    if (units != kUnusable && std::isfinite(items[i].cost))
      options.push_back({units, items[i].cost, i});
  }
  std::sort(options.begin(), options.end(),
            [](const Option &a, const Option &b) {
              return std::tie(a.units, a.cost, a.index) <
                     std::tie(b.units, b.cost, b.index);
            });
  std::vector<Option> kept;
  for (const Option &o : options)
    if (kept.empty() || o.cost < kept.back().cost)
      kept.push_back(o);
  return kept;
}

} // namespace

int64_t errorUnits(double error, double budget, int buckets) {
  if (!std::isfinite(error) || error < 0)
    return kUnusable;
  if (error == 0)
    return 0;
  if (!(budget > 0) || buckets < 1)
    return kUnusable;
  double units = std::ceil(error / (budget / buckets));
  return units > buckets ? kUnusable : static_cast<int64_t>(units);
}

std::optional<std::vector<int>>
solveKnapsack(const std::vector<std::vector<KnapsackItem>> &layers,
              double budget, int buckets) {
  const int64_t width = std::max(buckets, 0) + 1;
  std::vector<double> best(static_cast<size_t>(width), kInf);
  std::vector<double> next(static_cast<size_t>(width));
  best[0] = 0;
  // Per layer and total units: the item chosen and the units before it.
  std::vector<std::vector<int>> chosen(layers.size());
  std::vector<std::vector<int64_t>> before(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    std::vector<Option> options = frontier(layers[l], budget, buckets);
    if (options.empty())
      return std::nullopt;
    std::fill(next.begin(), next.end(), kInf);
    chosen[l].assign(size_t(width), -1);
    before[l].assign(size_t(width), -1);
    for (int64_t e = 0; e < width; ++e) {
      if (best[size_t(e)] == kInf)
        continue;
      for (const Option &o : options) {
        int64_t total = e + o.units;
        if (total >= width)
          break;
        double cost = best[size_t(e)] + o.cost;
        if (cost < next[size_t(total)]) {
          next[size_t(total)] = cost;
          chosen[l][size_t(total)] = o.index;
          before[l][size_t(total)] = e;
        }
      }
    }
    best.swap(next);
  }
  int64_t end = -1;
  for (int64_t e = 0; e < width; ++e)
    if (best[size_t(e)] != kInf &&
        (end < 0 || best[size_t(e)] < best[size_t(end)]))
      end = e;
  if (end < 0)
    return std::nullopt;
  std::vector<int> picks(layers.size());
  for (size_t l = layers.size(); l-- > 0;) {
    picks[l] = chosen[l][size_t(end)];
    end = before[l][size_t(end)];
  }
  return picks;
}

} // namespace loom::rt
