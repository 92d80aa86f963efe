//===- ZeroTest.cpp - ZeRO checkpoints and initialisation -----*- C++ -*-===//
//
// A ZeRO artifact's ranks start from their slices of the whole initial
// tensors; its checkpoints keep each rank's shards in a file of its own and
// the whole params for PyTorch, and a load reassembles each rank's slices
// from the shards, whatever rank count and stage saved them and load them
// (ZeroShards.h). The ranks run as threads of this process (ThreadWorld).
// The manifest's ZeRO fields: ZeroManifestTest.cpp; the arithmetic of
// slices and shards: ZeroSlicesTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "checkpoint/PerRankSave.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/GradCheck.h"
#include "loom/runtime/Init.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/SafeTensors.h"
#include "loom/runtime/Trainer.h"
#include "loom/runtime/World.h"

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

/// `size` ranks of one process, a thread each, whose all-gathers meet in
/// shared memory: enough for the collectives of a save.
class ThreadWorld {
public:
  explicit ThreadWorld(int size) : size(size), slots(size) {}

  /// Runs `fn` for every rank, each on a thread of its own with a
  /// communicator of that rank, and rethrows the first exception.
  void run(const std::function<void(Communicator &)> &fn) {
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(size);
    for (int r = 0; r < size; ++r)
      threads.emplace_back([&, r] {
        Rank comm(*this, r);
        try {
          fn(comm);
        } catch (...) {
          errors[r] = std::current_exception();
        }
      });
    for (std::thread &thread : threads)
      thread.join();
    for (const std::exception_ptr &error : errors)
      if (error)
        std::rethrow_exception(error);
  }

private:
  class Rank final : public Communicator {
  public:
    Rank(ThreadWorld &world, int rank) : world(world), myRank(rank) {}
    int rank() const override { return myRank; }
    int size() const override { return world.size; }
    const char *backend() const override { return "threads"; }
    void allGather(const void *send, void *recv, int64_t count,
                   DType dtype) override {
      world.exchange(myRank, send, count * dtypeSize(dtype), recv);
    }
    void barrier() override { world.exchange(myRank, nullptr, 0, nullptr); }
    // A save issues all-gathers only.
    void allReduce(void *, int64_t, DType, ReduceOp) override { unused(); }
    void reduceScatter(const void *, void *, int64_t, DType,
                       ReduceOp) override {
      unused();
    }
    void broadcast(void *, int64_t, DType, int) override { unused(); }
    [[noreturn]] void abort(int) override { std::abort(); }

  private:
    static void unused() { ADD_FAILURE() << "unexpected collective"; }
    ThreadWorld &world;
    int myRank;
  };

  /// Every rank's `bytes` from `send`, in rank order, into `recv`.
  void exchange(int rank, const void *send, size_t bytes, void *recv) {
    std::unique_lock<std::mutex> lock(mutex);
    const char *from = static_cast<const char *>(send);
    slots[rank].assign(from, from + bytes);
    arrive(lock);
    for (int r = 0; r < size; ++r)
      if (bytes)
        std::memcpy(static_cast<char *>(recv) + r * bytes, slots[r].data(),
                    bytes);
    // Nobody deposits the next exchange's bytes before all have read.
    arrive(lock);
  }

  void arrive(std::unique_lock<std::mutex> &lock) {
    const int64_t generation = generations;
    if (++arrived == size) {
      arrived = 0;
      ++generations;
      changed.notify_all();
      return;
    }
    changed.wait(lock, [&] { return generations != generation; });
  }

  const int size;
  std::vector<std::vector<char>> slots;
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0;
  int64_t generations = 0;
};

/// The tensors a checkpoint holds: the artifact's params, then its state.
std::vector<Tensor *> modelTensors(Artifact &artifact) {
  std::vector<Tensor *> tensors = artifact.params();
  tensors.insert(tensors.end(), artifact.state().begin(),
                 artifact.state().end());
  return tensors;
}

/// modelTensors of the softmax model, as its checkpoints name them.
const std::vector<std::string> kModelNames = {"W", "b", "W.momentum_buffer",
                                              "b.momentum_buffer"};

