//===- CompressionTest.cpp - Compressed averaging and L-GreCo's choice ----===//
//
// The compressors against plain float64 implementations written here from
// the papers' definitions, on ranks that are threads of this process
// (ThreadRank: each collective reduces every rank's buffer in rank order);
// error feedback's invariant; every rank's result bit-identical; the
// knapsack against brute force; L-GreCo's schedule and plan.
//
//===----------------------------------------------------------------------===//

#include "compress/Compression.h"
#include "compress/Compressors.h"
#include "compress/Knapsack.h"
#include "loom/runtime/Communicator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

using namespace loom::rt;

namespace {

/// What the ranks of a ThreadWorld share.
class ThreadWorld {
public:
  explicit ThreadWorld(int size)
      : size(size), buffers(static_cast<size_t>(size)) {}

  /// Every rank publishes `mine`; once all have, `read` runs on each with
  /// every rank's buffer; none returns before all have read.
  void
  exchange(int rank, const void *mine,
           const std::function<void(const std::vector<const void *> &)> &read) {
    std::unique_lock<std::mutex> lock(mutex);
    buffers[size_t(rank)] = mine;
    arrive(lock);
    lock.unlock();
    read(buffers);
    lock.lock();
    arrive(lock);
  }

  const int size;

private:
  void arrive(std::unique_lock<std::mutex> &lock) {
    const int64_t generation = passed;
    if (++waiting == size) {
      waiting = 0;
      ++passed;
      changed.notify_all();
      return;
    }
    changed.wait(lock, [&] { return passed != generation; });
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<const void *> buffers;
  int waiting = 0;
  int64_t passed = 0;
};

template <typename T>
void reduceInto(const std::vector<const void *> &from, int64_t count,
                ReduceOp op, T *out) {
  for (int64_t i = 0; i < count; ++i) {
    T acc = static_cast<const T *>(from[0])[i];
    for (size_t r = 1; r < from.size(); ++r) {
      T v = static_cast<const T *>(from[r])[i];
      acc = op == ReduceOp::Max ? std::max(acc, v) : T(acc + v);
    }
    out[i] = op == ReduceOp::Mean ? T(acc / T(from.size())) : acc;
  }
}

class ThreadRank final : public Communicator {
public:
  ThreadRank(ThreadWorld &world, int rank) : world(world), me(rank) {}
  int rank() const override { return me; }
  int size() const override { return world.size; }
  const char *backend() const override { return "threads"; }
  void allReduce(void *buf, int64_t count, DType dtype, ReduceOp op) override {
    std::vector<char> result(static_cast<size_t>(count) * dtypeSize(dtype));
    world.exchange(me, buf, [&](const std::vector<const void *> &from) {
      switch (dtype) {
      case DType::F32:
        return reduceInto(from, count, op,
                          reinterpret_cast<float *>(result.data()));
      case DType::F64:
        return reduceInto(from, count, op,
                          reinterpret_cast<double *>(result.data()));
      case DType::I64:
        return reduceInto(from, count, op,
                          reinterpret_cast<int64_t *>(result.data()));
      case DType::I32:
        return reduceInto(from, count, op,
                          reinterpret_cast<int32_t *>(result.data()));
      }
    });
    std::memcpy(buf, result.data(), result.size());
  }
  void reduceScatter(const void *, void *, int64_t, DType, ReduceOp) override {
    FAIL() << "not used";
  }
  void allGather(const void *send, void *recv, int64_t count,
                 DType dtype) override {
    const size_t bytes = size_t(count) * dtypeSize(dtype);
    world.exchange(me, send, [&](const std::vector<const void *> &from) {
      for (size_t r = 0; r < from.size(); ++r)
        std::memcpy(static_cast<char *>(recv) + r * bytes, from[r], bytes);
    });
  }
  void broadcast(void *buf, int64_t count, DType dtype, int root) override {
    std::vector<char> copy(static_cast<size_t>(count) * dtypeSize(dtype));
    world.exchange(me, buf, [&](const std::vector<const void *> &from) {
      std::memcpy(copy.data(), from[size_t(root)], copy.size());
    });
    std::memcpy(buf, copy.data(), copy.size());
  }
  void barrier() override {
    world.exchange(me, nullptr, [](const std::vector<const void *> &) {});
  }
  [[noreturn]] void abort(int) override { std::abort(); }

private:
  ThreadWorld &world;
  int me;
};

/// Runs `body(comm)` on `ranks` threads, one ThreadRank each.
void onRanks(int ranks, const std::function<void(Communicator &)> &body) {
  ThreadWorld world(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      ThreadRank comm(world, r);
      body(comm);
    });
  for (std::thread &t : threads)
    t.join();
}

std::vector<float> randomMatrix(int64_t n, unsigned seed, float scale = 1) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0, scale);
  std::vector<float> m(static_cast<size_t>(n));
  for (float &v : m)
    v = normal(gen);
  return m;
}

