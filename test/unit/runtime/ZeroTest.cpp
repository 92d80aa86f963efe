//===- ZeroTest.cpp - ZeRO checkpoints and initialisation -----*- C++ -*-===//
//
// A ZeRO artifact's ranks start from their slices of the whole initial
// tensors; its checkpoints are those of plain data parallelism: a save
// gathers the ranks' slices whole, a load copies each rank's slice out of
// the whole tensors, whatever rank count saved them. The ranks run as
// threads of this process (ThreadWorld). The manifest's ZeRO fields:
// ZeroManifestTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/BackgroundSave.h"
#include "loom/runtime/Checkpoint.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/GradCheck.h"
#include "loom/runtime/Init.h"
#include "loom/runtime/Manifest.h"
#include "loom/runtime/Trainer.h"
#include "loom/runtime/World.h"

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

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
  /// that is not zero, so that a gather that kept it would show; the whole
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

  /// Gathers the whole model on the ranks of `artifacts` (each filled with
  /// its slices first), checks it on every rank and, with `path`, saves
  /// rank 0's as the trainer does.
  void gatherAndSave(std::vector<std::unique_ptr<Artifact>> &artifacts,
                     const std::string &path = "") {
    ThreadWorld world(static_cast<int>(artifacts.size()));
    world.run([&](Communicator &comm) {
      Artifact &artifact = *artifacts[comm.rank()];
      fillSlices(artifact, comm.rank());
      std::vector<std::unique_ptr<Tensor>> gathered;
      std::vector<Tensor *> params =
          wholeTensors(comm, artifact, artifact.params(), gathered);
      std::vector<Tensor *> state =
          wholeTensors(comm, artifact, artifact.state(), gathered);
      std::vector<Tensor *> whole = params;
      whole.insert(whole.end(), state.begin(), state.end());
      expectWhole(whole);
      if (!path.empty() && comm.isRoot())
        saveCheckpoint(path, params, state, someState());
    });
  }

  /// A checkpoint of the whole model (fillWhole) saved by an artifact
  /// without ZeRO, at `path`.
  void saveDataParallel(const std::string &path) {
    auto plain = load(softmaxManifest());
    fillWhole(*plain);
    saveCheckpoint(path, *plain, someState());
  }

  static TrainerState someState() {
    TrainerState state;
    state.step = 7;
    state.dataPosition = 7;
    state.ranks = 2;
    state.rowsPerStep = 32;
    return state;
  }

  TempDir tmp;
  int count = 0;
};

} // namespace

TEST_F(ZeroTest, ASaveGathersTheWholeModelOnEveryRank) {
  // 2 ranks divide both tensors evenly; 3 leave padding (33 and 6 slots
  // for 32 and 4 elements); 5 give b's last rank nothing but padding. Stage
  // 1 gathers the state; stage 3 the params too.
  for (int stage : {1, 3})
    for (int ranks : {2, 3, 5}) {
      SCOPED_TRACE("stage " + std::to_string(stage) + ", " +
                   std::to_string(ranks) + " ranks");
      std::vector<std::unique_ptr<Artifact>> artifacts =
          loadRanks(ranks, stage);
      gatherAndSave(artifacts);
    }
}

TEST_F(ZeroTest, TheCheckpointIsTheOneDataParallelismWrites) {
  saveDataParallel(tmp.file("ddp"));
  for (int stage : {1, 3}) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    const std::string path = tmp.file("zero" + std::to_string(stage));
    std::vector<std::unique_ptr<Artifact>> artifacts = loadRanks(3, stage);
    gatherAndSave(artifacts, path);
    for (const char *file : {"/model.safetensors", "/optimizer.safetensors"})
      EXPECT_EQ(readBytes(path + file), readBytes(tmp.file("ddp") + file))
          << file;
    // And it resumes an artifact without ZeRO (of any rank count).
    auto resumed = load(softmaxManifest());
    EXPECT_TRUE(loadCheckpoint(path, *resumed).full);
    expectWhole(modelTensors(*resumed));
  }
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

