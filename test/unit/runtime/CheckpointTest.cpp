//===- CheckpointTest.cpp - Tests of checkpoint save and load ---*- C++ -*-===//
//
// Round trips, crash safety of the save protocol, and refusal of corrupted
// checkpoints and checkpoints of other models.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Checkpoint.h"
#include "TestUtil.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/SafeTensors.h"
#include "loom/runtime/Sha256.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace fs = std::filesystem;
using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

class CheckpointTest : public ::testing::Test {
protected:
  std::unique_ptr<Artifact> load(const json &manifest = softmaxManifest(),
                                 const std::string &variant = "softmax_f64") {
    std::string dir = makeArtifactDir(
        tmp.path(), "art" + std::to_string(count++), variant, manifest);
    std::unique_ptr<Artifact> artifact = Artifact::load(dir);
    artifact->initialize(1);
    return artifact;
  }

  /// Fills every param and state tensor with values derived from `salt`.
  static void scramble(Artifact &artifact, double salt) {
    for (auto *list : {&artifact.params(), &artifact.state()})
      for (Tensor *tensor : *list)
        for (int64_t i = 0; i < tensor->numElements(); ++i)
          tensor->set(i, salt + 0.001 * i);
  }

  static std::vector<std::vector<char>> snapshot(Artifact &artifact) {
    std::vector<std::vector<char>> bytes;
    for (auto *list : {&artifact.params(), &artifact.state()})
      for (Tensor *tensor : *list) {
        const char *data = static_cast<const char *>(tensor->data());
        bytes.emplace_back(data, data + tensor->byteSize());
      }
    return bytes;
  }

  TrainerState someState() {
    TrainerState state;
    state.step = 120;
    state.dataPosition = 121;
    state.seed = 0xfedcba9876543210ULL;
    state.shuffle = true;
    state.data = "text:corpus.txt";
    return state;
  }

  TempDir tmp;
  int count = 0;
};

} // namespace

TEST_F(CheckpointTest, SaveLoadRoundTrip) {
  auto saved = load();
  scramble(*saved, 0.25);
  std::string path = tmp.file("ckpt");
  saveCheckpoint(path, *saved, someState());
  EXPECT_TRUE(fs::exists(path + "/model.safetensors"));
  EXPECT_TRUE(fs::exists(path + "/optimizer.safetensors"));
  EXPECT_TRUE(fs::exists(path + "/trainer.json"));
  EXPECT_FALSE(fs::exists(checkpointTempPath(path)));
  EXPECT_FALSE(fs::exists(path + ".old"));

  auto restored = load();
  LoadResult result = loadCheckpoint(path, *restored);
  EXPECT_TRUE(result.full);
  EXPECT_EQ(result.state.step, 120);
  EXPECT_EQ(result.state.dataPosition, 121);
  EXPECT_EQ(result.state.seed, 0xfedcba9876543210ULL);
  EXPECT_TRUE(result.state.shuffle);
  EXPECT_EQ(result.state.data, "text:corpus.txt");
  EXPECT_EQ(snapshot(*restored), snapshot(*saved));

  // The model file is plain safetensors with the manifest's names.
  SafeTensorsFile model = SafeTensorsFile::read(path + "/model.safetensors");
  ASSERT_TRUE(model.find("W"));
  EXPECT_EQ(model.find("W")->dtypeName, "F64");
  EXPECT_EQ(model.find("W")->shape, (Shape{4, 8}));
}

TEST_F(CheckpointTest, SavingAgainReplacesTheCheckpoint) {
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  scramble(*artifact, 1.0);
  saveCheckpoint(path, *artifact, someState());
  scramble(*artifact, 2.0);
  TrainerState later = someState();
  later.step = 200;
  saveCheckpoint(path, *artifact, later);
  auto restored = load();
  EXPECT_EQ(loadCheckpoint(path, *restored).state.step, 200);
  EXPECT_EQ(snapshot(*restored), snapshot(*artifact));
  EXPECT_FALSE(fs::exists(path + ".old"));
}

