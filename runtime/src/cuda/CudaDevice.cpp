//===- CudaDevice.cpp - The process's GPU -----------------------*- C++ -*-===//
//
// Opening: driver table, cuInit, device (local rank modulo the visible
// devices), its primary context (the one the CUDA runtime inside cuBLAS and
// NCCL also uses), two non-blocking streams (neither synchronises with the
// legacy default stream), the cuBLAS handle on the compute stream, and the
// memory pool. Also the plugin's entry point, loom_cuda_plugin_open.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "KernelProfile.h"
#include "loom/runtime/AllocCache.h"
#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/World.h"
#include "support/Clock.h"
#include "support/Export.h"
#include "support/Plugin.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace loom::rt::cuda {

namespace {

std::mutex openMutex;
std::atomic<CudaDevice *> instance{nullptr};

std::mutex deferredMutex;
std::string deferred;

bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && std::strcmp(value, "0") != 0;
}

} // namespace

const char *cublasStatusText(cublasStatus_t status) {
  return cublasGetStatusName(status);
}

void CudaDevice::deferError(const std::string &message) {
  std::lock_guard<std::mutex> lock(deferredMutex);
  if (deferred.empty()) // the first failure explains the others
    deferred = message;
}

std::string CudaDevice::takeDeferredError() {
  std::lock_guard<std::mutex> lock(deferredMutex);
  return std::exchange(deferred, std::string());
}

CudaDevice *CudaDevice::opened() { return instance.load(); }

CudaDevice &CudaDevice::open(const DeviceOptions &options) {
  std::lock_guard<std::mutex> lock(openMutex);
  if (CudaDevice *device = instance.load())
    return *device;
  // Never deleted: compiled code may free buffers from static destructors,
  // and the driver tears itself down at exit anyway.
  auto *device = new CudaDevice(loadDriver(), options);
  instance.store(device);
  return *device;
}

DeviceOptions CudaDevice::jobDefaults() {
  JobInfo job = detectJob();
  DeviceOptions options;
  options.localRank = job.localRank;
  options.localSize = job.localSize;
  return options;
}

CudaDevice &CudaDevice::forCompiledCode(const char *caller) {
  try {
    CudaDevice *device = instance.load();
    if (!device)
      device = &open(jobDefaults());
    device->bind();
    return *device;
  } catch (const std::exception &e) {
    abortJob(formatString("%s: %s", caller, e.what()));
  }
}