/// The whole shape of tensor `name` of the softmax model: W and its state
/// are [4, 8], b and its state [4].
Shape wholeShapeOf(const std::string &name) {
  return name[0] == 'W' ? Shape{4, 8} : Shape{4};
}

/// Element `i` of whole tensor `index` of modelTensors.
double wholeValue(size_t index, int64_t i) {
  return 100.0 * static_cast<double>(index + 1) + 0.5 * static_cast<double>(i);
}

/// Where `tensor` of `artifact` on rank `rank` starts in the whole tensor,
/// by the manifest's own word (sharded or not).
int64_t firstElement(Artifact &artifact, const Tensor &tensor, int rank) {
  const Manifest &m = artifact.manifest();
  const TensorSpec *spec = tensor.role() == ArgRole::Param
                               ? m.findParam(tensor.name())
                               : m.findState(tensor.name());
  return spec->sharded ? rank * tensor.numElements() : 0;
}

class ZeroTest : public ::testing::Test {
protected:
  std::unique_ptr<Artifact> load(const json &manifest) {
    std::unique_ptr<Artifact> artifact = Artifact::load(makeArtifactDir(
        tmp.path(), "art" + std::to_string(count++), "softmax_f64", manifest));
    artifact->initialize(1);
    return artifact;
  }

  /// A ZeRO artifact of stage `stage` over `ranks` ranks per rank.
  std::vector<std::unique_ptr<Artifact>> loadRanks(int ranks, int stage = 1) {
    std::vector<std::unique_ptr<Artifact>> artifacts;
    for (int r = 0; r < ranks; ++r)
      artifacts.push_back(load(zeroManifest(ranks, stage)));
    return artifacts;
  }

  /// Rank `rank`'s slices of the whole model (wholeValue), with a padding
  /// that is not zero, so that a load that took it would show; the whole
  /// tensor where the artifact does not shard it.
  static void fillSlices(Artifact &artifact, int rank) {
    const std::vector<Tensor *> tensors = modelTensors(artifact);
    for (size_t t = 0; t < tensors.size(); ++t) {
      Tensor &tensor = *tensors[t];
      const int64_t n = numElements(wholeShapeOf(tensor.name()));
      const int64_t first = firstElement(artifact, tensor, rank);
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        tensor.set(i, first + i < n ? wholeValue(t, first + i) : -7.0);
    }
  }

  /// Every value of the artifact's params and state -7, which a load must
  /// overwrite (padding with zeros).
  static void poison(Artifact &artifact) {
    for (Tensor *tensor : modelTensors(artifact))
      for (int64_t i = 0; i < tensor->numElements(); ++i)
        tensor->set(i, -7.0);
  }

  /// The whole model, as an artifact without ZeRO holds it.
  static void fillWhole(Artifact &artifact) {
    const std::vector<Tensor *> tensors = modelTensors(artifact);
    for (size_t t = 0; t < tensors.size(); ++t)
      for (int64_t i = 0; i < tensors[t]->numElements(); ++i)
        tensors[t]->set(i, wholeValue(t, i));
  }

  /// `tensors` (params, then state) hold the whole model (fillWhole's
  /// values), named and shaped as an artifact without ZeRO has it.
  static void expectWhole(const std::vector<Tensor *> &tensors) {
    ASSERT_EQ(tensors.size(), kModelNames.size());
    for (size_t t = 0; t < tensors.size(); ++t) {
      EXPECT_EQ(tensors[t]->name(), kModelNames[t]);
      EXPECT_EQ(tensors[t]->shape(), wholeShapeOf(kModelNames[t]));
      for (int64_t i = 0; i < tensors[t]->numElements(); ++i)
        EXPECT_EQ(tensors[t]->get(i), wholeValue(t, i))
            << tensors[t]->name() << "[" << i << "]";
    }
  }