/// Each rank's gradient, averaged once with `c` on `ranks` threads: the
/// results per rank.
std::vector<std::vector<float>>
averageOnRanks(const Candidate &c, int64_t rows, int64_t cols,
               const std::vector<std::vector<float>> &grads) {
  std::vector<std::vector<float>> out = grads;
  onRanks(int(grads.size()), [&](Communicator &comm) {
    SlotState slot;
    slot.rows = rows;
    slot.cols = cols;
    slot.seed = 7;
    averageCompressed(comm, c, slot, out[size_t(comm.rank())].data());
  });
  return out;
}

void expectClose(const std::vector<double> &want, const std::vector<float> &got,
                 double relative) {
  ASSERT_EQ(want.size(), got.size());
  double scale = 0;
  for (double v : want)
    scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(want[i], got[i], relative * scale + 1e-30) << "element " << i;
}

std::vector<std::vector<float>> gradsOf(int ranks, int64_t n, unsigned seed) {
  std::vector<std::vector<float>> grads;
  for (int r = 0; r < ranks; ++r)
    grads.push_back(randomMatrix(n, seed + unsigned(r), 1.0f + r));
  return grads;
}

} // namespace

TEST(Compressors, PowerSgdEqualsAFloat64PowerIteration) {
  const int64_t rows = 24, cols = 20;
  const int rank = 3, ranks = 3;
  auto grads = gradsOf(ranks, rows * cols, 11);
  auto got = averageOnRanks(Candidate::powerSgd(rank), rows, cols, grads);
  // Reference: mean M, P = M Q0, Gram-Schmidt, Q = M^T P, M ~ P Q^T.
  std::vector<float> q0 = powerSgdStartQ(7, cols, rank);
  std::vector<double> mean(size_t(rows * cols), 0), p(size_t(rows * rank), 0),
      q(size_t(cols * rank), 0), want(size_t(rows * cols), 0);
  for (auto &g : grads)
    for (size_t i = 0; i < mean.size(); ++i)
      mean[i] += double(g[i]) / ranks;
  for (int64_t i = 0; i < rows; ++i)
    for (int k = 0; k < rank; ++k)
      for (int64_t j = 0; j < cols; ++j)
        p[size_t(i * rank + k)] +=
            mean[size_t(i * cols + j)] * q0[size_t(j * rank + k)];
  for (int k = 0; k < rank; ++k) {
    for (int l = 0; l < k; ++l) {
      double dot = 0;
      for (int64_t i = 0; i < rows; ++i)
        dot += p[size_t(i * rank + l)] * p[size_t(i * rank + k)];
      for (int64_t i = 0; i < rows; ++i)
        p[size_t(i * rank + k)] -= dot * p[size_t(i * rank + l)];
    }
    double norm = 0;
    for (int64_t i = 0; i < rows; ++i)
      norm += p[size_t(i * rank + k)] * p[size_t(i * rank + k)];
    for (int64_t i = 0; i < rows; ++i)
      p[size_t(i * rank + k)] /= std::sqrt(norm);
  }
  for (int64_t j = 0; j < cols; ++j)
    for (int k = 0; k < rank; ++k)
      for (int64_t i = 0; i < rows; ++i)
        q[size_t(j * rank + k)] +=
            mean[size_t(i * cols + j)] * p[size_t(i * rank + k)];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      for (int k = 0; k < rank; ++k)
        want[size_t(i * cols + j)] +=
            p[size_t(i * rank + k)] * q[size_t(j * rank + k)];
  for (int r = 0; r < ranks; ++r)
    expectClose(want, got[size_t(r)], 1e-5);
}