CudaDevice::CudaDevice(Driver driver, const DeviceOptions &options)
    : drv(driver), memory(DevicePool::Backend{
                       [this](size_t bytes) -> uintptr_t {
                         CUdeviceptr ptr = 0;
                         CUresult result = drv.cuMemAlloc(&ptr, bytes);
                         if (result == CUDA_ERROR_OUT_OF_MEMORY)
                           return 0;
                         check(result, "cuMemAlloc");
                         return static_cast<uintptr_t>(ptr);
                       },
                       [this](uintptr_t block) {
                         drv.cuMemFree(static_cast<CUdeviceptr>(block));
                       },
                       [this] {
                         // Polling, so that a collective whose peer died
                         // ends this wait with NCCL's error.
                         waitFor(compute, "the compute stream");
                         waitFor(comm, "the communication stream");
                       },
                       poisonBlocks()}) {
  waitLimitSetting = gpuWaitLimitSetting(); // a bad one before any work
  CUresult init = drv.cuInit(0);
  if (init != CUDA_SUCCESS)
    fail("cuInit failed: %s; this machine cannot run CUDA artifacts",
         errorText(&drv, init).c_str());
  check(drv.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0)
    fail("the NVIDIA driver sees no GPU (is CUDA_VISIBLE_DEVICES empty?); "
         "this machine cannot run CUDA artifacts");
  deviceOrdinal = options.localRank >= 0 ? options.localRank % count : 0;
  localSize = options.localSize;
  check(drv.cuDeviceGet(&dev, deviceOrdinal), "cuDeviceGet");
  char text[256] = {0};
  check(drv.cuDeviceGetName(text, sizeof(text) - 1, dev), "cuDeviceGetName");
  name = text;
  check(drv.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute");
  check(drv.cuDeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute");
  check(drv.cuDevicePrimaryCtxRetain(&context, dev),
        "cuDevicePrimaryCtxRetain");
  check(drv.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  check(drv.cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(drv.cuStreamCreate(&comm, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  cublasStatus_t status = cublasCreate(&blasHandle);
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cublasCreate failed: %s", cublasStatusText(status));
  status = cublasSetStream(blasHandle, compute);
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cublasSetStream failed: %s", cublasStatusText(status));
  // FP32 GEMMs in full FP32 unless asked: results must match the CPU path
  // to ~1e-3, and TF32 keeps only 10 mantissa bits of the inputs.
  status = cublasSetMathMode(blasHandle, envFlag("LOOM_CUDA_TF32")
                                             ? CUBLAS_TF32_TENSOR_OP_MATH
                                             : CUBLAS_DEFAULT_MATH);
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cublasSetMathMode failed: %s", cublasStatusText(status));
  syncEveryCall = envFlag("LOOM_CUDA_SYNC");
  // Until a communicator says otherwise (connect), a one-rank job's limit.
  WaitMonitor::Options waiting;
  waiting.limit = waitLimitSetting.value_or(kDefaultGpuWaitLimit);
  monitor = std::make_unique<WaitMonitor>(std::move(waiting));
}

std::string CudaDevice::describe() const {
  return formatString("%s (sm_%d%d), device %d of %d", name.c_str(), major,
                      minor, deviceOrdinal, count);
}

void CudaDevice::bind() {
  // One context for the whole process: a thread needs setting only once.
  thread_local CUcontext bound = nullptr;
  if (bound != context) {
    check(drv.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    bound = context;
  }
}

void CudaDevice::check(CUresult result, const char *call) const {
  cuda::check(drv, result, call);
}

std::function<void(uintptr_t, size_t)> CudaDevice::poisonBlocks() {
  if (!allocPoisonRequested())
    return nullptr;
  // On the compute stream: after the kernels that used the block, before
  // those of its next owner.
  return [this](uintptr_t block, size_t bytes) {
    checkOrAbort(drv.cuMemsetD8Async(static_cast<CUdeviceptr>(block), 0xff,
                                     bytes, compute),
                 "the device pool", "cuMemsetD8Async");
  };
}

void CudaDevice::checkOrAbort(CUresult result, const char *caller,
                              const char *call) const {
  if (result != CUDA_SUCCESS)
    abortJob(formatString("%s: %s failed: %s", caller, call,
                          errorText(&drv, result).c_str()));
}

void *CudaDevice::allocate(size_t bytes) {
  bind();
  uintptr_t block = memory.allocate(bytes);
  // Zero-filled like host buffers, so that an output an entry does not
  // write reads as 0 rather than what the block held before.
  check(drv.cuMemsetD8Async(static_cast<CUdeviceptr>(block), 0,
                            DevicePool::sizeClass(bytes), compute),
        "cuMemsetD8Async");
  return reinterpret_cast<void *>(block);
}

void CudaDevice::release(void *ptr) noexcept {
  if (ptr)
    memory.release(reinterpret_cast<uintptr_t>(ptr));
}

void CudaDevice::upload(void *device, const void *host, size_t bytes) {
  if (bytes == 0)
    return;
  bind();
  // From pageable memory the call returns once `host` has been staged,
  // which may wait for the stream.
  WaitMonitor::Wait wait(*monitor, "a copy to the GPU");
  check(drv.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(device), host,
                              bytes, compute),
        "cuMemcpyHtoDAsync");
}

void CudaDevice::download(void *host, const void *device, size_t bytes) {
  if (bytes == 0)
    return;
  bind();
  // A copy into pageable host memory returns only when it is done, waiting
  // inside the driver, where a collective whose peer died would hang it
  // for good; waiting for the stream first polls the communicators' errors
  // meanwhile (waitFor), and the copy then finds the stream idle.
  waitFor(compute, "the compute stream");
  check(drv.cuMemcpyDtoHAsync(host, reinterpret_cast<CUdeviceptr>(device),
                              bytes, compute),
        "cuMemcpyDtoHAsync");
}

CUuuid CudaDevice::uuid() const {
  CUuuid id;
  check(drv.cuDeviceGetUuid(&id, dev), "cuDeviceGetUuid");
  return id;
}

void CudaDevice::synchronize() {
  bind();
  waitFor(compute, "the compute stream");
  waitFor(comm, "the communication stream");
  if (KernelProfiler *profile = kernelProfiler(drv))
    profile->harvest();
}

void CudaDevice::waitFor(CUstream stream, const char *what) {
  WaitMonitor::Wait wait(*monitor, what);
  std::vector<AsyncErrorSource *> watched;
  {
    std::lock_guard<std::mutex> lock(mutex);
    watched = sources;
  }
  if (watched.empty()) {
    CUresult result = drv.cuStreamSynchronize(stream);
    if (result != CUDA_SUCCESS)
      fail("waiting for %s: %s", what, errorText(&drv, result).c_str());
    return;
  }
  // A collective whose peer died never completes, and cuStreamSynchronize
  // would wait for it forever; NCCL reports the failure as an asynchronous
  // error of its communicator, so poll the stream and the communicators.
  auto pause = std::chrono::microseconds(5);
  usePreciseSleeps();
  for (;;) {
    CUresult result = drv.cuStreamQuery(stream);
    if (result == CUDA_SUCCESS)
      return;
    if (result != CUDA_ERROR_NOT_READY)
      fail("waiting for %s: %s", what, errorText(&drv, result).c_str());
    for (AsyncErrorSource *source : watched)
      source->checkAsyncError();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(200));
  }
}

void CudaDevice::afterEnqueue(const char *what) {
  if (!syncEveryCall)
    return;
  try {
    synchronize();
  } catch (const std::exception &e) {
    abortJob(formatString("%s: the GPU failed (LOOM_CUDA_SYNC=1 waits after "
                          "every kernel, GEMM and collective, so this one "
                          "failed): %s",
                          what, e.what()));
  }
}

bool CudaDevice::takeHostVisibleWork() {
  bool pending = hostVisibleWrite.exchange(false);
  std::lock_guard<std::mutex> lock(mutex);
  return pending || !managed.empty();
}

void CudaDevice::addManaged(CUdeviceptr ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  managed.insert(ptr);
}

bool CudaDevice::removeManaged(CUdeviceptr ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  return managed.erase(ptr) != 0;
}

void CudaDevice::watch(AsyncErrorSource *source) {
  std::lock_guard<std::mutex> lock(mutex);
  sources.push_back(source);
}

void CudaDevice::unwatch(AsyncErrorSource *source) {
  std::lock_guard<std::mutex> lock(mutex);
  sources.erase(std::remove(sources.begin(), sources.end(), source),
                sources.end());
}

std::unique_ptr<DeviceCommunicator> CudaDevice::connect(Communicator &host) {
  monitor->setLimit(gpuWaitLimit(waitLimitSetting, host));
  bind();
  return connectDeviceCommunicator(*this, host);
}

} // namespace loom::rt::cuda

/// The plugin's entry point (src/device/Device.h). Throws Error.
extern "C" LOOM_RT_ABI_EXPORT loom::rt::Device *
loom_cuda_plugin_open(int abiVersion, const loom::rt::DeviceOptions *options) {
  loom::rt::checkPluginAbi(abiVersion, loom::rt::kPluginAbiVersion,
                           "libLoomCuda.so");
  return &loom::rt::cuda::CudaDevice::open(*options);
}
