//===- SyntheticData.cpp - Seeded synthetic batches -------------*- C++ -*-===//
//
// Synthetic data lets every model train (and every test run) without a data
// set. The classification labels come from a fixed random teacher network,
// so they are learnable and the loss can fall; each row depends only on
// (seed, global row index), see Data.h.
//
//===----------------------------------------------------------------------===//

#include "data/SyntheticData.h"
#include "loom/runtime/Random.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace loom::rt {

namespace {

constexpr int64_t kTeacherHidden = 64;

class SyntheticClassifySource final : public DataSource {
public:
  SyntheticClassifySource(const DataOptions &options, const TaskSpec &task)
      : options(options), task(task) {
    const int64_t features = task.features, classes = task.classes;
    // Fan-in scaled weights keep the hidden activations O(1), so the labels
    // depend on x in a non-trivial but learnable way.
    w1 = draw("synthetic.teacher.w1", kTeacherHidden * features,
              1.0 / std::sqrt(static_cast<double>(features)));
    b1 = draw("synthetic.teacher.b1", kTeacherHidden, 0.1);
    w2 = draw("synthetic.teacher.w2", classes * kTeacherHidden,
              1.0 / std::sqrt(static_cast<double>(kTeacherHidden)));
    x.resize(features);
    hidden.resize(kTeacherHidden);
  }

  void fill(int64_t k, const BatchBuffers &out) override {
    const int64_t features = task.features, classes = task.classes;
    const int64_t firstRow = globalRow(options, k, task.batch, 0);
    const CounterRng rows = CounterRng::forName(options.seed, "synthetic.x");
    for (int64_t i = 0; i < task.batch; ++i) {
      CounterRng rng = rows.substream(static_cast<uint64_t>(firstRow + i));
      for (int64_t f = 0; f < features; ++f) {
        x[f] = rng.normal();
        if (out.xIsF64)
          static_cast<double *>(out.x)[i * features + f] = x[f];
        else
          static_cast<float *>(out.x)[i * features + f] =
              static_cast<float>(x[f]);
      }
      for (int64_t h = 0; h < kTeacherHidden; ++h) {
        double sum = b1[h];
        for (int64_t f = 0; f < features; ++f)
          sum += w1[h * features + f] * x[f];
        hidden[h] = std::max(sum, 0.0);
      }
      int32_t best = 0;
      double bestLogit = -INFINITY;
      for (int64_t c = 0; c < classes; ++c) {
        double logit = 0;
        for (int64_t h = 0; h < kTeacherHidden; ++h)
          logit += w2[c * kTeacherHidden + h] * hidden[h];
        if (logit > bestLogit) {
          bestLogit = logit;
          best = static_cast<int32_t>(c);
        }
      }
      out.y[i] = best;
    }
  }

  std::string describe() const override {
    return "synthetic (x ~ N(0,1), labels from a random teacher MLP)";
  }

private:
  std::vector<double> draw(const std::string &name, int64_t count,
                           double scale) const {
    CounterRng rng = CounterRng::forName(options.seed, name);
    std::vector<double> values(count);
    for (double &value : values)
      value = scale * rng.normal();
    return values;
  }

  DataOptions options;
  TaskSpec task;
  std::vector<double> w1, b1, w2;
  std::vector<double> x, hidden; // scratch, reused across batches
};

class SyntheticLMSource final : public DataSource {
public:
  SyntheticLMSource(const DataOptions &options, const TaskSpec &task)
      : options(options), task(task) {}

  void fill(int64_t k, const BatchBuffers &out) override {
    const int64_t seq = task.seq;
    const int64_t firstRow = globalRow(options, k, task.batch, 0);
    const CounterRng rows =
        CounterRng::forName(options.seed, "synthetic.tokens");
    for (int64_t i = 0; i < task.batch; ++i) {
      CounterRng rng = rows.substream(static_cast<uint64_t>(firstRow + i));
      int32_t *tokens = out.tokens + i * seq;
      int32_t *targets = out.targets + i * seq;
      int32_t previous = static_cast<int32_t>(rng.below(task.vocab));
      for (int64_t t = 0; t < seq; ++t) {
        int32_t next = static_cast<int32_t>(rng.below(task.vocab));
        tokens[t] = previous;
        targets[t] = next;
        previous = next;
      }
      if (out.segments)
        fillDocuments(firstRow + i, out.segments + i * seq,
                      out.positions + i * seq);
    }
  }

  std::string describe() const override {
    return task.documents ? "synthetic (uniform random tokens, documents of "
                            "geometric lengths, mean 8)"
                          : "synthetic (uniform random tokens)";
  }

private:
  /// A model with document inputs: each token after the first starts a
  /// new document with probability 1/8 (its own stream, so the tokens are
  /// those of a model without documents).
  void fillDocuments(int64_t row, int32_t *segments, int32_t *positions) {
    CounterRng rng = CounterRng::forName(options.seed, "synthetic.docs")
                         .substream(static_cast<uint64_t>(row));
    int32_t doc = 0, start = 0;
    for (int32_t t = 0; t < task.seq; ++t) {
      if (t > 0 && rng.below(8) == 0) {
        ++doc;
        start = t;
      }
      segments[t] = doc;
      positions[t] = t - start;
    }
  }

  DataOptions options;
  TaskSpec task;
};

} // namespace

std::unique_ptr<DataSource>
makeSyntheticClassifySource(const DataOptions &options, const TaskSpec &task) {
  return std::make_unique<SyntheticClassifySource>(options, task);
}

std::unique_ptr<DataSource> makeSyntheticLMSource(const DataOptions &options,
                                                  const TaskSpec &task) {
  return std::make_unique<SyntheticLMSource>(options, task);
}

} // namespace loom::rt
