//===- DataTest.cpp - Tests of the batch sources ----------------*- C++ -*-===//
//
// The window arithmetic of text:/tokens: (row i of batch k reads window
// (k*B + i) mod nwin), wrap-around, seeded shuffling, rank slicing (a rank's
// batch is its rows of the global batch), vocab checks, and the synthetic
// sources.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Data.h"
#include "TestUtil.h"
#include "loom/runtime/Artifact.h"

#include <cmath>
#include <map>
#include <set>

using namespace loom::rt;
using namespace loom::rt::test;

namespace {

TaskSpec lmTask(int64_t batch, int64_t seq, int64_t vocab) {
  TaskSpec task;
  task.kind = TaskSpec::Kind::LM;
  task.batch = batch;
  task.seq = seq;
  task.vocab = vocab;
  return task;
}

struct LMBatch {
  explicit LMBatch(const TaskSpec &task)
      : tokens(task.batch * task.seq, -1), targets(task.batch * task.seq, -1) {
    buffers.tokens = tokens.data();
    buffers.targets = targets.data();
  }
  std::vector<int32_t> tokens, targets;
  BatchBuffers buffers;
};

/// A uint16 token file whose i-th token is `value(i)`.
std::string writeTokens(const TempDir &tmp, int64_t count,
                        const std::function<int(int64_t)> &value) {
  std::vector<char> bytes(2 * count);
  for (int64_t i = 0; i < count; ++i) {
    bytes[2 * i] = static_cast<char>(value(i) & 0xff);
    bytes[2 * i + 1] = static_cast<char>(value(i) >> 8);
  }
  std::string path = tmp.file("train.bin");
  writeBytes(path, bytes);
  return path;
}

} // namespace

TEST(Data, TextWindowsAreSequentialAndWrapAround) {
  TempDir tmp;
  const int64_t B = 3, T = 8, n = 5 * T + 4; // nwin = (n-1)/T = 5
  std::string text;
  for (int64_t i = 0; i < n; ++i)
    text += static_cast<char>((i * 37 + 11) % 256);
  writeText(tmp.file("corpus.txt"), text);
  DataOptions options;
  options.spec = "text:" + tmp.file("corpus.txt");
  TaskSpec task = lmTask(B, T, 256);
  auto source = makeDataSource(options, task);
  LMBatch batch(task);
  const int64_t nwin = (n - 1) / T;
  for (int64_t k = 0; k < 7; ++k) { // 21 rows: wraps around 5 windows 4 times
    source->fill(k, batch.buffers);
    for (int64_t i = 0; i < B; ++i) {
      int64_t w = (k * B + i) % nwin;
      for (int64_t t = 0; t < T; ++t) {
        EXPECT_EQ(batch.tokens[i * T + t],
                  static_cast<unsigned char>(text[w * T + t]))
            << "k=" << k << " i=" << i << " t=" << t;
        EXPECT_EQ(batch.targets[i * T + t],
                  static_cast<unsigned char>(text[w * T + t + 1]));
      }
    }
  }
}

TEST(Data, TokenFileIsLittleEndianUint16) {
  TempDir tmp;
  const int64_t B = 2, T = 4;
  auto value = [](int64_t i) { return static_cast<int>((i * 263) % 5000); };
  std::string path = writeTokens(tmp, 41, value);
  DataOptions options;
  options.spec = "tokens:" + path;
  TaskSpec task = lmTask(B, T, 5000);
  auto source = makeDataSource(options, task);
  LMBatch batch(task);
  source->fill(3, batch.buffers); // rows 6, 7 -> windows 6, 7 of 10
  for (int64_t i = 0; i < B; ++i)
    for (int64_t t = 0; t < T; ++t) {
      int64_t w = 3 * B + i;
      EXPECT_EQ(batch.tokens[i * T + t], value(w * T + t));
      EXPECT_EQ(batch.targets[i * T + t], value(w * T + t + 1));
    }
}