TEST_F(CheckpointTest, ABackgroundSaveHoldsTheValuesItStartedWith) {
  // Scenario 13: the params change as soon as start() returns (the next
  // training steps); the checkpoint holds them as they were.
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  scramble(*artifact, 1.0);
  std::vector<std::vector<char>> atStart = snapshot(*artifact);
  BackgroundSave background;
  EXPECT_FALSE(background.finish().saved); // none in flight
  background.start(path, *artifact, someState());
  EXPECT_TRUE(background.inFlight());
  scramble(*artifact, 2.0);
  EXPECT_THROW(background.start(path, *artifact, someState()), Error);
  BackgroundSave::Outcome done = background.finish();
  EXPECT_TRUE(done.saved);
  EXPECT_EQ(done.error, "");
  EXPECT_EQ(done.path, path);
  EXPECT_EQ(done.step, 120);
  EXPECT_FALSE(background.inFlight());
  auto restored = load();
  EXPECT_EQ(loadCheckpoint(path, *restored).state.step, 120);
  EXPECT_EQ(snapshot(*restored), atStart);
  EXPECT_NE(snapshot(*restored), snapshot(*artifact));

  // A failed write is reported by finish(), and the next save starts
  // afresh; the previous checkpoint stays.
  // (A path under a regular file passes the start's check and fails in
  // the writer.)
  std::FILE *file = std::fopen(tmp.file("plain").c_str(), "w");
  ASSERT_TRUE(file);
  std::fclose(file);
  background.start(tmp.file("plain") + "/ckpt", *artifact, someState());
  done = background.finish();
  EXPECT_TRUE(done.saved);
  EXPECT_NE(done.error.find("cannot create checkpoint directory"),
            std::string::npos)
      << done.error;
  background.start(path, *artifact, someState());
  EXPECT_EQ(background.finish().error, "");
  EXPECT_EQ(loadCheckpoint(path, *restored).state.step, 120);
  EXPECT_EQ(snapshot(*restored), snapshot(*artifact));
}

TEST_F(CheckpointTest, ABackgroundPerRankSaveHoldsTheValuesItStartedWith) {
  // CO2's per-rank checkpoints with --save-async, on a one-rank job: the
  // rank's params, optimizer state and round state as they were when the
  // save started, and the consensus model (one rank's mean: its params).
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  scramble(*artifact, 1.0);
  std::vector<std::vector<char>> atStart = snapshot(*artifact);
  Tensor round("co2.round", ArgRole::State, {3}, DType::F32);
  for (int64_t i = 0; i < 3; ++i)
    round.set(i, 7.0 + i);
  TrainerState state = someState();
  LocalCommunicator writers;
  BackgroundSave background;
  PerRankTensors tensors{artifact->state(), {&round}, {}};
  background.startPerRank(path, beginPerRankCheckpoint(path), *artifact,
                          tensors, state, writers);
  EXPECT_TRUE(background.inFlight());
  scramble(*artifact, 2.0);
  round.set(0, 99.0);
  BackgroundSave::Outcome done = background.finish();
  EXPECT_TRUE(done.saved);
  EXPECT_EQ(done.error, "");
  EXPECT_TRUE(done.committed);
  EXPECT_EQ(done.localModels, 1);
  EXPECT_EQ(done.step, 120);

  auto restored = load();
  Tensor roundBack("co2.round", ArgRole::State, {3}, DType::F32);
  PerRankTensors back{restored->state(), {&roundBack}, {}};
  LoadResult result = loadCheckpoint(path, *restored, 0, &back);
  EXPECT_TRUE(result.full);
  EXPECT_EQ(result.state.step, 120);
  EXPECT_EQ(snapshot(*restored), atStart);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(roundBack.get(i), 7.0 + i);
  auto consensus = load();
  scramble(*consensus, 3.0);
  loadModelWeights(path, *consensus);
  for (size_t i = 0; i < consensus->params().size(); ++i)
    EXPECT_EQ(std::memcmp(consensus->params()[i]->data(),
                          restored->params()[i]->data(),
                          restored->params()[i]->byteSize()),
              0);

  // A rank whose part cannot be written: reported by finish(), nothing
  // committed, and the previous checkpoint stays.
  std::FILE *file = std::fopen(tmp.file("plain").c_str(), "w");
  ASSERT_TRUE(file);
  std::fclose(file);
  background.startPerRank(path, tmp.file("plain") + "/ckpt.tmp", *artifact,
                          tensors, state, writers);
  done = background.finish();
  EXPECT_NE(done.error.find("cannot create checkpoint directory"),
            std::string::npos)
      << done.error;
  EXPECT_FALSE(done.committed);
  EXPECT_EQ(loadCheckpoint(path, *restored, 0, &back).state.step, 120);
  EXPECT_EQ(snapshot(*restored), atStart);
}

