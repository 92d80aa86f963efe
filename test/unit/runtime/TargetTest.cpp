//===- TargetTest.cpp - cpu and cuda artifacts, and the plugins -*- C++ -*-===//
//
// What runs without a GPU: the errors of a machine without an NVIDIA driver
// (the real libcuda.so.1 is absent) or without a GPU (FakeCudaDriver.c), the
// target checks of Artifact::load, the plugins' load errors, that a cuda
// artifact's undefined symbols (mgpu*, loom_rt_gpu_*) all resolve against
// libLoomCuda.so, and the cpu build of the linear artifact
// (LinearArtifact.c). What needs a GPU skips without one: training the cuda
// build, which must match the cpu build, and its checkpoints.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Target.h"
#include "TestUtil.h"
#include "comm/Backends.h"
#include "loom/runtime/Artifact.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Trainer.h"
#include "loom/runtime/World.h"
#include "support/Plugin.h"

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <sstream>

using namespace loom::rt;
using namespace loom::rt::test;
using nlohmann::json;

namespace {

bool haveNvidiaDriver() {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver)
    dlclose(driver);
  return driver != nullptr;
}

/// Whether this process can open a GPU (the real driver and a device).
bool haveGpu() {
  try {
    requireTarget(Target::CUDA);
    return true;
  } catch (const Error &) {
    return false;
  }
}

json tensorArg(const char *role, const char *name, Shape shape) {
  return {{"role", role}, {"name", name}, {"shape", shape}, {"dtype", "f64"}};
}

/// The manifest of LinearArtifact.c, built for `target`.
json linearManifest(Target target) {
  json m = {{"format_version", 1},
            {"library", "model.so"},
            {"dtype", "f64"},
            {"target", targetName(target)},
            {"model", {{"kind", "linear"}, {"spec", "linear:features=4"}}},
            {"task", {{"kind", "none"}}},
            {"params",
             {{{"name", "w"},
               {"shape", {4, 1}},
               {"dtype", "f64"},
               {"init", {{"kind", "normal"}, {"scale", 0.5}}}}}},
            {"inputs",
             {{{"name", "x"}, {"shape", {8, 4}}, {"dtype", "f64"}},
              {{"name", "y"}, {"shape", {8, 1}}, {"dtype", "f64"}}}},
            {"entries",
             {{"train_step",
               {{"symbol", "loom_linear_train_step"},
                {"args",
                 {tensorArg("param", "w", {4, 1}),
                  {{"role", "step"},
                   {"name", "step"},
                   {"shape", json::array()},
                   {"dtype", "i64"}},
                  tensorArg("input", "x", {8, 4}),
                  tensorArg("input", "y", {8, 1}),
                  tensorArg("output", "loss", {}),
                  tensorArg("output", "lr", {})}}}}}}};
  if (target == Target::CUDA)
    m["cuda"] = {{"chip", "sm_75"}}; // PTX for sm_75 runs on every newer GPU
  return m;
}

std::string linearDir(const std::string &parent, const std::string &name,
                      Target target) {
  return makeArtifactDir(parent, name,
                         target == Target::CUDA ? "linear_cuda" : "linear_cpu",
                         linearManifest(target));
}

/// The softmax artifact's manifest relabelled as a cuda artifact (its code
/// is cpu code, which is fine for every test that stops before running it).
json fakeCudaManifest() {
  json m = softmaxManifest();
  m["target"] = "cuda";
  m["cuda"] = {{"chip", "sm_90"}};
  return m;
}

struct Trained {
  TrainResult result;
  std::vector<double> w;
};

Trained train(Artifact &artifact, int64_t steps, const std::string &save = "",
              const std::string &load = "") {
  LocalCommunicator comm;
  std::ostringstream log, out;
  TrainOptions options;
  options.steps = steps;
  options.seed = 5;
  options.savePath = save;
  options.loadPath = load;
  Trained trained;
  trained.result = Trainer(artifact, options, comm, log, out).run();
  Tensor &w = artifact.tensor("w");
  // A cuda artifact trains its device copy; only a save (TrainerSave.cpp)
  // brings the host copy up to date.
  artifact.download(w);
  for (int64_t i = 0; i < w.numElements(); ++i)
    trained.w.push_back(w.get(i));
  return trained;
}

} // namespace

TEST(Target, ParsesNames) {
  EXPECT_EQ(parseTargetName("cpu"), Target::CPU);
  EXPECT_EQ(parseTargetName("cuda"), Target::CUDA);
  EXPECT_FALSE(parseTargetName("gpu"));
  EXPECT_STREQ(targetName(Target::CUDA), "cuda");
  EXPECT_NO_THROW(requireTarget(Target::CPU));
  EXPECT_EQ(describeTarget(Target::CPU), "cpu");
}