TEST(Data, RanksReadDisjointSlicesOfTheGlobalBatchSequence) {
  TempDir tmp;
  std::string path = writeTokens(tmp, 1000, [](int64_t i) { return int(i); });
  TaskSpec task = lmTask(2, 4, 1000);
  DataOptions single, rank1;
  single.spec = rank1.spec = "tokens:" + path;
  rank1.rank = 1;
  rank1.worldSize = 2;
  LMBatch expected(task), actual(task);
  makeDataSource(single, task)->fill(2 * 5 + 1, expected.buffers);
  makeDataSource(rank1, task)->fill(5, actual.buffers);
  EXPECT_EQ(expected.tokens, actual.tokens);
  EXPECT_EQ(expected.targets, actual.targets);
}

TEST(Data, ShuffleIsSeededDeterministicAndInRange) {
  TempDir tmp;
  const int64_t n = 3000, T = 16, B = 8;
  std::string path = writeTokens(tmp, n, [](int64_t i) { return int(i); });
  TaskSpec task = lmTask(B, T, 4096);
  DataOptions options;
  options.spec = "tokens:" + path;
  options.shuffle = true;
  options.seed = 7;
  auto first = makeDataSource(options, task);
  auto second = makeDataSource(options, task);
  LMBatch a(task), b(task), c(task);
  std::set<int32_t> starts;
  for (int64_t k = 0; k < 20; ++k) {
    first->fill(k, a.buffers);
    second->fill(19 - k, b.buffers); // other order, fresh source
    second->fill(k, b.buffers);
    EXPECT_EQ(a.tokens, b.tokens) << "batch " << k;
    for (int64_t i = 0; i < B; ++i) {
      int32_t start = a.tokens[i * T]; // token value == its position
      EXPECT_GE(start, 0);
      EXPECT_LE(start, n - T - 1);
      starts.insert(start);
      for (int64_t t = 0; t < T; ++t) {
        EXPECT_EQ(a.tokens[i * T + t], start + t);
        EXPECT_EQ(a.targets[i * T + t], start + t + 1);
      }
    }
  }
  EXPECT_GT(starts.size(), 150u); // 160 draws from ~3000 starts
  options.seed = 8;
  auto other = makeDataSource(options, task);
  first->fill(0, a.buffers);
  other->fill(0, c.buffers);
  EXPECT_NE(a.tokens, c.tokens);
}

TEST(Data, RejectsTokensOutsideTheVocab) {
  TempDir tmp;
  std::string path =
      writeTokens(tmp, 100, [](int64_t i) { return i == 57 ? 2000 : 5; });
  DataOptions options;
  options.spec = "tokens:" + path;
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(2, 4, 1024)); },
                          {"token 2000 at index 57", "vocab 1024"}));

  writeText(tmp.file("t.txt"), std::string(50, 'a') + "\xe2\x82\xac");
  options.spec = "text:" + tmp.file("t.txt");
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(2, 4, 128)); },
                          {"0xE2", "offset 50", "vocab >= 256"}));
  // Pure ASCII text is fine with a 128-token vocab.
  writeText(tmp.file("ascii.txt"), std::string(50, 'a'));
  options.spec = "text:" + tmp.file("ascii.txt");
  EXPECT_NO_THROW(makeDataSource(options, lmTask(2, 4, 128)));
}

TEST(Data, RejectsBadFilesAndSpecs) {
  TempDir tmp;
  writeText(tmp.file("short.txt"), "abcdefgh"); // 8 tokens < seq + 1
  DataOptions options;
  options.spec = "text:" + tmp.file("short.txt");
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(1, 8, 256)); },
                          {"has 8 tokens", "at least 9"}));
  writeText(tmp.file("odd.bin"), "abcde");
  options.spec = "tokens:" + tmp.file("odd.bin");
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(1, 1, 256)); },
                          {"5 bytes", "uint16"}));
  options.spec = "text:" + tmp.file("missing.txt");
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(1, 1, 256)); },
                          {"missing.txt", "No such file"}));
  options.spec = "text:";
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(1, 1, 256)); },
                          {"needs a file path"}));
  options.spec = "imagenet";
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, lmTask(1, 1, 256)); },
                          {"unknown data source 'imagenet'"}));

  TaskSpec classify;
  classify.kind = TaskSpec::Kind::Classify;
  classify.batch = 2;
  classify.features = 3;
  classify.classes = 2;
  writeText(tmp.file("ok.txt"), std::string(100, 'a'));
  options.spec = "text:" + tmp.file("ok.txt");
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, classify); },
                          {"task classify can only use --data synthetic"}));
  TaskSpec none;
  EXPECT_TRUE(throwsError([&] { makeDataSource(options, none); },
                          {"task none", "leave --data out"}));
}