TEST_F(CheckpointTest, APerRankCheckpointNeedsEveryRanksFilesAsWritten) {
  // Rank 1 of a 2-rank job wrote where rank 0 cannot see it (a save path
  // not on a shared filesystem): its records arrive, its files do not.
  auto artifact = load();
  TrainerState state = someState();
  state.ranks = 2;
  Tensor round("co2.round", ArgRole::State, {3}, DType::F32);
  // What every rank holds alike: each writes its share.
  Tensor alike("co2.alike", ArgRole::State, {2}, DType::F64);
  alike.set(0, 0.25);
  alike.set(1, -3.5);
  Tensor alike2("co2.alike2", ArgRole::State, {2}, DType::F64);
  alike2.set(0, 7.0);
  alike2.set(1, 8.0);
  std::vector<Tensor *> allAlike{&alike, &alike2};
  ASSERT_EQ(alikeShare(allAlike, 0, 2), std::vector<Tensor *>{&alike2});
  ASSERT_EQ(alikeShare(allAlike, 1, 2), std::vector<Tensor *>{&alike});
  std::string tmpDir = beginPerRankCheckpoint(tmp.file("ckpt"));
  PerRankTensors tensors{artifact->state(), {&round}, {&alike2}};
  std::vector<FileRecord> records =
      writeRankCheckpointFiles(tmpDir, 0, artifact->params(), tensors);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[3].name, "rank-0/outer.safetensors");
  EXPECT_EQ(records[0].name, "rank-0/model.safetensors");
  EXPECT_EQ(records[0].sha256,
            sha256FileHex(tmpDir + "/rank-0/model.safetensors"));
  EXPECT_EQ(records[0].bytes,
            fs::file_size(tmpDir + "/rank-0/model.safetensors"));
  std::string elsewhere = tmp.file("elsewhere");
  tensors.alike = {&alike};
  std::vector<FileRecord> rank1 =
      writeRankCheckpointFiles(elsewhere, 1, artifact->params(), tensors);
  ASSERT_EQ(rank1.size(), 4u);
  std::vector<FileRecord> all = records;
  all.insert(all.end(), rank1.begin(), rank1.end());
  EXPECT_TRUE(throwsError(
      [&] { finishPerRankCheckpoint(tmpDir, artifact->params(), state, all); },
      {"rank-1/model.safetensors is missing or not as rank 1 wrote it",
       "filesystem all ranks share"}));
  // There, but not as big as its writer said.
  fs::copy(elsewhere + "/rank-1", tmpDir + "/rank-1");
  all.back().bytes += 1;
  EXPECT_TRUE(throwsError(
      [&] { finishPerRankCheckpoint(tmpDir, artifact->params(), state, all); },
      {"rank-1/outer.safetensors is missing or not as rank 1 wrote it"}));
  all.back().bytes -= 1;
  finishPerRankCheckpoint(tmpDir, artifact->params(), state, all);
  commitCheckpoint(tmpDir, tmp.file("ckpt"));
  // Rank 1 resumes from its own files and every rank's share.
  auto restored = load();
  Tensor alikeBack("co2.alike", ArgRole::State, {2}, DType::F64);
  Tensor alike2Back("co2.alike2", ArgRole::State, {2}, DType::F64);
  PerRankTensors back{restored->state(), {&round}, {&alikeBack, &alike2Back}};
  EXPECT_TRUE(loadCheckpoint(tmp.file("ckpt"), *restored, 1, &back).full);
  EXPECT_EQ(alikeBack.get(0), 0.25);
  EXPECT_EQ(alikeBack.get(1), -3.5);
  EXPECT_EQ(alike2Back.get(0), 7.0);
  EXPECT_EQ(alike2Back.get(1), 8.0);
  // A tensor in no rank's share is named.
  Tensor stray("co2.stray", ArgRole::State, {1}, DType::F64);
  back.alike.push_back(&stray);
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(tmp.file("ckpt"), *restored, 1, &back); },
      {"no rank's share of the CO2 outer state has tensor 'co2.stray'"}));
}