  /// The artifact of rank `rank` holds its slices of the whole model
  /// (of its params alone with `paramsOnly`), with zeros for padding.
  static void expectSlices(Artifact &artifact, int rank,
                           bool paramsOnly = false) {
    const std::vector<Tensor *> tensors = modelTensors(artifact);
    const size_t count = paramsOnly ? artifact.params().size() : tensors.size();
    for (size_t t = 0; t < count; ++t) {
      const Tensor &tensor = *tensors[t];
      const int64_t n = numElements(wholeShapeOf(tensor.name()));
      const int64_t first = firstElement(artifact, tensor, rank);
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        EXPECT_EQ(tensor.get(i), first + i < n ? wholeValue(t, first + i) : 0.0)
            << "rank " << rank << " " << tensor.name() << "[" << i << "]";
    }
  }

  /// The ranks of `artifacts`, each filled with its slices, save a ZeRO
  /// checkpoint of step `step` at `path`, each writing its part as the
  /// trainer has them do; returns each rank's outcome.
  static std::vector<PerRankWrite>
  trySave(std::vector<std::unique_ptr<Artifact>> &artifacts,
          const std::string &path, int64_t step = 7,
          const std::function<void(const std::string &)> &beforeWrites = {}) {
    const int ranks = static_cast<int>(artifacts.size());
    TrainerState state = someState(ranks);
    state.step = step;
    const std::string tmpDir = beginPerRankCheckpoint(path);
    if (beforeWrites)
      beforeWrites(tmpDir);
    std::vector<PerRankWrite> wrote(ranks);
    ThreadWorld(ranks).run([&](Communicator &comm) {
      Artifact &artifact = *artifacts[comm.rank()];
      fillSlices(artifact, comm.rank());
      const ZeroPart part{&artifact.manifest(), artifact.params(),
                          artifact.state()};
      wrote[comm.rank()] = writeZeroCheckpoint(comm, tmpDir, path, part, state);
    });
    return wrote;
  }

  /// trySave, which every rank must do without failing.
  static void save(std::vector<std::unique_ptr<Artifact>> &artifacts,
                   const std::string &path, int64_t step = 7) {
    std::vector<PerRankWrite> wrote = trySave(artifacts, path, step);
    for (size_t r = 0; r < wrote.size(); ++r)
      EXPECT_EQ(wrote[r].error, "") << "rank " << r;
    EXPECT_TRUE(wrote[0].committed);
  }

  /// A checkpoint of the whole model (fillWhole) saved by an artifact
  /// without ZeRO, at `path`.
  void saveDataParallel(const std::string &path) {
    auto plain = load(softmaxManifest());
    fillWhole(*plain);
    saveCheckpoint(path, *plain, someState());
  }

  static TrainerState someState(int ranks = 2) {
    TrainerState state;
    state.step = 7;
    state.dataPosition = 7;
    state.ranks = ranks;
    state.rowsPerStep = 32;
    return state;
  }

  TempDir tmp;
  int count = 0;
};

} // namespace

