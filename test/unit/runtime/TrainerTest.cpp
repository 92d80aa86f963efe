//===- TrainerTest.cpp - End-to-end training and gradcheck ------*- C++ -*-===//
//
// Drives the hand-written softmax artifact (SoftmaxArtifact.c) through the
// Trainer and the gradient checker: the loss falls, metrics are written,
// resuming from a checkpoint is bitwise identical to not stopping, NaN stops
// the run, and gradcheck passes on correct gradients and fails on wrong ones.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Trainer.h"
#include "TestUtil.h"
#include "loom/runtime/AllocCache.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/GradCheck.h"

#include <cmath>
#include <fstream>
#include <sstream>

using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

class TrainerTest : public ::testing::Test {
protected:
  std::unique_ptr<Artifact> load(const std::string &variant = "softmax_f64",
                                 json manifest = softmaxManifest()) {
    return Artifact::load(makeArtifactDir(
        tmp.path(), "art" + std::to_string(count++), variant, manifest));
  }

  TrainResult train(Artifact &artifact, const TrainOptions &options) {
    LocalCommunicator comm;
    log.str("");
    out.str("");
    return Trainer(artifact, options, comm, log, out).run();
  }

  static std::vector<double> params(Artifact &artifact) {
    std::vector<double> values;
    for (auto *list : {&artifact.params(), &artifact.state()})
      for (Tensor *tensor : *list)
        for (int64_t i = 0; i < tensor->numElements(); ++i)
          values.push_back(tensor->get(i));
    return values;
  }

  TempDir tmp;
  int count = 0;
  std::ostringstream log, out;
};

} // namespace

TEST_F(TrainerTest, TrainingReducesTheLoss) {
  auto artifact = load();
  TrainOptions options;
  options.steps = 200;
  options.seed = 3;
  options.logEvery = 50;
  options.metricsPath = tmp.file("metrics.jsonl");
  TrainResult result = train(*artifact, options);

  EXPECT_EQ(result.summary.steps, 200);
  EXPECT_NEAR(result.summary.firstLoss, std::log(4.0), 0.5);
  EXPECT_LE(result.summary.minLoss, result.summary.finalLoss);
  EXPECT_EQ(result.state.step, 200);
  EXPECT_EQ(result.state.dataPosition, 200);

  std::string progress = log.str();
  EXPECT_NE(progress.find("step 1/200 | loss "), std::string::npos) << progress;
  EXPECT_NE(progress.find("step 50/200 | loss "), std::string::npos);
  EXPECT_NE(progress.find("step 200/200 | loss "), std::string::npos);
  EXPECT_EQ(progress.find("step 51/200"), std::string::npos);
  // A classifier's throughput is in rows (samples), not tokens.
  EXPECT_NE(progress.find(" rows/s | "), std::string::npos) << progress;
  EXPECT_EQ(progress.find("tok/s"), std::string::npos);
  EXPECT_EQ(out.str().rfind("final loss ", 0), 0u) << out.str();
  EXPECT_NE(out.str().find("after 200 steps (first loss "), std::string::npos);

  std::ifstream metrics(options.metricsPath);
  std::vector<json> lines;
  for (std::string line; std::getline(metrics, line);)
    lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 201u);
  EXPECT_EQ(lines[0]["step"], 1);
  for (const char *key : {"loss", "rank_loss", "lr", "grad_norm", "step_time_s",
                          "comm_time_s", "exposed_comm_s", "tokens_per_s"})
    EXPECT_TRUE(lines[0][key].is_number()) << key;
  EXPECT_EQ(lines[0]["rank"], 0);
  EXPECT_EQ(lines[0]["loss"], lines[0]["rank_loss"]); // one rank
  EXPECT_EQ(lines[0]["comm_time_s"], 0.0);            // no collectives
  EXPECT_EQ(lines[0]["exposed_comm_s"], 0.0);
  EXPECT_DOUBLE_EQ(lines[0]["lr"].get<double>(), 0.04); // warmup: 0.2 * 1/5
  // Per-batch losses are noisy; the mean of the last 20 must be well below
  // chance level (log 4), where training starts.
  double late = 0;
  for (int i = 180; i < 200; ++i)
    late += lines[i]["loss"].get<double>() / 20;
  EXPECT_LT(late, 0.6 * std::log(4.0)) << log.str();
  const json &summary = lines.back()["summary"];
  EXPECT_EQ(summary["steps"], 200);
  EXPECT_DOUBLE_EQ(summary["final_loss"].get<double>(),
                   result.summary.finalLoss);
  for (const char *key :
       {"first_loss", "min_loss", "mean_step_time_s", "comm_time_s",
        "exposed_comm_s", "comm_hidden_fraction", "tokens_per_s", "wall_s"})
    EXPECT_TRUE(summary[key].is_number()) << key;
  EXPECT_EQ(summary["rank"], 0);
}