TEST_F(CheckpointTest, AlikeSharesSplitTheBytesEvenly) {
  // Every tensor in exactly one share, each share a contiguous run (the
  // runs go to the ranks last to first), and no share further from 1/N of
  // the bytes than its largest tensor.
  std::vector<std::unique_ptr<Tensor>> owned;
  std::vector<Tensor *> alike;
  int64_t total = 0;
  for (int64_t size : {5, 300, 7, 7, 120, 64, 1, 90, 33, 250, 18}) {
    owned.push_back(std::make_unique<Tensor>("t" + std::to_string(owned.size()),
                                             ArgRole::State, Shape{size},
                                             DType::F32));
    alike.push_back(owned.back().get());
    total += 4 * size;
  }
  for (int ranks : {1, 2, 3, 4, 16}) {
    std::vector<Tensor *> joined;
    for (int rank = ranks - 1; rank >= 0; --rank) {
      std::vector<Tensor *> share = alikeShare(alike, rank, ranks);
      int64_t bytes = 0;
      for (const Tensor *t : share)
        bytes += t->byteSize();
      if (ranks <= 3) {
        EXPECT_LE(std::abs(bytes - total / ranks), 4 * 300)
            << ranks << " ranks, rank " << rank;
      }
      joined.insert(joined.end(), share.begin(), share.end());
    }
    EXPECT_EQ(joined, alike) << ranks << " ranks";
  }
}

TEST_F(CheckpointTest, CopiesOfTheSameTensorsReuseTheirBuffers) {
  // A background save copies the state at every save; a second copy in
  // fresh memory each time would fault every page in again and let the
  // memory drift (scenario 13: host memory must not grow over saves).
  auto artifact = load();
  scramble(*artifact, 1.0);
  std::vector<std::unique_ptr<Tensor>> copies;
  std::vector<Tensor *> first = copyTensors(artifact->params(), copies);
  ASSERT_EQ(first.size(), artifact->params().size());
  scramble(*artifact, 2.0);
  std::vector<Tensor *> second = copyTensors(artifact->params(), copies);
  EXPECT_EQ(second, first);
  for (size_t i = 0; i < second.size(); ++i) {
    const Tensor &from = *artifact->params()[i];
    EXPECT_EQ(second[i]->name(), from.name());
    EXPECT_EQ(std::memcmp(second[i]->data(), from.data(), from.byteSize()), 0);
  }
  // Other tensors: copies of their own.
  std::vector<Tensor *> state = copyTensors(artifact->state(), copies);
  ASSERT_EQ(state.size(), artifact->state().size());
  for (size_t i = 0; i < state.size(); ++i)
    EXPECT_EQ(state[i]->name(), artifact->state()[i]->name());
}