TEST(Target, NoDriverIsAClearError) {
  ScopedEnv driver("LOOM_CUDA_DRIVER", nullptr);
  if (haveNvidiaDriver())
    GTEST_SKIP() << "this machine has an NVIDIA driver";
#ifdef LOOM_TEST_HAVE_CUDA_PLUGIN
  EXPECT_TRUE(throwsError([] { requireTarget(Target::CUDA); },
                          {"no NVIDIA driver (", "libcuda.so.1",
                           "); this machine cannot run CUDA artifacts"}));
  // A cuda artifact says the same, naming itself; nothing of it is loaded.
  TempDir tmp;
  std::string dir =
      makeArtifactDir(tmp.path(), "a", "softmax_f64", fakeCudaManifest());
  EXPECT_TRUE(throwsError(
      [&] { Artifact::load(dir); },
      {"cannot run " + dir + " (compiled for cuda): no NVIDIA driver",
       "libcuda.so.1", "cannot run CUDA artifacts"}));
#else
  EXPECT_TRUE(
      throwsError([] { requireTarget(Target::CUDA); }, {"built without CUDA"}));
#endif
}

TEST(Target, DriverWithoutGpuIsAClearError) {
#if defined(LOOM_TEST_HAVE_CUDA_PLUGIN) && defined(LOOM_TEST_FAKE_CUDA_DRIVER)
  ScopedEnv driver("LOOM_CUDA_DRIVER", LOOM_TEST_FAKE_CUDA_DRIVER);
  if (haveGpu()) // opened once, a device stays open for the process
    GTEST_SKIP() << "a GPU is already open in this process";
  EXPECT_TRUE(throwsError(
      [] { requireTarget(Target::CUDA); },
      {"cuInit failed: no CUDA-capable device is detected "
       "(CUDA_ERROR_NO_DEVICE); this machine cannot run CUDA artifacts"}));
  {
    ScopedEnv old("LOOM_FAKE_CUDA_VERSION", "12080");
    EXPECT_TRUE(throwsError([] { requireTarget(Target::CUDA); },
                            {"the NVIDIA driver supports CUDA 12.8 but this "
                             "runtime was built with CUDA",
                             "update the driver"}));
  }
  {
    // Refused when the GPU is opened, before any work.
    ScopedEnv limit("LOOM_GPU_WAIT_LIMIT_S", "ten");
    EXPECT_TRUE(throwsError(
        [] { requireTarget(Target::CUDA); },
        {"LOOM_GPU_WAIT_LIMIT_S: expected a number >= 0, got 'ten'"}));
  }
  TempDir tmp;
  std::string dir =
      makeArtifactDir(tmp.path(), "a", "softmax_f64", fakeCudaManifest());
  EXPECT_TRUE(throwsError(
      [&] { Artifact::load(dir); },
      {"(compiled for cuda): cuInit failed", "CUDA_ERROR_NO_DEVICE"}));
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(Target, MissingPluginIsAClearError) {
  ScopedEnv plugin("LOOM_CUDA_PLUGIN", "/nonexistent/libLoomCuda.so");
  if (haveGpu())
    GTEST_SKIP() << "a GPU is already open in this process";
  EXPECT_TRUE(throwsError(
      [] { requireTarget(Target::CUDA); },
      {"cannot load the CUDA plugin", "/nonexistent/libLoomCuda.so"}));
}

TEST(Target, ArtifactsRunOnlyOnTheirTarget) {
  TempDir tmp;
  std::string cpu =
      makeArtifactDir(tmp.path(), "cpu", "softmax_f64", softmaxManifest());
  ArtifactOptions onCuda;
  onCuda.target = Target::CUDA;
  EXPECT_TRUE(throwsError([&] { Artifact::load(cpu, onCuda); },
                          {"was compiled for cpu, not cuda",
                           "`loomc --target=cuda`", "--device cpu"}));
  std::string cuda =
      makeArtifactDir(tmp.path(), "cuda", "softmax_f64", fakeCudaManifest());
  ArtifactOptions onCpu;
  onCpu.target = Target::CPU;
  EXPECT_TRUE(throwsError([&] { Artifact::load(cuda, onCpu); },
                          {"was compiled for cuda, not cpu",
                           "`loomc --target=cpu`", "--device cuda"}));
  ArtifactOptions asCompiled;
  asCompiled.target = Target::CPU;
  auto artifact = Artifact::load(cpu, asCompiled);
  EXPECT_FALSE(artifact->onDevice());
  EXPECT_EQ(artifact->target(), Target::CPU);
  EXPECT_EQ(artifact->tensor("W").deviceData(), nullptr);
  // The sync points are no-ops on cpu.
  artifact->uploadInputs();
  artifact->uploadModel();
  artifact->downloadModel();
  artifact->downloadOutputs({&artifact->tensor("loss"), nullptr});
  artifact->synchronize();
}

TEST(Target, CO2IsRefusedOnCuda) {
  TempDir tmp;
  json m = fakeCudaManifest();
  m["co2"] = {{"local_steps", 4}};
  std::string dir = makeArtifactDir(tmp.path(), "a", "softmax_f64", m);
  EXPECT_TRUE(throwsError([&] { Artifact::load(dir); },
                          {"CO2 artifacts (loomc --co2) are not supported on "
                           "cuda yet"}));
}

TEST(Target, CudaArtifactSymbolsResolveAgainstThePlugin) {
#ifdef LOOM_TEST_HAVE_CUDA_PLUGIN
  std::string error;
  void *plugin = loadPlugin("libLoomCuda.so", "LOOM_CUDA_PLUGIN", error);
  ASSERT_TRUE(plugin) << error;
  // RTLD_NOW: every mgpu* and loom_rt_gpu_* symbol the artifact uses must
  // resolve. Its constructor loads the kernels; without a GPU that failure
  // is kept for Artifact::load to report, and nothing crashes.
  std::string path = testArtifactDir() + "/linear_cuda.so";
  void *artifact = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(artifact) << dlerror();
  EXPECT_TRUE(dlsym(artifact, "loom_linear_train_step"));
  dlclose(artifact);
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(Mpi, PluginIsBuiltAndLoads) {
#ifdef LOOM_TEST_HAVE_MPI_PLUGIN
  EXPECT_TRUE(haveMpi());
#else
  EXPECT_FALSE(haveMpi());
#endif
}

TEST(Mpi, MissingPluginIsAClearError) {
  ScopedEnv plugin("LOOM_MPI_PLUGIN", "/nonexistent/libLoomMpi.so");
  EXPECT_FALSE(haveMpi());
  EXPECT_TRUE(throwsError([] { createMpiCommunicator(WorldOptions{}); },
                          {"multi-rank jobs need MPI: cannot load "
                           "libLoomMpi.so:",
                           "/nonexistent/libLoomMpi.so"}));
}

TEST(Mpi, LocalRankComesFromTheLauncher) {
  ScopedEnv a("LOCAL_RANK", nullptr), b("OMPI_COMM_WORLD_LOCAL_RANK", "3"),
      c("OMPI_COMM_WORLD_LOCAL_SIZE", "4"), d("LOCAL_WORLD_SIZE", nullptr);
  JobInfo job = detectJob();
  EXPECT_EQ(job.localRank, 3);
  EXPECT_EQ(job.localSize, 4);
  ScopedEnv e("LOCAL_RANK", "1");
  EXPECT_EQ(detectJob().localRank, 1); // torchrun's name first
  ScopedEnv f("LOCAL_RANK", "x"), g("OMPI_COMM_WORLD_LOCAL_RANK", nullptr),
      h("MPI_LOCALRANKID", nullptr), i("SLURM_LOCALID", nullptr),
      j("MV2_COMM_WORLD_LOCAL_RANK", nullptr);
  EXPECT_EQ(detectJob().localRank, -1);
}

TEST(LinearArtifact, TrainsOnCpu) {
  // The cpu build of the artifact whose cuda build the GPU test compares
  // with: a check of the artifact itself.
  TempDir tmp;
  auto artifact = Artifact::load(linearDir(tmp.path(), "a", Target::CPU));
  Trained trained = train(*artifact, 200);
  EXPECT_LT(trained.result.summary.finalLoss, trained.result.summary.firstLoss);
  EXPECT_DOUBLE_EQ(artifact->tensor("lr").get(0), 0.05);
}

TEST(CudaTraining, MatchesTheCpuBuild) {
  if (!haveGpu())
    GTEST_SKIP() << "no GPU";
  TempDir tmp;
  auto cpu = Artifact::load(linearDir(tmp.path(), "cpu", Target::CPU));
  auto cuda = Artifact::load(linearDir(tmp.path(), "cuda", Target::CUDA));
  ASSERT_TRUE(cuda->onDevice());
  ASSERT_TRUE(cuda->tensor("w").deviceData());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cuda->tensor("w").deviceData()) % 256,
            0u);
  Trained onCpu = train(*cpu, 50), onCuda = train(*cuda, 50);
  ASSERT_EQ(onCpu.w.size(), onCuda.w.size());
  for (size_t i = 0; i < onCpu.w.size(); ++i)
    EXPECT_NEAR(onCuda.w[i], onCpu.w[i], 1e-9 * (1 + std::fabs(onCpu.w[i])));
  EXPECT_NEAR(onCuda.result.summary.finalLoss, onCpu.result.summary.finalLoss,
              1e-9);
  EXPECT_DOUBLE_EQ(cuda->tensor("lr").get(0), 0.05);
}

TEST(CudaTraining, ResumesExactlyFromItsCheckpoint) {
  if (!haveGpu())
    GTEST_SKIP() << "no GPU";
  TempDir tmp;
  auto straight = Artifact::load(linearDir(tmp.path(), "a", Target::CUDA));
  Trained all = train(*straight, 20);
  auto first = Artifact::load(linearDir(tmp.path(), "b", Target::CUDA));
  train(*first, 10, tmp.file("ckpt"));
  auto second = Artifact::load(linearDir(tmp.path(), "c", Target::CUDA));
  Trained resumed = train(*second, 10, "", tmp.file("ckpt"));
  EXPECT_EQ(resumed.result.state.step, 20);
  EXPECT_EQ(resumed.w, all.w); // the same kernels on the same data
}
