//===- KnapsackBench.cpp - How long L-GreCo's knapsack takes --------------===//
//
// Not a test (times are for bench/RESULTS.md, not assertions): solves
// random instances of LAYERS x CANDIDATES (default 100 x 20, errors and
// costs uniform in (0, 1], one error-0 candidate per layer, the budget the
// total of a middle candidate's errors) with the runtime's 1000 error units
// and prints the median and the slowest of REPEATS solves.
//
//   LoomKnapsackBench [LAYERS CANDIDATES REPEATS]
//
//===----------------------------------------------------------------------===//

#include "compress/Knapsack.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace loom::rt;

int main(int argc, char **argv) {
  const int layers = argc > 1 ? std::atoi(argv[1]) : 100;
  const int candidates = argc > 2 ? std::atoi(argv[2]) : 20;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 200;
  if (layers < 1 || candidates < 1 || repeats < 1) {
    std::fprintf(stderr,
                 "usage: LoomKnapsackBench [LAYERS CANDIDATES REPEATS]\n");
    return 2;
  }
  std::mt19937 gen(1);
  std::uniform_real_distribution<double> unit(1e-6, 1);
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    std::vector<std::vector<KnapsackItem>> items(static_cast<size_t>(layers));
    double budget = 0;
    for (auto &layer : items) {
      layer.push_back({0, 1 + unit(gen)});
      for (int c = 1; c < candidates; ++c)
        layer.push_back({unit(gen), unit(gen)});
      budget += layer[static_cast<size_t>(candidates / 2)].error;
    }
    auto start = std::chrono::steady_clock::now();
    auto picks = solveKnapsack(items, budget, 1000);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    if (!picks)
      return 1;
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("%d layers x %d candidates, 1000 error units: median %.3f ms, "
              "slowest %.3f ms over %d solves\n",
              layers, candidates, seconds[seconds.size() / 2] * 1e3,
              seconds.back() * 1e3, repeats);
  return 0;
}