TEST(Data, SyntheticClassifyIsAPureFunctionOfSeedAndBatch) {
  TaskSpec task;
  task.kind = TaskSpec::Kind::Classify;
  task.batch = 256;
  task.features = 10;
  task.classes = 5;
  DataOptions options;
  options.seed = 11;
  auto source = makeDataSource(options, task);
  std::vector<double> x(task.batch * task.features), x2(x.size());
  std::vector<int32_t> y(task.batch), y2(task.batch);
  BatchBuffers out{nullptr, nullptr, x.data(), true, y.data()};
  BatchBuffers out2{nullptr, nullptr, x2.data(), true, y2.data()};
  source->fill(4, out);
  makeDataSource(options, task)->fill(4, out2);
  EXPECT_EQ(x, x2);
  EXPECT_EQ(y, y2);

  double sum = 0, squares = 0;
  for (double v : x) {
    sum += v;
    squares += v * v;
  }
  double mean = sum / x.size();
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(std::sqrt(squares / x.size() - mean * mean), 1.0, 0.1);
  std::set<int32_t> classes(y.begin(), y.end());
  EXPECT_GE(classes.size(), 3u); // labels vary, so there is something to learn
  for (int32_t label : y) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 5);
  }
  source->fill(5, out2);
  EXPECT_NE(x, x2);

  // f32 inputs are the f64 values rounded.
  std::vector<float> xf(x.size());
  BatchBuffers outF{nullptr, nullptr, xf.data(), false, y2.data()};
  source->fill(4, outF);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(xf[i], static_cast<float>(x[i]));
  EXPECT_EQ(y, y2);
}

TEST(Data, SyntheticLMTokensAreInVocabAndShifted) {
  TaskSpec task = lmTask(4, 32, 50);
  DataOptions options;
  options.seed = 3;
  auto source = makeDataSource(options, task);
  LMBatch batch(task);
  source->fill(0, batch.buffers);
  for (int64_t i = 0; i < task.batch; ++i)
    for (int64_t t = 0; t < task.seq; ++t) {
      EXPECT_GE(batch.tokens[i * task.seq + t], 0);
      EXPECT_LT(batch.tokens[i * task.seq + t], 50);
      if (t + 1 < task.seq) {
        EXPECT_EQ(batch.targets[i * task.seq + t],
                  batch.tokens[i * task.seq + t + 1]);
      }
    }
  LMBatch again(task);
  makeDataSource(options, task)->fill(0, again.buffers);
  EXPECT_EQ(batch.tokens, again.tokens);
}

TEST(Data, TaskNoneInputsGetSeededValues) {
  Tensor x("x", ArgRole::Input, {3, 5}, DType::F64);
  Tensor n("n", ArgRole::Input, {4}, DType::I32);
  Tensor again("x", ArgRole::Input, {3, 5}, DType::F64);
  n.set(2, 7);
  DataOptions options;
  options.seed = 21;
  auto source = makeDataSource(options, TaskSpec());
  BatchBuffers buffers;
  buffers.others = {&x, &n};
  source->fill(0, buffers);
  EXPECT_EQ(n.get(2), 0.0);
  EXPECT_NE(x.get(0), x.get(1));
  buffers.others = {&again};
  source->fill(0, buffers);
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(x.get(i), again.get(i));
  source->fill(1, buffers);
  EXPECT_NE(x.get(0), again.get(0));
}

