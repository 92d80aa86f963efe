//===- CudaDeviceTest.cpp - The CUDA plugin on a real GPU -------*- C++ -*-===//
//
// The plugin's code (linked into LoomCudaTests from the same objects as
// libLoomCuda.so) against a GPU: device memory and copies, the GEMM service
// against the CPU GEMM, the mgpu* calls of compiled code including a JIT
// kernel launch, and the one-rank device communicator (NCCL when it loads).
// Every test but the first skips on a machine without a GPU; the first
// checks what such a machine reports.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "ScalePtx.h"
#include "TestUtil.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iostream>
#include <random>

using namespace loom::rt;
using namespace loom::rt::cuda;
using namespace loom::rt::test;

extern "C" {
CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize);
CUmodule mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(CUmodule module);
CUfunction mgpuModuleGetFunction(CUmodule module, const char *name);
void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t paramsCount);
CUstream mgpuStreamCreate();
void mgpuStreamDestroy(CUstream stream);
void mgpuStreamSynchronize(CUstream stream);
void mgpuStreamWaitEvent(CUstream stream, CUevent event);
CUevent mgpuEventCreate();
void mgpuEventDestroy(CUevent event);
void mgpuEventSynchronize(CUevent event);
void mgpuEventRecord(CUevent event, CUstream stream);
void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared);
void mgpuMemFree(void *ptr, CUstream stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count, CUstream stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream);
}

namespace {

bool haveDriver() {
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver)
    dlclose(driver);
  return driver != nullptr;
}

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    try {
      device = &CudaDevice::open(DeviceOptions{});
    } catch (const Error &e) {
      GTEST_SKIP() << "no GPU: " << e.what();
    }
  }

  template <typename T>
  T *toDevice(const std::vector<T> &host) {
    void *ptr = device->allocate(host.size() * sizeof(T));
    device->upload(ptr, host.data(), host.size() * sizeof(T));
    return static_cast<T *>(ptr);
  }

  template <typename T>
  std::vector<T> toHost(const T *ptr, size_t count) {
    std::vector<T> host(count);
    device->download(host.data(), ptr, count * sizeof(T));
    device->synchronize();
    return host;
  }

  CudaDevice *device = nullptr;
};

} // namespace

TEST(CudaDevice, OpeningWithoutADriverIsAClearError) {
  if (haveDriver())
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  EXPECT_TRUE(throwsError([] { CudaDevice::open(DeviceOptions{}); },
                          {"no NVIDIA driver (", "libcuda.so.1",
                           "this machine cannot run CUDA artifacts"}));
  EXPECT_EQ(CudaDevice::opened(), nullptr);
}

TEST_F(Gpu, DescribesItself) {
  EXPECT_NE(device->describe().find("(sm_"), std::string::npos)
      << device->describe();
  EXPECT_GE(device->computeMajor(), 7);
}

TEST_F(Gpu, BuffersAreAlignedZeroedAndRoundTrip) {
  void *empty = device->allocate(0), *other = device->allocate(0);
  EXPECT_TRUE(empty);
  EXPECT_NE(empty, other);
  std::vector<double> values(1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = 0.5 * static_cast<double>(i) - 7;
  void *buffer = device->allocate(values.size() * sizeof(double));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 256, 0u);
  EXPECT_EQ(toHost(static_cast<double *>(buffer), values.size()),
            std::vector<double>(values.size(), 0.0));
  device->upload(buffer, values.data(), values.size() * sizeof(double));
  EXPECT_EQ(toHost(static_cast<double *>(buffer), values.size()), values);
  device->release(buffer);
  device->release(empty);
  device->release(other);
}