TEST_F(ZeroTest, EachRankWritesItsShardsAndRankZeroTheWholeModel) {
  saveDataParallel(tmp.file("ddp"));
  // 2 ranks divide both tensors evenly; 3 leave padding (33 and 6 slots
  // for 32 and 4 elements); 5 give b's last rank nothing but padding.
  for (int stage : {1, 3})
    for (int ranks : {2, 3, 5}) {
      SCOPED_TRACE("stage " + std::to_string(stage) + ", " +
                   std::to_string(ranks) + " ranks");
      const std::string path = tmp.file("zero" + std::to_string(stage) + "-" +
                                        std::to_string(ranks));
      std::vector<std::unique_ptr<Artifact>> artifacts =
          loadRanks(ranks, stage);
      save(artifacts, path);
      // The whole params, as data parallelism writes them for PyTorch.
      EXPECT_EQ(readBytes(path + "/model.safetensors"),
                readBytes(tmp.file("ddp/model.safetensors")));
      EXPECT_FALSE(fs::exists(path + "/optimizer.safetensors"));
      const std::vector<char> text = readBytes(path + "/trainer.json");
      const json trainer = json::parse(std::string(text.begin(), text.end()));
      EXPECT_EQ(trainer["per_rank"], "zero");
      EXPECT_EQ(trainer["zero"]["stage"], stage);
      EXPECT_EQ(trainer["zero"]["ranks"], ranks);
      EXPECT_EQ(trainer["zero"]["shapes"]["W.momentum_buffer"], json({4, 8}));
      EXPECT_EQ(trainer["zero"]["shapes"].contains("W"), stage == 3);
      for (int r = 0; r < ranks; ++r) {
        // Each rank's file holds its slices as the artifact has them.
        std::vector<Tensor *> sharded = artifacts[r]->state();
        if (stage == 3)
          sharded.insert(sharded.end(), artifacts[r]->params().begin(),
                         artifacts[r]->params().end());
        for (const Tensor *tensor : sharded) {
          const std::string file =
              path + "/rank-" + std::to_string(r) +
              (tensor->role() == ArgRole::Param ? "/model.safetensors"
                                                : "/optimizer.safetensors");
          SafeTensorsFile shard = SafeTensorsFile::read(file);
          const SafeTensorView *view = shard.find(tensor->name());
          ASSERT_TRUE(view) << file << " " << tensor->name();
          EXPECT_EQ(view->shape, tensor->shape());
          EXPECT_EQ(std::memcmp(view->data, tensor->data(), tensor->byteSize()),
                    0);
          std::optional<ShardStamp> stamp = ShardStamp::parse(shard.metadata());
          ASSERT_TRUE(stamp);
          EXPECT_EQ(shardMismatch(stamp, {stage, ranks, r, 7, stamp->model}),
                    "");
          EXPECT_TRUE(trainer["files"].contains(file.substr(path.size() + 1)));
        }
        EXPECT_EQ(fs::exists(path + "/rank-" + std::to_string(r) +
                             "/model.safetensors"),
                  stage == 3);
      }
    }
}

TEST_F(ZeroTest, ACheckpointReshardsForAnyRankCountAndStage) {
  for (auto [stage, ranks] :
       std::vector<std::pair<int, int>>{{1, 2}, {2, 3}, {3, 2}, {3, 5}}) {
    SCOPED_TRACE("saved at stage " + std::to_string(stage) + " by " +
                 std::to_string(ranks) + " ranks");
    const std::string path =
        tmp.file("ck" + std::to_string(stage) + "-" + std::to_string(ranks));
    std::vector<std::unique_ptr<Artifact>> artifacts = loadRanks(ranks, stage);
    save(artifacts, path);
    // Plain data parallelism and one rank: the whole tensors.
    auto plain = load(softmaxManifest());
    poison(*plain);
    LoadResult loaded = loadCheckpoint(path, *plain);
    EXPECT_TRUE(loaded.full);
    EXPECT_EQ(loaded.state.step, 7);
    EXPECT_NE(loaded.note.find("into whole tensors (no ZeRO)"),
              std::string::npos)
        << loaded.note;
    expectWhole(modelTensors(*plain));
    for (int to : {1, 3})
      for (int toRanks : {2, 3, 5})
        for (int r = 0; r < toRanks; ++r) {
          SCOPED_TRACE("loaded at stage " + std::to_string(to) + " by " +
                       std::to_string(toRanks) + " ranks, rank " +
                       std::to_string(r));
          auto artifact = load(zeroManifest(toRanks, to));
          poison(*artifact);
          loaded = loadCheckpoint(path, *artifact, r);
          EXPECT_TRUE(loaded.full);
          expectSlices(*artifact, r);
          EXPECT_EQ(loaded.note.empty(), to == stage && toRanks == ranks)
              << loaded.note;
          // The model alone (--eval --load).
          poison(*artifact);
          loadModelWeights(path, *artifact, r);
          expectSlices(*artifact, r, /*paramsOnly=*/true);
        }
  }
}