TEST_F(CheckpointTest, SaveKilledBeforeTheSwapLeavesTheOldCheckpoint) {
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  scramble(*artifact, 1.0);
  saveCheckpoint(path, *artifact, someState());
  auto original = snapshot(*artifact);

  // The new save dies after writing only part of its temp dir...
  scramble(*artifact, 2.0);
  std::string staging = checkpointTempPath(path);
  TrainerState later = someState();
  later.step = 500;
  writeCheckpointFiles(staging, *artifact, later);
  fs::remove(staging + "/trainer.json");
  std::vector<char> half = readBytes(staging + "/model.safetensors");
  half.resize(half.size() / 2);
  writeBytes(staging + "/model.safetensors", half);

  // ...and PATH still loads as the complete old checkpoint.
  auto restored = load();
  LoadResult result = loadCheckpoint(path, *restored);
  EXPECT_EQ(result.state.step, 120);
  EXPECT_EQ(snapshot(*restored), original);

  // The next save cleans up the stray temp dir.
  saveCheckpoint(path, *artifact, later);
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_EQ(loadCheckpoint(path, *restored).state.step, 500);
}

TEST_F(CheckpointTest, SaveKilledMidSwapFallsBackToTheOldCheckpoint) {
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  scramble(*artifact, 1.0);
  saveCheckpoint(path, *artifact, someState());
  auto original = snapshot(*artifact);

  // Killed between "PATH -> PATH.old" and "tmp -> PATH".
  scramble(*artifact, 2.0);
  writeCheckpointFiles(checkpointTempPath(path), *artifact, someState());
  fs::rename(path, path + ".old");

  auto restored = load();
  LoadResult result = loadCheckpoint(path, *restored);
  EXPECT_EQ(result.path, path + ".old");
  EXPECT_NE(result.note.find("interrupted save"), std::string::npos);
  EXPECT_EQ(snapshot(*restored), original);

  // A new save completes the protocol and drops PATH.old.
  saveCheckpoint(path, *artifact, someState());
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".old"));
}

TEST_F(CheckpointTest, RefusesCorruptedOrTruncatedFiles) {
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  scramble(*artifact, 1.0);
  saveCheckpoint(path, *artifact, someState());
  auto before = snapshot(*artifact);

  std::vector<char> model = readBytes(path + "/model.safetensors");
  std::vector<char> flipped = model;
  flipped[flipped.size() - 3] ^= 0x10; // one bit of tensor data
  writeBytes(path + "/model.safetensors", flipped);
  EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *artifact); },
                          {"model.safetensors is corrupted", "sha256"}));
  EXPECT_EQ(snapshot(*artifact), before); // nothing was half-loaded
  writeBytes(path + "/model.safetensors", model);

  std::vector<char> optimizer = readBytes(path + "/optimizer.safetensors");
  optimizer.resize(optimizer.size() - 8);
  writeBytes(path + "/optimizer.safetensors", optimizer);
  EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *artifact); },
                          {"optimizer.safetensors", "truncated"}));

  // trainer.json saying two things at once: JSON readers keep one of them.
  std::vector<char> trainerText = readBytes(path + "/trainer.json");
  std::string twice(trainerText.begin(), trainerText.end());
  twice.insert(twice.find('{') + 1, "\"step\": 999999, ");
  writeText(path + "/trainer.json", twice);
  EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *artifact); },
                          {"trainer.json is corrupted", "duplicate key"}));

  fs::remove(path + "/trainer.json");
  EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *artifact); },
                          {"not a Loom checkpoint", "trainer.json"}));
  EXPECT_TRUE(
      throwsError([&] { loadCheckpoint(tmp.file("nothing"), *artifact); },
                  {"no checkpoint at"}));
}

TEST_F(CheckpointTest, RefusesACheckpointOfAnotherModel) {
  auto artifact = load();
  std::string path = tmp.file("ckpt");
  saveCheckpoint(path, *artifact, someState());

  json wider = softmaxManifest();
  wider["task"]["features"] = 9;
  wider["inputs"][0]["shape"] = {16, 9};
  wider["params"][0]["shape"] = {4, 9};
  wider["state"][0]["shape"] = {4, 9};
  for (auto &[name, entry] : wider["entries"].items())
    for (json &arg : entry["args"]) {
      if (arg["name"] == "W" || arg["name"] == "W.momentum_buffer" ||
          arg["name"] == "grad:W")
        arg["shape"] = {4, 9};
      if (arg["name"] == "x")
        arg["shape"] = {16, 9};
    }
  auto other = load(wider);
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(path, *other); },
      {"tensor W: checkpoint shape [4, 8] but artifact expects [4, 9]"}));

  json renamed = softmaxManifest();
  std::string dump = renamed.dump();
  for (size_t at; (at = dump.find("\"b\"")) != std::string::npos;)
    dump.replace(at, 3, "\"bias\"");
  for (size_t at; (at = dump.find("\"b.momentum")) != std::string::npos;)
    dump.replace(at, 11, "\"bias.momentum");
  for (size_t at; (at = dump.find("\"grad:b\"")) != std::string::npos;)
    dump.replace(at, 8, "\"grad:bias\"");
  auto third = load(json::parse(dump));
  EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *third); },
                          {"has no tensor 'bias'", "another model"}));
}