TEST_F(Gpu, GemmMatchesTheCpuGemm) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-1, 1);
  struct Shape {
    int64_t M, N, K, batch;
  };
  for (Shape s : {Shape{17, 9, 33, 1}, Shape{64, 48, 80, 3}, Shape{5, 7, 0, 2},
                  Shape{1, 1, 1, 1}})
    for (int transA : {0, 1})
      for (int transB : {0, 1})
        for (double beta : {0.0, 1.0}) {
          SCOPED_TRACE(::testing::Message()
                       << "M=" << s.M << " N=" << s.N << " K=" << s.K
                       << " batch=" << s.batch << " tA=" << transA
                       << " tB=" << transB << " beta=" << beta);
          int64_t lda = (transA ? s.M : s.K) + 1,
                  ldb = (transB ? s.K : s.N) + 2, ldc = s.N + 3;
          int64_t sA = (transA ? s.K : s.M) * lda + 1,
                  sB = (transB ? s.N : s.K) * ldb + 2, sC = s.M * ldc + 3;
          std::vector<double> A(s.batch * sA), B(s.batch * sB), C(s.batch * sC);
          for (auto *v : {&A, &B, &C})
            for (double &x : *v)
              x = value(rng);
          // f64
          std::vector<double> expected = C;
          loom_rt_gemm_f64(s.batch, transA, transB, s.M, s.N, s.K, A.data(),
                           lda, sA, B.data(), ldb, sB, beta, expected.data(),
                           ldc, sC);
          double *dA = toDevice(A), *dB = toDevice(B), *dC = toDevice(C);
          loom_rt_gpu_gemm_f64(s.batch, transA, transB, s.M, s.N, s.K, dA, lda,
                               sA, dB, ldb, sB, beta, dC, ldc, sC);
          std::vector<double> actual = toHost(dC, C.size());
          for (size_t i = 0; i < C.size(); ++i)
            ASSERT_NEAR(actual[i], expected[i], 1e-12) << i;
          // f32, which must not use TF32 (1e-3 against the CPU path)
          std::vector<float> fA(A.begin(), A.end()), fB(B.begin(), B.end()),
              fC(C.begin(), C.end()), fExpected = fC;
          loom_rt_gemm_f32(s.batch, transA, transB, s.M, s.N, s.K, fA.data(),
                           lda, sA, fB.data(), ldb, sB, float(beta),
                           fExpected.data(), ldc, sC);
          float *gA = toDevice(fA), *gB = toDevice(fB), *gC = toDevice(fC);
          loom_rt_gpu_gemm_f32(s.batch, transA, transB, s.M, s.N, s.K, gA, lda,
                               sA, gB, ldb, sB, float(beta), gC, ldc, sC);
          std::vector<float> fActual = toHost(gC, fC.size());
          for (size_t i = 0; i < fC.size(); ++i)
            ASSERT_NEAR(fActual[i], fExpected[i], 1e-5) << i;
          // bf16 operands (the upper halves of fA/fB) into f32: bf16
          // tensor cores with FP32 accumulation against the CPU's widened
          // sgemm; the products are exact, only the summation differs.
          std::vector<uint16_t> hA(fA.size()), hB(fB.size());
          for (auto [from, to] : {std::pair{&fA, &hA}, std::pair{&fB, &hB}})
            for (size_t i = 0; i < from->size(); ++i) {
              uint32_t bits;
              std::memcpy(&bits, &(*from)[i], sizeof bits);
              (*to)[i] = static_cast<uint16_t>(bits >> 16);
            }
          std::vector<float> hC(C.begin(), C.end()), hExpected = hC;
          loom_rt_gemm_bf16(s.batch, transA, transB, s.M, s.N, s.K, hA.data(),
                            lda, sA, hB.data(), ldb, sB, float(beta),
                            hExpected.data(), ldc, sC);
          uint16_t *bA = toDevice(hA), *bB = toDevice(hB);
          float *bC = toDevice(hC);
          loom_rt_gpu_gemm_bf16(s.batch, transA, transB, s.M, s.N, s.K, bA, lda,
                                sA, bB, ldb, sB, float(beta), bC, ldc, sC);
          std::vector<float> hActual = toHost(bC, hC.size());
          for (size_t i = 0; i < hC.size(); ++i)
            ASSERT_NEAR(hActual[i], hExpected[i], 1e-4) << i;
          for (void *p :
               {(void *)dA, (void *)dB, (void *)dC, (void *)gA, (void *)gB,
                (void *)gC, (void *)bA, (void *)bB, (void *)bC})
            device->release(p);
        }
}