TEST(Compressors, QuantisationEqualsAFloat64Reference) {
  for (int bits : {2, 4, 8})
    for (int ranks : {1, 2, 5}) {
      SCOPED_TRACE(std::to_string(bits) + " bits, " + std::to_string(ranks) +
                   " ranks");
      const int64_t n = 600; // three blocks, the last partial
      auto grads = gradsOf(ranks, n, 5);
      grads[0][3] = 40; // a block's largest value, exactly representable
      grads[0][4] = -40;
      auto got = averageOnRanks(Candidate::quant(bits), 20, 30, grads);
      const double levels = std::pow(2.0, bits - 1) - 1;
      std::vector<double> want(size_t(n), 0);
      for (int64_t block = 0; block * kQuantBlock < n; ++block) {
        int64_t end = std::min(n, (block + 1) * kQuantBlock);
        double scale = 0;
        for (auto &g : grads)
          for (int64_t i = block * kQuantBlock; i < end; ++i)
            scale = std::max(scale, std::fabs(double(g[size_t(i)])));
        for (auto &g : grads)
          for (int64_t i = block * kQuantBlock; i < end; ++i)
            want[size_t(i)] += std::nearbyint(g[size_t(i)] / scale * levels) *
                               scale / levels / ranks;
      }
      for (int r = 0; r < ranks; ++r)
        expectClose(want, got[size_t(r)], 1e-6);
    }
}

TEST(Compressors, TopKSumsEachRanksLargestMagnitudes) {
  const int ranks = 3;
  const int64_t n = 200;
  auto grads = gradsOf(ranks, n, 9);
  auto got = averageOnRanks(Candidate::topK(0.05), 10, 20, grads);
  std::vector<double> want(size_t(n), 0);
  for (auto &g : grads) {
    std::vector<double> magnitudes;
    for (float v : g)
      magnitudes.push_back(std::fabs(v));
    std::sort(magnitudes.rbegin(), magnitudes.rend());
    double threshold = magnitudes[9]; // k = ceil(0.05 * 200) = 10
    for (int64_t i = 0; i < n; ++i)
      if (std::fabs(g[size_t(i)]) >= threshold)
        want[size_t(i)] += double(g[size_t(i)]) / ranks;
  }
  for (int r = 0; r < ranks; ++r)
    expectClose(want, got[size_t(r)], 1e-6);
}

TEST(Compressors, Bf16RoundsToEightSignificantBits) {
  const int ranks = 2;
  auto grads = gradsOf(ranks, 64, 3);
  auto got = averageOnRanks(Candidate::bf16(), 8, 8, grads);
  std::vector<double> want(64, 0);
  for (auto &g : grads)
    for (size_t i = 0; i < 64; ++i) {
      int exponent;
      double fraction = std::frexp(double(g[i]), &exponent);
      want[i] +=
          std::ldexp(std::nearbyint(std::ldexp(fraction, 8)), exponent - 8) /
          ranks;
    }
  for (int r = 0; r < ranks; ++r)
    expectClose(want, got[size_t(r)], 1e-7);
}

TEST(Compressors, EveryRankGetsTheSameBits) {
  const int ranks = 4;
  for (const Candidate &c :
       {Candidate::fp32(), Candidate::bf16(), Candidate::powerSgd(2),
        Candidate::quant(4), Candidate::topK(0.1)}) {
    SCOPED_TRACE(c.name());
    auto got = averageOnRanks(c, 16, 12, gradsOf(ranks, 16 * 12, 21));
    for (int r = 1; r < ranks; ++r)
      EXPECT_EQ(0, std::memcmp(got[0].data(), got[size_t(r)].data(),
                               got[0].size() * sizeof(float)));
  }
}

TEST(Compressors, ErrorFeedbackKeepsSentPlusResidualEqualToTheAccumulated) {
  // One rank: what the average returns is what this rank sent.
  LocalCommunicator comm;
  for (const Candidate &c :
       {Candidate::bf16(), Candidate::powerSgd(2), Candidate::quant(2),
        Candidate::topK(0.05), Candidate::fp32()}) {
    SCOPED_TRACE(c.name());
    SlotState slot;
    slot.rows = 12;
    slot.cols = 10;
    slot.seed = 1;
    for (unsigned step = 0; step < 4; ++step) {
      std::vector<float> grad = randomMatrix(120, 40 + step);
      std::vector<float> accumulated(120);
      accumulate(slot, grad.data(), accumulated.data());
      averageCompressed(comm, c, slot, grad.data());
      for (size_t i = 0; i < 120; ++i) {
        float residual = slot.residual.empty() ? 0 : slot.residual[i];
        ASSERT_NEAR(accumulated[i], grad[i] + residual,
                    1e-6 * (1 + std::fabs(accumulated[i])))
            << "step " << step << ", element " << i;
      }
    }
  }
}