TEST_F(ZeroTest, ABackgroundSaveWritesWhatASynchronousOneWrites) {
  for (int stage : {1, 3}) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    const std::string now = tmp.file("now" + std::to_string(stage));
    const std::string later = tmp.file("later" + std::to_string(stage));
    std::vector<std::unique_ptr<Artifact>> artifacts = loadRanks(2, stage);
    save(artifacts, now);
    const std::string tmpDir = beginPerRankCheckpoint(later);
    std::vector<BackgroundSave::Outcome> done(2);
    ThreadWorld(2).run([&](Communicator &comm) {
      Artifact &artifact = *artifacts[comm.rank()];
      BackgroundSave background;
      background.startZero(later, tmpDir, artifact, someState(), comm);
      poison(artifact); // the save holds copies
      done[comm.rank()] = background.finish();
    });
    EXPECT_EQ(done[0].error, "");
    EXPECT_EQ(done[1].error, "");
    EXPECT_TRUE(done[0].committed);
    std::vector<std::string> files = {"model.safetensors",
                                      "rank-0/optimizer.safetensors",
                                      "rank-1/optimizer.safetensors"};
    if (stage == 3)
      files.insert(files.end(),
                   {"rank-0/model.safetensors", "rank-1/model.safetensors"});
    for (const std::string &file : files)
      EXPECT_EQ(readBytes(later + "/" + file), readBytes(now + "/" + file))
          << file;
  }
}

TEST_F(ZeroTest, ARankThatCannotWriteItsShardsCommitsNothing) {
  const std::string path = tmp.file("ck");
  std::vector<std::unique_ptr<Artifact>> artifacts = loadRanks(2, 3);
  save(artifacts, path);
  // Rank 1's directory cannot be made; rank 0 still takes part in every
  // gather of the model, and nobody commits.
  std::vector<PerRankWrite> wrote =
      trySave(artifacts, path, 9, [](const std::string &tmpDir) {
        writeText(tmpDir + "/rank-1", "in the way");
      });
  EXPECT_NE(wrote[1].error.find("cannot create checkpoint directory"),
            std::string::npos)
      << wrote[1].error;
  EXPECT_EQ(wrote[0].error, "");
  EXPECT_FALSE(wrote[0].committed);
  auto plain = load(softmaxManifest());
  EXPECT_EQ(loadCheckpoint(path, *plain).state.step, 7);
}

TEST_F(ZeroTest, ALoadNamesAMissingCorruptedOrForeignShard) {
  std::vector<std::unique_ptr<Artifact>> artifacts = loadRanks(2, 1);
  save(artifacts, tmp.file("ck"));
  save(artifacts, tmp.file("later"), 9);
  const std::string shard = tmp.file("ck/rank-1/optimizer.safetensors");
  const std::vector<char> good = readBytes(shard);
  auto plain = load(softmaxManifest());
  auto refused = [&](const std::vector<std::string> &parts) {
    return throwsError([&] { loadCheckpoint(tmp.file("ck"), *plain); }, parts);
  };
  auto stamped = [&](const ShardStamp &stamp) {
    writeSafeTensors(shard, tensorViews(artifacts[1]->state()),
                     stamp.metadata());
  };
  const std::string model =
      ShardStamp::parse(SafeTensorsFile::read(shard).metadata())->model;

  fs::remove(shard);
  EXPECT_TRUE(refused(
      {"checkpoint file " + shard + " is missing", "each of the 2 ranks"}));
  std::vector<char> flipped = good;
  flipped.back() ^= 1;
  writeBytes(shard, flipped);
  EXPECT_TRUE(refused({"checkpoint file " + shard + " is corrupted"}));
  std::vector<char> truncated(good.begin(), good.end() - 8);
  writeBytes(shard, truncated);
  EXPECT_TRUE(
      refused({shard + " is " + std::to_string(truncated.size()) +
               " bytes but " + std::to_string(good.size()) + " were written"}));

  const std::string foreign =
      "checkpoint file " + shard + " is not a shard of this checkpoint: ";
  fs::copy_file(tmp.file("later/rank-1/optimizer.safetensors"), shard,
                fs::copy_options::overwrite_existing);
  EXPECT_TRUE(refused({foreign + "it was saved at step 9, and this "
                                 "checkpoint at step 7"}));
  fs::copy_file(tmp.file("ck/rank-0/optimizer.safetensors"), shard,
                fs::copy_options::overwrite_existing);
  EXPECT_TRUE(refused({foreign + "it is rank 0's shard, not rank 1's"}));
  stamped({1, 2, 1, 7, std::string(64, '0')});
  EXPECT_TRUE(refused({foreign + "it is a shard of another model"}));
  stamped({3, 4, 1, 7, model});
  EXPECT_TRUE(refused({foreign + "it was saved by 4 ranks at ZeRO stage 3, "
                                 "and this checkpoint by 2 ranks at stage 1"}));
  writeSafeTensors(shard, tensorViews(artifacts[1]->state()));
  EXPECT_TRUE(refused({foreign + "it is not stamped as a ZeRO checkpoint's "
                                 "shard"}));

  writeBytes(shard, good);
  EXPECT_NO_THROW(loadCheckpoint(tmp.file("ck"), *plain));
  // A CO2 artifact resumes checkpoints of its own kind only.
  PerRankTensors co2;
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(tmp.file("ck"), *plain, 0, &co2); },
      {"holds one model sharded over its ranks (saved without CO2)"}));
}