TEST_F(TrainerTest, TextDataTrainsAndResumesExactly) {
  std::string text;
  while (text.size() < 20000)
    text += "the quick brown fox jumps over the lazy dog. ";
  writeText(tmp.file("corpus.txt"), text);
  for (bool shuffle : {false, true}) {
    TrainOptions options;
    options.data = "text:" + tmp.file("corpus.txt");
    options.shuffle = shuffle;
    options.seed = 4;
    options.steps = 30;
    auto straight = load("bigram", bigramManifest());
    TrainResult result = train(*straight, options);
    EXPECT_LT(result.summary.finalLoss, 0.5 * result.summary.firstLoss)
        << log.str();
    std::string windows =
        std::to_string((text.size() - 1) / 16) + " sequential windows";
    EXPECT_NE(log.str().find(shuffle ? "shuffled windows" : windows),
              std::string::npos)
        << log.str();

    auto first = load("bigram", bigramManifest());
    options.steps = 13;
    options.savePath = tmp.file(shuffle ? "ckpt-s" : "ckpt");
    train(*first, options);
    auto second = load("bigram", bigramManifest());
    options.steps = 17;
    options.loadPath = options.savePath;
    TrainResult resumed = train(*second, options);
    EXPECT_EQ(resumed.state.dataPosition, 30);
    EXPECT_EQ(params(*second), params(*straight)) << "shuffle=" << shuffle;
  }
}

TEST_F(TrainerTest, StepsDoNotReachTheSystemAllocator) {
  auto artifact = load();
  artifact->initialize(0);
  Entry &step = artifact->entry("train_step");
  artifact->step() = 1;
  step.call();
  AllocCacheStats before = allocCacheStats();
  for (int i = 2; i <= 50; ++i) {
    artifact->step() = i;
    step.call();
  }
  EXPECT_EQ(allocCacheStats().systemAllocs, before.systemAllocs);
  EXPECT_GE(allocCacheStats().reuses - before.reuses, 49u * 3);
}