TEST_F(Gpu, MgpuMemoryCopiesAndStreams) {
  CUstream stream = mgpuStreamCreate();
  EXPECT_EQ(stream, device->computeStream());
  void *buffer = mgpuMemAlloc(64 * sizeof(uint32_t), stream, false);
  mgpuMemset32(buffer, 0x01020304u, 64, stream);
  mgpuMemset16(buffer, 0xabcd, 2, stream); // the first 4 bytes
  std::vector<uint32_t> host(64);
  mgpuMemcpy(host.data(), buffer, 64 * sizeof(uint32_t), stream);
  // A copy into host memory: this synchronisation must really wait.
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(host[0], 0xabcdabcdu);
  EXPECT_EQ(host[63], 0x01020304u);
  mgpuMemFree(buffer, stream);
  // The same size again comes from the pool, not the driver. (The first
  // allocation may have reused a block an earlier test freed, so only the
  // second one's counts are known.)
  DevicePoolStats before = device->pool().stats();
  void *again = mgpuMemAlloc(64 * sizeof(uint32_t), stream, false);
  EXPECT_EQ(again, buffer);
  mgpuMemFree(again, stream);
  mgpuMemFree(nullptr, stream);
  DevicePoolStats after = device->pool().stats();
  EXPECT_EQ(after.systemAllocs, before.systemAllocs);
  EXPECT_EQ(after.reuses - before.reuses, 1u);

  // Managed memory the host reads after a synchronisation.
  auto *shared = static_cast<uint32_t *>(mgpuMemAlloc(16, stream, true));
  mgpuMemset32(shared, 7, 4, stream);
  mgpuStreamSynchronize(stream);
  EXPECT_EQ(shared[3], 7u);
  mgpuMemFree(shared, stream);

  CUevent event = mgpuEventCreate();
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(stream, event);
  mgpuEventSynchronize(event);
  mgpuEventDestroy(event);
  mgpuStreamDestroy(stream); // the compute stream stays
  device->synchronize();
}

TEST_F(Gpu, MgpuLaunchesAJitCompiledKernel) {
  CUmodule module = mgpuModuleLoadJIT(const_cast<char *>(kScalePtx), 2);
  ASSERT_TRUE(module) << device->takeDeferredError();
  CUfunction scale = mgpuModuleGetFunction(module, "loom_scale");
  std::vector<double> values(300);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  double *buffer = toDevice(values);
  double factor = -2;
  long long count = 299; // the last element stays
  void *params[] = {&buffer, &factor, &count};
  mgpuLaunchKernel(scale, 3, 1, 1, 128, 1, 1, 0, mgpuStreamCreate(), params,
                   nullptr, 3);
  std::vector<double> result = toHost(buffer, values.size());
  for (size_t i = 0; i < 299; ++i)
    ASSERT_EQ(result[i], -2.0 * static_cast<double>(i));
  EXPECT_EQ(result[299], 299.0);
  device->release(buffer);
  mgpuModuleUnload(module);
}

TEST_F(Gpu, BadModuleIsReportedNotFatal) {
  device->takeDeferredError();
  char garbage[64] = "not a cubin";
  EXPECT_EQ(mgpuModuleLoad(garbage, sizeof(garbage)), nullptr);
  std::string error = device->takeDeferredError();
  EXPECT_NE(error.find("mgpuModuleLoad: cuModuleLoadData failed: "),
            std::string::npos)
      << error;
  EXPECT_EQ(device->takeDeferredError(), "");
}