TEST(Data, RankSlicesAreRowsOfTheGlobalBatch) {
  // Rank r of R with batch B reads rows [r*B, (r+1)*B) of the batch that one
  // rank with batch R*B reads, for every source: that is what makes R ranks
  // train like one rank on the global batch.
  TempDir tmp;
  std::string path =
      writeTokens(tmp, 5000, [](int64_t i) { return int(i * 7 % 1000); });
  const int64_t R = 3, B = 2, T = 8, k = 4;
  for (std::string spec : {"tokens:" + path, std::string("synthetic")}) {
    for (bool shuffle : {false, true}) {
      DataOptions whole;
      whole.spec = spec;
      whole.shuffle = shuffle;
      whole.seed = 13;
      LMBatch big(lmTask(R * B, T, 1000));
      makeDataSource(whole, lmTask(R * B, T, 1000))->fill(k, big.buffers);
      for (int r = 0; r < R; ++r) {
        DataOptions slice = whole;
        slice.rank = r;
        slice.worldSize = R;
        LMBatch mine(lmTask(B, T, 1000));
        makeDataSource(slice, lmTask(B, T, 1000))->fill(k, mine.buffers);
        std::vector<int32_t> rows(big.tokens.begin() + r * B * T,
                                  big.tokens.begin() + (r + 1) * B * T);
        EXPECT_EQ(mine.tokens, rows) << spec << " shuffle=" << shuffle;
        std::vector<int32_t> targets(big.targets.begin() + r * B * T,
                                     big.targets.begin() + (r + 1) * B * T);
        EXPECT_EQ(mine.targets, targets) << spec << " shuffle=" << shuffle;
      }
    }
  }

  TaskSpec classify;
  classify.kind = TaskSpec::Kind::Classify;
  classify.features = 5;
  classify.classes = 3;
  classify.batch = R * B;
  DataOptions whole;
  whole.seed = 2;
  std::vector<double> x(R * B * 5);
  std::vector<int32_t> y(R * B);
  makeDataSource(whole, classify)
      ->fill(k, BatchBuffers{nullptr, nullptr, x.data(), true, y.data()});
  classify.batch = B;
  for (int r = 0; r < R; ++r) {
    DataOptions slice = whole;
    slice.rank = r;
    slice.worldSize = R;
    std::vector<double> xs(B * 5);
    std::vector<int32_t> ys(B);
    makeDataSource(slice, classify)
        ->fill(k, BatchBuffers{nullptr, nullptr, xs.data(), true, ys.data()});
    EXPECT_EQ(xs, std::vector<double>(x.begin() + r * B * 5,
                                      x.begin() + (r + 1) * B * 5));
    EXPECT_EQ(ys,
              std::vector<int32_t>(y.begin() + r * B, y.begin() + (r + 1) * B));
  }
}

// Documents (docs/sequences.md): every rank's rows of a step, in order,
// are the step's documents (stepDocuments) cut at the rows; each token's
// segment changes exactly where a document (or a row) starts and its
// position counts from there.
TEST(Data, StepDocumentsAreTheRowsOfEveryRank) {
  TaskSpec task = lmTask(3, 16, 256);
  task.documents = true;
  const int ranks = 2;
  for (int64_t k : {0, 5}) {
    std::vector<int64_t> rowsStream; // the rows' pieces, all ranks in order
    std::vector<int64_t> step;
    for (int r = 0; r < ranks; ++r) {
      DataOptions options;
      options.spec = "synthetic-docs:median=9,sigma=1,count=400";
      options.seed = 3;
      options.rank = r;
      options.worldSize = ranks;
      auto source = makeDataSource(options, task);
      if (r == 0)
        step = source->stepDocuments(k);
      LMBatch batch(task);
      std::vector<int32_t> segments(task.batch * task.seq),
          positions(task.batch * task.seq);
      batch.buffers.segments = segments.data();
      batch.buffers.positions = positions.data();
      source->fill(k, batch.buffers);
      for (int64_t i = 0; i < task.batch; ++i)
        for (int64_t t = 0; t < task.seq; ++t) {
          const int64_t at = i * task.seq + t;
          const bool starts = t == 0 || segments[at] != segments[at - 1];
          EXPECT_EQ(positions[at], starts ? 0 : positions[at - 1] + 1);
          if (starts)
            rowsStream.push_back(1);
          else
            ++rowsStream.back();
        }
    }
    // The step's documents, cut at every row boundary, are the rows'.
    std::vector<int64_t> cut;
    int64_t at = 0;
    for (int64_t length : step)
      for (int64_t end = at + length; at < end;) {
        const int64_t next = std::min(end, (at / task.seq + 1) * task.seq);
        cut.push_back(next - at);
        at = next;
      }
    EXPECT_EQ(at, ranks * task.batch * task.seq);
    EXPECT_EQ(cut, rowsStream) << "step " << k;
  }
}