TEST(Compressors, SaysWhyACandidateDoesNotApply) {
  EXPECT_EQ(whyNotApplicable(Candidate::powerSgd(4), 64, 32), "");
  EXPECT_EQ(whyNotApplicable(Candidate::powerSgd(40), 64, 32),
            "rank 40 is above the gradient's smaller dimension 32");
  EXPECT_EQ(whyNotApplicable(Candidate::powerSgd(8), 16, 16),
            "rank 8 sends 256 values, more than half of the 256 it replaces");
  EXPECT_EQ(whyNotApplicable(Candidate::quant(3), 4, 4),
            "3 bits is not one of 2, 4, 8");
  EXPECT_EQ(whyNotApplicable(Candidate::topK(0), 4, 4),
            "density 0 is outside (0, 1]");
  EXPECT_EQ(whyNotApplicable(Candidate::topK(1.5), 4, 4),
            "density 1.5 is outside (0, 1]");
}

TEST(Compressors, WireBytesFollowTheRingModel) {
  // 2 ranks: an all-reduce of B bytes sends B, an all-gather of B sends B.
  EXPECT_EQ(wireBytes(Candidate::fp32(), 64, 32, 2), 4.0 * 64 * 32);
  EXPECT_EQ(wireBytes(Candidate::powerSgd(4), 64, 32, 2), 4.0 * 4 * 96);
  EXPECT_EQ(wireBytes(Candidate::bf16(), 64, 32, 2), 2.0 * 64 * 32);
  EXPECT_EQ(wireBytes(Candidate::topK(0.01), 64, 32, 2), 8.0 * 21);
  // 4 bits on 2 ranks: fields of 5 bits, 12 in 63 bits of a word; 8 scales
  // of 256.
  EXPECT_EQ(wireBytes(Candidate::quant(4), 64, 32, 2),
            4.0 * 8 + 8.0 * ((2048 + 11) / 12));
  EXPECT_EQ(wireBytes(Candidate::fp32(), 64, 32, 1), 0);
}

namespace {

/// The least total cost over every choice whose discretised error fits.
double bruteForce(const std::vector<std::vector<KnapsackItem>> &layers,
                  double budget, int buckets) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<size_t> pick(layers.size(), 0);
  while (true) {
    int64_t units = 0;
    double cost = 0;
    bool usable = true;
    for (size_t l = 0; l < layers.size(); ++l) {
      int64_t u = errorUnits(layers[l][pick[l]].error, budget, buckets);
      usable = usable && u <= buckets;
      units += usable ? u : 0;
      cost += layers[l][pick[l]].cost;
    }
    if (usable && units <= buckets)
      best = std::min(best, cost);
    size_t l = 0;
    while (l < layers.size() && ++pick[l] == layers[l].size())
      pick[l++] = 0;
    if (l == layers.size())
      return best;
  }
}

} // namespace

TEST(Knapsack, EqualsBruteForceOnSmallInstances) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = 1 + trial % 5, candidates = 1 + trial % 4;
    std::vector<std::vector<KnapsackItem>> items(static_cast<size_t>(layers));
    double budget = 0;
    for (auto &layer : items) {
      layer.push_back({0, 10 + 10 * unit(gen)}); // send as is
      for (int c = 1; c < candidates; ++c)
        layer.push_back({unit(gen), 10 * unit(gen)});
      budget += layer.back().error;
    }
    const int buckets = 20 + trial % 50;
    std::optional<std::vector<int>> picks =
        solveKnapsack(items, budget, buckets);
    ASSERT_TRUE(picks);
    double cost = 0, error = 0;
    for (int l = 0; l < layers; ++l) {
      cost += items[size_t(l)][size_t((*picks)[size_t(l)])].cost;
      error += items[size_t(l)][size_t((*picks)[size_t(l)])].error;
    }
    EXPECT_NEAR(cost, bruteForce(items, budget, buckets), 1e-9)
        << "trial " << trial;
    EXPECT_LE(error, budget * (1 + 1e-12)) << "trial " << trial;
  }
}