TEST_F(TrainerTest, ResumeIsBitwiseIdenticalToAnUninterruptedRun) {
  TrainOptions options;
  options.seed = 5;
  options.steps = 20;
  auto straight = load();
  train(*straight, options);

  auto first = load();
  options.steps = 8;
  options.savePath = tmp.file("ckpt");
  train(*first, options);

  auto second = load();
  options.steps = 12;
  options.loadPath = tmp.file("ckpt");
  options.savePath = tmp.file("ckpt2");
  options.seedGiven = false; // taken from the checkpoint
  options.seed = 999;
  TrainResult resumed = train(*second, options);
  EXPECT_NE(log.str().find("resuming from"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("steps 9..20"), std::string::npos) << log.str();
  EXPECT_EQ(resumed.state.step, 20);
  EXPECT_EQ(resumed.state.dataPosition, 20);
  EXPECT_EQ(resumed.state.seed, 5u);
  EXPECT_EQ(params(*second), params(*straight)); // exact equality
}

TEST_F(TrainerTest, SaveEverySavesPeriodicallyAndAtTheEnd) {
  auto artifact = load();
  TrainOptions options;
  options.steps = 10;
  options.savePath = tmp.file("ckpt");
  options.saveEvery = 4;
  train(*artifact, options);
  std::string text = log.str();
  EXPECT_NE(text.find("(step 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("(step 8)"), std::string::npos);
  EXPECT_NE(text.find("(step 10)"), std::string::npos);
  std::ifstream trainer(tmp.file("ckpt/trainer.json"));
  EXPECT_EQ(json::parse(trainer)["step"], 10);

  options.savePath.clear();
  EXPECT_TRUE(throwsError([&] { train(*artifact, options); },
                          {"--save-every needs --save"}));
}

TEST_F(TrainerTest, WeightsOnlyLoadStartsAtStepZero) {
  auto artifact = load();
  TrainOptions options;
  options.steps = 5;
  options.savePath = tmp.file("ckpt");
  train(*artifact, options);

  auto fresh = load("softmax_f32", softmaxManifest(/*f64=*/false));
  options.loadPath = tmp.file("ckpt/model.safetensors"); // F64 into f32
  options.savePath.clear();
  options.steps = 1;
  TrainResult result = train(*fresh, options);
  EXPECT_NE(log.str().find("loaded weights from"), std::string::npos);
  EXPECT_EQ(result.state.step, 1);
  EXPECT_EQ(result.state.dataPosition, 1);
}

TEST_F(TrainerTest, NonFiniteLossStopsTheRun) {
  auto artifact = load("softmax_nan");
  TrainOptions options;
  options.steps = 10;
  options.metricsPath = tmp.file("m.jsonl");
  EXPECT_TRUE(throwsError([&] { train(*artifact, options); },
                          {"loss is NaN at step 3"}));
  std::ifstream metrics(options.metricsPath);
  std::vector<std::string> lines;
  for (std::string line; std::getline(metrics, line);)
    lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(json::parse(lines[2])["loss"].is_null());
}

TEST_F(TrainerTest, MissingTrainStepIsAClearError) {
  json manifest = softmaxManifest();
  manifest["entries"].erase("train_step");
  auto artifact = load("softmax_f64", manifest);
  TrainOptions options;
  options.steps = 1;
  EXPECT_TRUE(
      throwsError([&] { train(*artifact, options); }, {"no train_step entry"}));
}

TEST_F(TrainerTest, GradCheckPassesOnCorrectGradients) {
  auto artifact = load();
  GradCheckOptions options;
  options.seed = 2;
  std::ostringstream report;
  GradCheckResult result = runGradCheck(*artifact, options, report);
  EXPECT_TRUE(result.passed) << report.str();
  ASSERT_EQ(result.params.size(), 2u);
  EXPECT_EQ(result.params[0].checked, 16); // 32 elements, 16 sampled
  EXPECT_EQ(result.params[1].checked, 4);  // all of b
  EXPECT_EQ(result.elements, 20);
  EXPECT_LT(result.maxRelErr, 1e-6);
  EXPECT_NE(report.str().find("W"), std::string::npos);
}

TEST_F(TrainerTest, GradCheckFailsOnWrongGradients) {
  auto artifact = load("softmax_badgrad");
  std::ostringstream report;
  GradCheckResult result = runGradCheck(*artifact, GradCheckOptions(), report);
  EXPECT_FALSE(result.passed);
  EXPECT_FALSE(result.params[0].passed); // dW is scaled by 1.1
  EXPECT_TRUE(result.params[1].passed);  // db is right
  EXPECT_EQ(result.worst.param, "W");
  EXPECT_NEAR(result.worst.relErr, 0.1 / 1.1, 1e-3);
  EXPECT_NE(report.str().find("FAIL"), std::string::npos);
}

TEST_F(TrainerTest, GradCheckInF32NeedsLooserTolerances) {
  auto artifact = load("softmax_f32", softmaxManifest(/*f64=*/false));
  GradCheckOptions options;
  options.eps = 1e-2;
  options.rtol = 2e-2;
  options.atol = 1e-4;
  std::ostringstream report;
  EXPECT_TRUE(runGradCheck(*artifact, options, report).passed) << report.str();
}

TEST_F(TrainerTest, TaskNoneGetsSyntheticInputs) {
  // A model whose task is none still receives values for declared inputs.
  json manifest = softmaxManifest();
  manifest["task"] = {{"kind", "none"}};
  auto artifact = load("softmax_f64", manifest);
  std::ostringstream report;
  EXPECT_TRUE(runGradCheck(*artifact, GradCheckOptions(), report).passed)
      << report.str();
  TrainOptions options;
  options.steps = 3;
  EXPECT_EQ(train(*artifact, options).summary.steps, 3);
}

TEST_F(TrainerTest, GradCheckNeedsTheEntries) {
  json manifest = softmaxManifest();
  manifest["entries"].erase("loss");
  auto artifact = load("softmax_f64", manifest);
  std::ostringstream report;
  EXPECT_TRUE(
      throwsError([&] { runGradCheck(*artifact, GradCheckOptions(), report); },
                  {"no 'loss' entry"}));
}

TEST_F(TrainerTest, RefusesAnArtifactCompiledForMoreRanks) {
  json manifest = softmaxManifest();
  manifest["mesh"] = {{"axes", {"dp"}}, {"shape", {2}}};
  auto artifact = load("softmax_f64", manifest);
  TrainOptions options;
  options.steps = 1;
  EXPECT_TRUE(throwsError([&] { train(*artifact, options); },
                          {"compiled for 2 ranks (mesh dp=2) but the job has "
                           "1"}));
}

TEST_F(TrainerTest, ResumesACheckpointOfAnotherRankCountAtItsRows) {
  auto first = load();
  TrainOptions options;
  options.steps = 2;
  options.savePath = tmp.file("ckpt");
  train(*first, options);
  json trainer = json::parse(readBytes(tmp.file("ckpt/trainer.json")));
  EXPECT_EQ(trainer["ranks"], 1);
  const int64_t batch = first->manifest().task.batch;
  EXPECT_EQ(trainer["rows_per_step"], batch);
  // As if 2 ranks of this batch had saved it: 2 steps of 2 x batch rows.
  trainer["ranks"] = 2;
  trainer["rows_per_step"] = 2 * batch;
  writeText(tmp.file("ckpt/trainer.json"), trainer.dump(2));

  auto second = load();
  options.loadPath = options.savePath;
  options.savePath.clear();
  options.steps = 1;
  TrainResult resumed = train(*second, options);
  EXPECT_EQ(resumed.state.step, 3);
  EXPECT_EQ(resumed.state.dataPosition, 4 + 1); // 4 batches of this job's
  EXPECT_NE(log.str().find("resuming a 2-rank checkpoint (global batches of " +
                           std::to_string(2 * batch) + " rows) with 1 rank"),
            std::string::npos)
      << log.str();

  // Without the global batch (older checkpoints) it is refused by name.
  trainer.erase("rows_per_step");
  writeText(tmp.file("ckpt/trainer.json"), trainer.dump(2));
  EXPECT_TRUE(throwsError(
      [&] { train(*second, options); },
      {"saved by a 2-rank job but this job has 1 (the checkpoint does not "
       "record its global batch)",
       "resume it with --ranks 2",
       "--load " + tmp.file("ckpt") + "/model.safetensors"}));
  // Its weights alone still load.
  options.loadPath = tmp.file("ckpt/model.safetensors");
  EXPECT_NO_THROW(train(*second, options));
}