TEST_F(ZeroTest, ACheckpointMovesBetweenRankCounts) {
  std::vector<std::unique_ptr<Artifact>> two = loadRanks(2, 3);
  gatherAndSave(two, tmp.file("two"));
  std::vector<std::unique_ptr<Artifact>> three = loadRanks(3, 3);
  for (int r = 0; r < 3; ++r) {
    loadCheckpoint(tmp.file("two"), *three[r], r);
    expectSlices(*three[r], r);
  }
  // Saved again at 3 ranks: the same files.
  gatherAndSave(three, tmp.file("three"));
  for (const char *file : {"/model.safetensors", "/optimizer.safetensors"})
    EXPECT_EQ(readBytes(tmp.file("two") + file),
              readBytes(tmp.file("three") + file))
        << file;
}

TEST_F(ZeroTest, ABackgroundSaveWritesTheGatheredModel) {
  std::vector<std::unique_ptr<Artifact>> artifacts = loadRanks(2, 3);
  std::vector<std::vector<std::unique_ptr<Tensor>>> gathered(2);
  std::vector<std::vector<Tensor *>> params(2), state(2);
  ThreadWorld(2).run([&](Communicator &comm) {
    const int r = comm.rank();
    fillSlices(*artifacts[r], r);
    params[r] =
        wholeTensors(comm, *artifacts[r], artifacts[r]->params(), gathered[r]);
    state[r] =
        wholeTensors(comm, *artifacts[r], artifacts[r]->state(), gathered[r]);
  });
  BackgroundSave background;
  background.start(tmp.file("ckpt"), params[0], state[0], someState());
  gathered[0].clear(); // the save holds a copy
  EXPECT_EQ(background.finish().error, "");
  auto resumed = load(softmaxManifest());
  loadCheckpoint(tmp.file("ckpt"), *resumed);
  expectWhole(modelTensors(*resumed));
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

TEST_F(ZeroTest, AGatherNeedsTheRanksTheStateIsSplitOver) {
  LocalCommunicator one;
  std::vector<std::unique_ptr<Tensor>> gathered;
  for (int stage : {1, 3}) {
    auto artifact = load(zeroManifest(2, stage));
    EXPECT_TRUE(throwsError(
        [&] { wholeTensors(one, *artifact, artifact->state(), gathered); },
        {"splits its optimizer state", "over 2 ranks", "the job has 1"}));
  }
  auto three = load(zeroManifest(2, 3));
  EXPECT_TRUE(
      throwsError([&] { wholeTensors(one, *three, three->params(), gathered); },
                  {"splits its optimizer state and params over 2 ranks"}));
  // Without ZeRO the tensors are whole already: no collective. Neither are
  // a stage-1 artifact's params.
  auto plain = load(softmaxManifest());
  EXPECT_EQ(wholeTensors(one, *plain, plain->state(), gathered),
            plain->state());
  EXPECT_TRUE(gathered.empty());
  auto stage1 = load(zeroManifest(2, 1));
  ThreadWorld(2).run([&](Communicator &comm) {
    std::vector<std::unique_ptr<Tensor>> none;
    EXPECT_EQ(wholeTensors(comm, *stage1, stage1->params(), none),
              stage1->params());
    EXPECT_TRUE(none.empty());
  });
}

TEST(ZeroInit, ASliceHoldsTheWholeTensorsValuesThenZeros) {
  using Kind = InitSpec::Kind;
  for (InitSpec init :
       {InitSpec{Kind::Normal, 0.5}, InitSpec{Kind::Uniform, 0.3},
        InitSpec{Kind::Ones, 0}, InitSpec{Kind::Zeros, 0}})
    for (int64_t n : {7, 32})
      for (int ranks : {2, 3, 5}) {
        SCOPED_TRACE("init kind " +
                     std::to_string(static_cast<int>(init.kind)) + ", " +
                     std::to_string(n) + " elements, " + std::to_string(ranks) +
                     " ranks");
        std::vector<double> whole(n);
        fillInit(whole.data(), DType::F64, n, init, 4, "w");
        const int64_t s = (n + ranks - 1) / ranks;
        for (int r = 0; r < ranks; ++r) {
          std::vector<double> slice(s, -7.0);
          fillInitSlice(slice.data(), DType::F64, s, r * s, n, init, 4, "w");
          for (int64_t i = 0; i < s; ++i)
            EXPECT_EQ(slice[i], r * s + i < n ? whole[r * s + i] : 0.0)
                << "rank " << r << " element " << i;
        }
      }
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