TEST(Knapsack, ErrorsOnTheGridAreSolvedExactly) {
  // Errors that are whole units are not rounded: the optimum itself.
  std::vector<std::vector<KnapsackItem>> items{{{0, 100}, {2, 30}, {5, 10}},
                                               {{0, 50}, {1, 40}, {4, 1}},
                                               {{0, 80}, {3, 20}}};
  // Budget 7 of 7 units: {2, 4, ...} costs 30 + 1 + 80 = 111; {5, 0, ...}
  // 10 + 50 + 80 = 140; {2, 1, 3}: 30 + 40 + 20 = 90 (6 units) is the best.
  auto picks = solveKnapsack(items, 7, 7);
  ASSERT_TRUE(picks);
  EXPECT_EQ(*picks, (std::vector<int>{1, 1, 1}));
  // No budget: everything sent as is.
  EXPECT_EQ(*solveKnapsack(items, 0, 7), (std::vector<int>{0, 0, 0}));
  // A layer with nothing within the budget: no answer.
  EXPECT_FALSE(solveKnapsack({{{3, 1}}}, 2, 10));
}

namespace {

CompressionSpec lgrecoSpec(int64_t warmup, int64_t every) {
  CompressionSpec spec;
  spec.method = "lgreco";
  spec.rank = 2;
  spec.warmupSteps = warmup;
  spec.resolveEvery = every;
  spec.objective = "bytes";
  spec.slots = {{"big", 64, 48}, {"small", 8, 6}, {"wide", 8, 256}};
  return spec;
}

} // namespace

TEST(GradientCompression, LGreCoMeasuresAfterTheWarmUpAndThenEveryKSteps) {
  GradientCompression compression(lgrecoSpec(3, 4), 2);
  std::vector<int64_t> due;
  for (int64_t step = 11; step <= 25; ++step) {
    compression.beginStep(step);
    if (compression.solveDue(step))
      due.push_back(step);
  }
  EXPECT_EQ(due, (std::vector<int64_t>{13, 17, 21, 25}));
}

TEST(GradientCompression, EveryRankChoosesThePlanWithinTheBudget) {
  const int ranks = 3;
  CompressionSpec spec = lgrecoSpec(1, 0);
  std::vector<PlanReport> reports(ranks);
  std::vector<std::vector<float>> averaged(ranks);
  onRanks(ranks, [&](Communicator &comm) {
    GradientCompression compression(spec, ranks);
    for (int64_t step = 1; step <= 3; ++step) {
      compression.beginStep(step);
      for (size_t s = 0; s < spec.slots.size(); ++s) {
        int64_t n = spec.slots[s].rows * spec.slots[s].cols;
        // Low-rank gradients plus noise: PowerSGD's kind of data.
        std::vector<float> g =
            randomMatrix(n, unsigned(100 * step + s + 7 * comm.rank()), 0.01f);
        for (int64_t i = 0; i < n; ++i)
          g[size_t(i)] += std::sin(0.1 * double(i % spec.slots[s].cols)) *
                          std::cos(0.3 * double(i / spec.slots[s].cols));
        compression.average(comm, int64_t(s), g.data(), n);
        if (s == 0 && step == 3)
          averaged[size_t(comm.rank())] = g;
      }
      if (compression.solveDue(step))
        reports[size_t(comm.rank())] = compression.solve(comm, step);
    }
  });
  // The knapsack's own time is the only thing the ranks may differ in.
  for (PlanReport &report : reports)
    report.solveSeconds = 0;
  const PlanReport &plan = reports[0];
  EXPECT_EQ(plan.step, 1);
  ASSERT_EQ(plan.rows.size(), 3u);
  EXPECT_GT(plan.budget, 0);
  EXPECT_LE(plan.error, plan.budget);
  // Within the error of uniform PowerSGD rank 2, no more bytes than it.
  EXPECT_LE(plan.bytes, plan.baselineBytes);
  for (int r = 1; r < ranks; ++r) {
    EXPECT_EQ(reports[size_t(r)].json(), plan.json());
    EXPECT_EQ(averaged[size_t(r)], averaged[0]);
  }
  // "small" is too small for PowerSGD rank 2 to pay: the baseline sends it
  // as is.
  EXPECT_EQ(plan.baselineBytes,
            wireBytes(Candidate::powerSgd(2), 64, 48, ranks) +
                wireBytes(Candidate::fp32(), 8, 6, ranks) +
                wireBytes(Candidate::powerSgd(2), 8, 256, ranks));
}