TEST_F(CheckpointTest, LoadsWeightsFromASafetensorsFile) {
  auto artifact = load();
  // An F32 file (e.g. exported from PyTorch) into an f64 artifact, with an
  // extra tensor the model does not have.
  std::vector<float> W(32), b = {1, 2, 3, 4}, extra(6, 9.f);
  for (int i = 0; i < 32; ++i)
    W[i] = 0.5f * i;
  writeSafeTensors(
      tmp.file("weights.safetensors"),
      {makeSafeTensorView("W", DType::F32, {4, 8}, W.data()),
       makeSafeTensorView("lm_head.weight", DType::F32, {2, 3}, extra.data()),
       makeSafeTensorView("b", DType::F32, {4}, b.data())});
  LoadResult result =
      loadCheckpoint(tmp.file("weights.safetensors"), *artifact);
  EXPECT_FALSE(result.full);
  EXPECT_EQ(result.state.step, 0);
  EXPECT_NE(result.note.find("ignored 1 tensor"), std::string::npos);
  EXPECT_NE(result.note.find("lm_head.weight"), std::string::npos);
  EXPECT_EQ(artifact->tensor("W").get(31), 15.5);
  EXPECT_EQ(artifact->tensor("b").get(2), 3.0);

  writeSafeTensors(tmp.file("partial.safetensors"),
                   {makeSafeTensorView("W", DType::F32, {4, 8}, W.data())});
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(tmp.file("partial.safetensors"), *artifact); },
      {"partial.safetensors has no tensor 'b'"}));

  int32_t ints[4] = {};
  writeSafeTensors(tmp.file("ints.safetensors"),
                   {makeSafeTensorView("W", DType::F32, {4, 8}, W.data()),
                    makeSafeTensorView("b", DType::I32, {4}, ints)});
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(tmp.file("ints.safetensors"), *artifact); },
      {"tensor 'b' has dtype I32"}));
}

TEST_F(CheckpointTest, RefusesToReplaceSomethingElse) {
  auto artifact = load();
  fs::create_directories(tmp.file("photos"));
  writeText(tmp.file("photos/cat.jpg"), "meow");
  EXPECT_TRUE(throwsError(
      [&] { saveCheckpoint(tmp.file("photos"), *artifact, someState()); },
      {"exists and is not a Loom checkpoint"}));
  EXPECT_TRUE(fs::exists(tmp.file("photos/cat.jpg")));
}