// A partitioned model (--partition-sequences): the ranks' pieces, put back
// in order of (document, position), are the step's tokens and targets as
// one rank reading all its rows reads them; every document of the step
// (cut every seq tokens from its start) is placed whole, once, with
// positions 0..L-1, and every rank holds exactly its batch x seq tokens.
TEST(Data, PartitionedRanksHoldEveryTokenOfTheStepOnce) {
  const int ranks = 3;
  TaskSpec task = lmTask(2, 16, 256);
  task.documents = true;
  task.partitioned = true;
  TaskSpec whole = lmTask(ranks * 2, 16, 256);
  whole.documents = true;
  auto options = [&](int rank, int worldSize) {
    DataOptions o;
    o.spec = "synthetic-docs:median=12,sigma=1.2,count=400";
    o.seed = 5;
    o.rank = rank;
    o.worldSize = worldSize;
    return o;
  };
  for (int64_t k : {0, 3}) {
    std::map<std::pair<int32_t, int32_t>, std::pair<int32_t, int32_t>> placed;
    std::vector<int64_t> step;
    for (int r = 0; r < ranks; ++r) {
      auto source = makeDataSource(options(r, ranks), task);
      if (r == 0)
        step = source->stepDocuments(k);
      LMBatch batch(task);
      std::vector<int32_t> segments(task.batch * task.seq, -1),
          positions(task.batch * task.seq, -1);
      batch.buffers.segments = segments.data();
      batch.buffers.positions = positions.data();
      source->fill(k, batch.buffers);
      for (size_t t = 0; t < segments.size(); ++t) {
        ASSERT_GE(segments[t], 0) << "rank " << r << " token " << t;
        auto [it, fresh] = placed.insert(
            {{segments[t], positions[t]}, {batch.tokens[t], batch.targets[t]}});
        EXPECT_TRUE(fresh) << "document " << segments[t] << " position "
                           << positions[t] << " twice";
      }
    }
    // One rank reading all the rows of the step, packed.
    auto packed = makeDataSource(options(0, 1), whole);
    LMBatch all(whole);
    std::vector<int32_t> segments(whole.batch * whole.seq),
        positions(whole.batch * whole.seq);
    all.buffers.segments = segments.data();
    all.buffers.positions = positions.data();
    packed->fill(k, all.buffers);
    ASSERT_EQ(placed.size(), all.tokens.size());
    size_t t = 0;
    int32_t doc = -1;
    for (const auto &[key, value] : placed) {
      if (key.first != doc) {
        ASSERT_EQ(key.second, 0) << "document " << key.first;
        doc = key.first;
        ASSERT_LT(static_cast<size_t>(doc), step.size());
        EXPECT_LE(step[doc], task.seq);
      }
      EXPECT_EQ(value.first, all.tokens[t]) << "step " << k << " token " << t;
      EXPECT_EQ(value.second, all.targets[t]) << "step " << k << " token " << t;
      ++t;
    }
    EXPECT_EQ(static_cast<size_t>(doc) + 1, step.size());
  }
}