TEST_F(ZeroTest, ASaveNeedsTheRanksTheStateIsSplitOver) {
  LocalCommunicator one;
  for (int stage : {1, 3}) {
    auto artifact = load(zeroManifest(2, stage));
    const ZeroPart part{&artifact->manifest(), artifact->params(),
                        artifact->state()};
    EXPECT_TRUE(throwsError(
        [&] {
          writeZeroCheckpoint(one, tmp.file("x.tmp"), tmp.file("x"), part,
                              someState());
        },
        {"splits its optimizer state", "over 2 ranks", "the job has 1"}));
  }
  EXPECT_FALSE(fs::exists(tmp.file("x")));
}

TEST_F(ZeroTest, WhatEveryRankHoldsAlikeIsTheParamsBelowStageThree) {
  auto stage1 = load(zeroManifest(2, 1));
  EXPECT_EQ(replicatedTensors(*stage1), stage1->params());
  auto stage3 = load(zeroManifest(2, 3));
  EXPECT_TRUE(replicatedTensors(*stage3).empty());
}

TEST_F(ZeroTest, EachRankLoadsItsSliceOfADataParallelCheckpoint) {
  saveDataParallel(tmp.file("ddp"));
  for (int stage : {1, 3})
    for (int ranks : {2, 3, 5})
      for (int r = 0; r < ranks; ++r) {
        SCOPED_TRACE("stage " + std::to_string(stage) + ", " +
                     std::to_string(ranks) + " ranks");
        auto artifact = load(zeroManifest(ranks, stage));
        fillSlices(*artifact, r); // a poisoned padding that loading clears
        for (Tensor *tensor : modelTensors(*artifact))
          tensor->set(tensor->numElements() - 1, -7.0);
        LoadResult loaded = loadCheckpoint(tmp.file("ddp"), *artifact, r);
        EXPECT_TRUE(loaded.full);
        EXPECT_EQ(loaded.state.step, 7);
        expectSlices(*artifact, r);
      }
}

TEST_F(ZeroTest, AWeightsOnlyLoadTakesEachRanksSliceOfTheParams) {
  saveDataParallel(tmp.file("ddp"));
  for (int ranks : {2, 3, 5})
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, rank " + std::to_string(r));
      auto artifact = load(zeroManifest(ranks, 3));
      auto poison = [&] {
        for (Tensor *param : artifact->params())
          for (int64_t i = 0; i < param->numElements(); ++i)
            param->set(i, -7.0);
      };
      poison();
      EXPECT_FALSE(
          loadCheckpoint(tmp.file("ddp/model.safetensors"), *artifact, r).full);
      expectSlices(*artifact, r, /*paramsOnly=*/true);
      // --eval --load DIR reads the directory's model.safetensors.
      poison();
      loadModelWeights(tmp.file("ddp"), *artifact, r);
      expectSlices(*artifact, r, /*paramsOnly=*/true);
    }
}