TEST_F(Gpu, OneRankCollectives) {
  LocalCommunicator host;
  std::unique_ptr<DeviceCommunicator> comm = device->connect(host);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->rank(), 0);
  std::vector<double> values = {1, -2, 3.5, 4};
  double *buf = toDevice(values);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max})
    comm->allReduce(buf, 4, DType::F64, op);
  comm->broadcast(buf, 4, DType::F64, 0);
  EXPECT_EQ(toHost(buf, 4), values);
  std::string backend = comm->backend();
  EXPECT_TRUE(backend == "nccl" || backend == "cuda-local") << backend;
  // On a machine known to have NCCL (scripts/gpu-checks.sh sets this), the
  // one-rank path must be NCCL's, not the plain-copy fallback.
  if (const char *require = std::getenv("LOOM_TEST_REQUIRE_NCCL");
      require && std::string(require) == "1") {
    EXPECT_EQ(backend, "nccl");
  }
  std::cout << "one-rank device communicator: " << backend << "\n";

  // The resizing starts read `send` as it was at the start, even if the
  // compute stream overwrites it before the wait.
  double *recv = toDevice(std::vector<double>(4, 0));
  int64_t first = comm->startAllGather(buf, recv, 4, DType::F64);
  std::vector<double> later = {9, 9, 9, 9};
  device->upload(buf, later.data(), 4 * sizeof(double));
  int64_t second = comm->startAllReduce(buf, 4, DType::F64, ReduceOp::Sum);
  EXPECT_EQ(second, first + 1);
  EXPECT_EQ(comm->issued(), second);
  comm->wait(second);
  comm->wait(first); // already covered: nothing to do
  EXPECT_EQ(toHost(recv, 4), values);
  EXPECT_EQ(toHost(buf, 4), later);

  int32_t scatter[] = {5, 6};
  auto *send = toDevice(std::vector<int32_t>(scatter, scatter + 2));
  auto *part = toDevice(std::vector<int32_t>(2, 0));
  comm->wait(
      comm->startReduceScatter(send, part, 2, DType::I32, ReduceOp::Sum));
  EXPECT_EQ(toHost(part, 2), (std::vector<int32_t>{5, 6}));
  comm->drain();
  // Every collective above was timed on the GPU; what the compute stream
  // stalled for is part of it.
  DeviceCommTimes times = comm->takeTimes();
  EXPECT_GT(times.commSeconds, 0);
  EXPECT_GE(times.exposedSeconds, 0);
  EXPECT_LE(times.exposedSeconds, times.commSeconds + 1e-3);
  EXPECT_EQ(comm->takeTimes().commSeconds, 0) << "each counted once";
  for (void *p : {(void *)buf, (void *)recv, (void *)send, (void *)part})
    device->release(p);
}

namespace {

/// A kernel that waits for a flag nobody sets (the flag's buffer is zeroed).
const char kSpinPtx[] = ".version 9.0\n"
                        ".target sm_75\n"
                        ".address_size 64\n"
                        ".visible .entry loom_spin(\n"
                        "  .param .u64 loom_spin_param_0\n"
                        ")\n"
                        "{\n"
                        "  .reg .pred %p<2>;\n"
                        "  .reg .b32 %r<2>;\n"
                        "  .reg .b64 %rd<3>;\n"
                        "  ld.param.u64 %rd1, [loom_spin_param_0];\n"
                        "  cvta.to.global.u64 %rd2, %rd1;\n"
                        "$L__spin:\n"
                        "  ld.volatile.global.u32 %r1, [%rd2];\n"
                        "  setp.eq.s32 %p1, %r1, 0;\n"
                        "  @%p1 bra $L__spin;\n"
                        "  ret;\n"
                        "}\n";

} // namespace

TEST_F(Gpu, AKernelThatNeverEndsStopsTheJob) {
  // The child runs the test again from the start: CUDA does not survive a
  // fork.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setToolName("loom-run");
  auto hang = [this] {
    // The driver's teardown at exit may wait for the kernel too.
    ScopedEnv deadline("LOOM_ABORT_DEADLINE_S", "5");
    device->waits().setLimit(2);
    CUmodule module = mgpuModuleLoadJIT(const_cast<char *>(kSpinPtx), 2);
    ASSERT_TRUE(module) << device->takeDeferredError();
    CUfunction spin = mgpuModuleGetFunction(module, "loom_spin");
    void *flag = device->allocate(sizeof(uint32_t));
    void *params[] = {&flag};
    mgpuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, mgpuStreamCreate(), params,
                     nullptr, 1);
    device->synchronize();
  };
  EXPECT_EXIT(hang(), ::testing::ExitedWithCode(1),
              "loom-run: error: waiting for the compute stream has not ended "
              "after [0-9.]+ s \\(LOOM_GPU_WAIT_LIMIT_S: 2 s\\)");
}