TEST_F(CheckpointTest, RefusesBeforeTrainingAPlaceNoSaveCanBeWritten) {
  // Under a regular file, and in a file system that takes no directories:
  // both fail at the first save, so the trainer asks before training.
  writeText(tmp.file("notes.txt"), "x");
  EXPECT_TRUE(throwsError(
      [&] { checkCanSaveTo(tmp.file("notes.txt/run/ckpt")); },
      {"cannot save checkpoints to", "notes.txt", "Not a directory"}));
  EXPECT_TRUE(throwsError([&] { checkCanSaveTo("/proc/loom-ckpt"); },
                          {"cannot create a directory in /proc"}));
  // A place that will do is left as it was: nothing created, no probe left.
  checkCanSaveTo(tmp.file("runs/a/ckpt"));
  EXPECT_FALSE(fs::exists(tmp.file("runs")));
  for (const auto &entry : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(entry.path().filename().string().rfind(".loom-save-probe", 0),
              std::string::npos)
        << entry.path();
}

TEST_F(CheckpointTest, RecordsTheRankCount) {
  auto saved = load();
  TrainerState state = someState();
  state.ranks = 4;
  std::string path = tmp.file("ckpt");
  saveCheckpoint(path, *saved, state);
  auto restored = load();
  EXPECT_EQ(loadCheckpoint(path, *restored).state.ranks, 4);

  // Checkpoints from before ranks were recorded come from one rank.
  json trainer = json::parse(readBytes(path + "/trainer.json"));
  EXPECT_EQ(trainer["ranks"], 4);
  trainer.erase("ranks");
  writeText(path + "/trainer.json", trainer.dump(2));
  EXPECT_EQ(loadCheckpoint(path, *restored).state.ranks, 1);
}

TEST_F(CheckpointTest, RecordsTheGlobalBatch) {
  auto saved = load();
  TrainerState state = someState();
  state.rowsPerStep = 48;
  std::string path = tmp.file("ckpt");
  saveCheckpoint(path, *saved, state);
  auto restored = load();
  EXPECT_EQ(loadCheckpoint(path, *restored).state.rowsPerStep, 48);

  // Older checkpoints do not know it (0), and a bad value is refused.
  json trainer = json::parse(readBytes(path + "/trainer.json"));
  trainer.erase("rows_per_step");
  writeText(path + "/trainer.json", trainer.dump(2));
  EXPECT_EQ(loadCheckpoint(path, *restored).state.rowsPerStep, 0);
  trainer["rows_per_step"] = -3;
  writeText(path + "/trainer.json", trainer.dump(2));
  EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *restored); },
                          {"field 'rows_per_step' must be an integer from 1 "
                           "to 2^62, got -3"}));
  // So are a negative or huge step, data position, rank count or seed.
  trainer["rows_per_step"] = 4;
  for (auto [key, value] : std::vector<std::pair<const char *, json>>{
           {"step", -5},
           {"data_position", -1},
           {"data_position", int64_t(1) << 62},
           {"ranks", 0},
           {"seed", -1},
           {"step", 1.5}}) {
    json edited = trainer;
    edited[key] = value;
    writeText(path + "/trainer.json", edited.dump(2));
    EXPECT_TRUE(throwsError([&] { loadCheckpoint(path, *restored); },
                            {"trainer.json: ", key}))
        << key << " " << value.dump();
  }
}

TEST(ResumeUnderOtherRanks, GoesOnAtTheNextBatchBoundary) {
  LoadResult loaded;
  loaded.full = true;
  loaded.path = "ck";
  loaded.state.ranks = 2;
  loaded.state.rowsPerStep = 16;
  loaded.state.dataPosition = 3; // 48 rows consumed
  DataResume same = resumeUnderOtherRanks(loaded, 4, 16, false, false);
  EXPECT_EQ(same.position, 3);
  EXPECT_EQ(same.note, "resuming a 2-rank checkpoint (global batches of 16 "
                       "rows) with 4 ranks (16 rows): the data goes on at row "
                       "48; the learning-rate schedule goes on by step");
  EXPECT_EQ(resumeUnderOtherRanks(loaded, 1, 8, false, false).position, 6);
  DataResume bigger = resumeUnderOtherRanks(loaded, 1, 32, false, false);
  EXPECT_EQ(bigger.position, 2);
  EXPECT_NE(bigger.note.find("row 64, skipping rows 48..63"), std::string::npos)
      << bigger.note;

  EXPECT_TRUE(throwsError(
      [&] { resumeUnderOtherRanks(loaded, 3, 24, true, true); },
      {"saved by a 2-rank job but this job has 3 (a CO2 job's ranks hold "
       "models of their own); resume it with -np 2"}));
  loaded.state.dataPosition = INT64_MAX / 4;
  EXPECT_TRUE(
      throwsError([&] { resumeUnderOtherRanks(loaded, 1, 8, false, false); },
                  {"ck: data_position", "overflows"}));
}