TEST_F(ZeroTest, ASliceLoadNamesTheFileOfAMissingOrMisshapenTensor) {
  auto plain = load(softmaxManifest());
  // A checkpoint without b's state.
  saveCheckpoint(tmp.file("partial"), plain->params(), {plain->state()[0]},
                 someState());
  auto artifact = load(zeroManifest(2));
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(tmp.file("partial"), *artifact, 1); },
      {"partial/optimizer.safetensors has no tensor 'b.momentum_buffer'"}));
  // Slices saved as they are (not gathered) are not a checkpoint's tensors.
  saveCheckpoint(tmp.file("slices"), *artifact, someState());
  EXPECT_TRUE(throwsError(
      [&] { loadCheckpoint(tmp.file("slices"), *artifact, 0); },
      {"slices/optimizer.safetensors: tensor W.momentum_buffer: checkpoint "
       "shape [16] but artifact expects [4, 8]"}));
  // Nor are a ZeRO-3 artifact's param slices, in a checkpoint or alone.
  auto three = load(zeroManifest(2, 3));
  saveCheckpoint(tmp.file("params"), *three, someState());
  for (const char *path : {"params", "params/model.safetensors"})
    EXPECT_TRUE(throwsError(
        [&] { loadCheckpoint(tmp.file(path), *three, 1); },
        {"params/model.safetensors: tensor W: checkpoint shape [16] but "
         "artifact expects [4, 8]"}));
}

TEST_F(ZeroTest, ALoadNamesTheWholeTensorsElementThatIsNotFinite) {
  auto plain = load(softmaxManifest());
  fillWhole(*plain);
  plain->params()[0]->set(20, NAN);
  saveCheckpoint(tmp.file("nan"), *plain, someState());
  // W's element 20 is rank 1's element 4 of 16.
  auto artifact = load(zeroManifest(2, 3));
  EXPECT_TRUE(
      throwsError([&] { loadCheckpoint(tmp.file("nan"), *artifact, 1); },
                  {"tensor 'W' holds NaN at element 20 (of 32)"}));
  EXPECT_NO_THROW(loadCheckpoint(tmp.file("nan"), *artifact, 0));
}

TEST_F(ZeroTest, EachRankStartsFromItsSliceOfTheWholeInitialModel) {
  // W is normal; b ones, so that its padding must be zeros, not ones.
  auto withOnes = [](json m) {
    m["params"][1]["init"] = {{"kind", "ones"}, {"scale", 0.0}};
    return m;
  };
  auto plain = load(withOnes(softmaxManifest()));
  plain->initialize(5);
  const std::vector<Tensor *> whole = modelTensors(*plain);
  for (int ranks : {2, 3, 5})
    for (int r = 0; r < ranks; ++r) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, rank " + std::to_string(r));
      auto artifact = load(withOnes(zeroManifest(ranks, 3)));
      artifact->initialize(5, r);
      const std::vector<Tensor *> tensors = modelTensors(*artifact);
      for (size_t t = 0; t < tensors.size(); ++t) {
        const int64_t first = firstElement(*artifact, *tensors[t], r);
        const int64_t n = whole[t]->numElements();
        for (int64_t i = 0; i < tensors[t]->numElements(); ++i)
          EXPECT_EQ(tensors[t]->get(i),
                    first + i < n ? whole[t]->get(first + i) : 0.0)
              << tensors[t]->name() << "[" << i << "]";
      }
    }
}

TEST_F(ZeroTest, GradCheckRefusesShardedParams) {
  auto artifact = load(zeroManifest(2, 3));
  std::ostringstream log;
  EXPECT_TRUE(
      throwsError([&] { runGradCheck(*artifact, GradCheckOptions{}, log); },
                  {"manifest.json: the artifact's params are slices over 2 "
                   "ranks (ZeRO stage 3)",
                   "loom-gradcheck runs one rank"}));
}

TEST_F(ZeroTest, TheTrainerRefusesAJobOfOtherRanks) {
  auto artifact = load(zeroManifest(2));
  TrainOptions options;
  options.steps = 1;
  LocalCommunicator comm;
  std::ostringstream log, out;
  EXPECT_TRUE(throwsError(
      [&] { Trainer(*artifact, options, comm, log, out).run(); },
      {"splits its optimizer state over 2 ranks (ZeRO stage 1, zero.ranks) "
       "but the job has 1",
       "recompile without --dp and --zero"}));
}
