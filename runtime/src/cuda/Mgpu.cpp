//===- Mgpu.cpp - The GPU runtime calls of MLIR's lowering ------*- C++ -*-===//
//
// A cuda artifact's host code is MLIR's gpu dialect lowered by gpu-to-llvm
// and translated to LLVM IR (#gpu.select_object): it calls the mgpu*
// functions below, which upstream MLIR implements in
// mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp (a library Debian does
// not ship). The signatures are those MLIR 22.1's lowering declares (checked
// against mlir-translate's output):
//   ptr  mgpuModuleLoad(ptr data, i64 size)       in a global constructor
//   ptr  mgpuModuleLoadJIT(ptr ptx, i32 optLevel) (PTX objects)
//   void mgpuModuleUnload(ptr module)             in a global destructor
//   ptr  mgpuModuleGetFunction(ptr module, ptr name)
//   void mgpuLaunchKernel(ptr fn, i64 gx, gy, gz, bx, by, bz, i32 smem,
//                         ptr stream, ptr params, ptr extra, i64 nparams)
//   void mgpuLaunchClusterKernel(ptr fn, i64 cx, cy, cz, gx, gy, gz, bx, by,
//                                bz, i32 smem, ptr stream, ptr params,
//                                ptr extra)
//   ptr  mgpuStreamCreate(), void mgpuStreamDestroy/Synchronize(ptr)
//   void mgpuStreamWaitEvent(ptr stream, ptr event)
//   ptr  mgpuEventCreate(), void mgpuEventDestroy/Synchronize(ptr)
//   void mgpuEventRecord(ptr event, ptr stream)
//   ptr  mgpuMemAlloc(i64 bytes, ptr stream, i8 hostShared)
//   void mgpuMemFree(ptr, ptr stream)
//   void mgpuMemcpy(ptr dst, ptr src, i64 bytes, ptr stream)
//   void mgpuMemset32(ptr dst, i32 value, i64 count, ptr stream)
//   void mgpuMemset16(ptr dst, i16 value, i64 count, ptr stream)
//   void mgpuSetDefaultDevice(i32 device)
//
// What they mean in Loom (docs/gpu.md):
// - Streams. There is one compute stream per process, and mgpuStreamCreate
//   returns it: everything compiled code enqueues, the runtime's GEMMs,
//   copies and the ordering events of the collectives are ordered on it.
//   mgpuStreamDestroy of it does nothing.
// - Synchronisation. The lowering synchronises the host at every `gpu.wait`
//   and after every launch that has no async token, which compiled code has
//   at every call of a runtime service; blocking there would idle the GPU
//   while the host enqueues the next kernel, dozens of times per step. On
//   the one stream those waits order nothing that stream order does not
//   already order, and the host reads device results only through the
//   runtime, which synchronises before it does (Artifact.h). So
//   mgpuStreamSynchronize and mgpuEventSynchronize of compute work wait
//   only when the host could observe the difference: after a copy into
//   host memory, while managed (host-shared) memory is allocated, or always
//   under LOOM_CUDA_SYNC=1.
// - Memory. mgpuMemAlloc serves device buffers from the pool (DevicePool.h):
//   training performs no cuMemAlloc after its first step. Host-shared
//   allocations are managed memory, outside the pool.
// - Device. The runtime picks the GPU (this rank's local rank modulo the
//   visible GPUs) and owns its context; mgpuSetDefaultDevice is accepted and
//   ignored.
// - Errors. No exception may cross compiled code: a failing call stops the
//   job with one line naming the service, the driver call and the CUDA
//   error (abortJob). The module loads run inside dlopen, so a failure
//   there is kept (CudaDevice::deferError) and Artifact::load reports it.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "KernelProfile.h"
#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "support/Export.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unordered_map>

using namespace loom::rt;
using namespace loom::rt::cuda;

namespace {

/// Kernel names, for messages about launches.
std::mutex namesMutex;
std::unordered_map<CUfunction, std::string> kernelNames;

std::string kernelName(CUfunction function) {
  std::lock_guard<std::mutex> lock(namesMutex);
  auto it = kernelNames.find(function);
  return it == kernelNames.end() ? "?" : it->second;
}

/// The device for a module load, or nullptr after deferring the failure.
CudaDevice *deviceForLoad(const char *caller) {
  if (CudaDevice *device = CudaDevice::opened()) {
    try {
      device->bind();
      return device;
    } catch (const std::exception &e) {
      CudaDevice::deferError(formatString("%s: %s", caller, e.what()));
      return nullptr;
    }
  }
  // Only when the artifact was loaded without the runtime opening the GPU
  // first (e.g. by hand through ctypes).
  try {
    return &CudaDevice::open(CudaDevice::jobDefaults());
  } catch (const std::exception &e) {
    CudaDevice::deferError(formatString("%s: %s", caller, e.what()));
    return nullptr;
  }
}

void noteLoadFailure(CudaDevice &device, CUresult result, const char *caller,
                     const char *call, const std::string &log) {
  std::string message =
      formatString("%s: %s failed: %s", caller, call,
                   errorText(&device.driver(), result).c_str());
  if (result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
      result == CUDA_ERROR_INVALID_PTX ||
      result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    message += formatString(" (the GPU is sm_%d%d; is the artifact compiled "
                            "for it?)",
                            device.computeMajor(), device.computeMinor());
  if (!log.empty())
    message += "\n" + log;
  CudaDevice::deferError(message);
}

unsigned dimension(intptr_t value, const char *caller, const char *what,
                   CUfunction function) {
  if (value <= 0 || static_cast<uintmax_t>(value) > UINT_MAX)
    abortJob(formatString("%s: kernel '%s': %s = %lld is not a valid launch "
                          "dimension",
                          caller, kernelName(function).c_str(), what,
                          static_cast<long long>(value)));
  return static_cast<unsigned>(value);
}

/// Allows `smem` bytes of dynamic shared memory per block: by default a
/// kernel gets 48 KiB less its static shared memory, so any dynamic size
/// may need the attribute (as MLIR's own wrappers set it).
void allowSharedMemory(CudaDevice &device, CUfunction function, int32_t smem,
                       const char *caller) {
  if (smem <= 0)
    return;
  device.checkOrAbort(
      device.driver().cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
      caller, "cuFuncSetAttribute");
}

void launchFailed(CudaDevice &device, CUresult result, const char *caller,
                  CUfunction function, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, int32_t smem) {
  abortJob(formatString("%s: kernel '%s' (grid %ux%ux%u, block %ux%ux%u, "
                        "%d bytes of dynamic shared memory): cuLaunchKernel "
                        "failed: %s",
                        caller, kernelName(function).c_str(), gx, gy, gz, bx,
                        by, bz, smem,
                        errorText(&device.driver(), result).c_str()));
}

/// Waits for the compute stream for compiled code; see the file comment.
void hostWait(CudaDevice &device, const char *caller) {
  if (!device.synchronousMode() && !device.takeHostVisibleWork())
    return;
  try {
    device.waitFor(device.computeStream(), "the compute stream");
  } catch (const std::exception &e) {
    abortJob(formatString("%s: %s", caller, e.what()));
  }
}

} // namespace

extern "C" {

LOOM_RT_ABI_EXPORT CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  (void)gpuBlobSize; // a cubin carries its size in its ELF header
  CudaDevice *device = deviceForLoad("mgpuModuleLoad");
  if (!device)
    return nullptr;
  CUmodule module = nullptr;
  CUresult result = device->driver().cuModuleLoadData(&module, data);
  if (result != CUDA_SUCCESS)
    noteLoadFailure(*device, result, "mgpuModuleLoad", "cuModuleLoadData", "");
  return module;
}

LOOM_RT_ABI_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  CudaDevice *device = deviceForLoad("mgpuModuleLoadJIT");
  if (!device)
    return nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  CUmodule module = nullptr;
  CUresult result =
      device->driver().cuModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS)
    noteLoadFailure(*device, result, "mgpuModuleLoadJIT", "cuModuleLoadDataEx",
                    log);
  return module;
}

LOOM_RT_ABI_EXPORT void mgpuModuleUnload(CUmodule module) {
  CudaDevice *device = CudaDevice::opened();
  if (!module || !device)
    return;
  // Runs in the artifact's global destructor, possibly at process exit after
  // the driver has shut down: nothing to report then. The module belongs
  // to the device's context, which this thread may not have current.
  try {
    device->bind();
  } catch (const std::exception &) {
    return;
  }
  CUresult result = device->driver().cuModuleUnload(module);
  if (result != CUDA_SUCCESS && result != CUDA_ERROR_DEINITIALIZED)
    std::fprintf(stderr, "%s: warning: mgpuModuleUnload: %s\n", toolName(),
                 errorText(&device->driver(), result).c_str());
}

LOOM_RT_ABI_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module,
                                                    const char *name) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuModuleGetFunction");
  if (!module)
    abortJob(formatString("mgpuModuleGetFunction: kernel '%s': its module "
                          "was not loaded",
                          name));
  CUfunction function = nullptr;
  CUresult result =
      device.driver().cuModuleGetFunction(&function, module, name);
  if (result != CUDA_SUCCESS)
    abortJob(formatString("mgpuModuleGetFunction: kernel '%s': "
                          "cuModuleGetFunction failed: %s",
                          name, errorText(&device.driver(), result).c_str()));
  std::lock_guard<std::mutex> lock(namesMutex);
  kernelNames.try_emplace(function, name);
  return function;
}

LOOM_RT_ABI_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                         intptr_t gridY, intptr_t gridZ,
                                         intptr_t blockX, intptr_t blockY,
                                         intptr_t blockZ, int32_t smem,
                                         CUstream stream, void **params,
                                         void **extra, size_t paramsCount) {
  (void)paramsCount; // the kernel's signature fixes it
  const char *caller = "mgpuLaunchKernel";
  CudaDevice &device = CudaDevice::forCompiledCode(caller);
  unsigned gx = dimension(gridX, caller, "grid x", function),
           gy = dimension(gridY, caller, "grid y", function),
           gz = dimension(gridZ, caller, "grid z", function),
           bx = dimension(blockX, caller, "block x", function),
           by = dimension(blockY, caller, "block y", function),
           bz = dimension(blockZ, caller, "block z", function);
  allowSharedMemory(device, function, smem, caller);
  KernelProfiler *profile = kernelProfiler(device.driver());
  CUevent start = profile ? profile->begin(stream) : nullptr;
  CUresult result = device.driver().cuLaunchKernel(
      function, gx, gy, gz, bx, by, bz, static_cast<unsigned>(smem), stream,
      params, extra);
  if (result != CUDA_SUCCESS)
    launchFailed(device, result, caller, function, gx, gy, gz, bx, by, bz,
                 smem);
  if (profile)
    profile->end(
        stream, start, kernelName(function),
        formatString("grid %ux%ux%u block %ux%ux%u", gx, gy, gz, bx, by, bz));
  if (device.synchronousMode())
    device.afterEnqueue(
        formatString("kernel '%s'", kernelName(function).c_str()).c_str());
}

LOOM_RT_ABI_EXPORT void
mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX,
                        intptr_t clusterY, intptr_t clusterZ, intptr_t gridX,
                        intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                        intptr_t blockY, intptr_t blockZ, int32_t smem,
                        CUstream stream, void **params, void **extra) {
  const char *caller = "mgpuLaunchClusterKernel";
  CudaDevice &device = CudaDevice::forCompiledCode(caller);
  CUlaunchConfig config = {};
  config.gridDimX = dimension(gridX, caller, "grid x", function);
  config.gridDimY = dimension(gridY, caller, "grid y", function);
  config.gridDimZ = dimension(gridZ, caller, "grid z", function);
  config.blockDimX = dimension(blockX, caller, "block x", function);
  config.blockDimY = dimension(blockY, caller, "block y", function);
  config.blockDimZ = dimension(blockZ, caller, "block z", function);
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = stream;
  CUlaunchAttribute cluster = {};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x =
      dimension(clusterX, caller, "cluster x", function);
  cluster.value.clusterDim.y =
      dimension(clusterY, caller, "cluster y", function);
  cluster.value.clusterDim.z =
      dimension(clusterZ, caller, "cluster z", function);
  config.attrs = &cluster;
  config.numAttrs = 1;
  // Clusters of more than 8 blocks are "non-portable" and must be allowed.
  if (uint64_t(cluster.value.clusterDim.x) * cluster.value.clusterDim.y *
          cluster.value.clusterDim.z >
      8)
    device.checkOrAbort(
        device.driver().cuFuncSetAttribute(
            function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
        caller, "cuFuncSetAttribute");
  allowSharedMemory(device, function, smem, caller);
  CUresult result =
      device.driver().cuLaunchKernelEx(&config, function, params, extra);
  if (result != CUDA_SUCCESS)
    launchFailed(device, result, caller, function, config.gridDimX,
                 config.gridDimY, config.gridDimZ, config.blockDimX,
                 config.blockDimY, config.blockDimZ, smem);
  if (device.synchronousMode())
    device.afterEnqueue(
        formatString("kernel '%s'", kernelName(function).c_str()).c_str());
}

LOOM_RT_ABI_EXPORT CUstream mgpuStreamCreate() {
  return CudaDevice::forCompiledCode("mgpuStreamCreate").computeStream();
}

LOOM_RT_ABI_EXPORT void mgpuStreamDestroy(CUstream stream) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuStreamDestroy");
  if (stream && stream != device.computeStream())
    device.checkOrAbort(device.driver().cuStreamDestroy(stream),
                        "mgpuStreamDestroy", "cuStreamDestroy");
}

LOOM_RT_ABI_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuStreamSynchronize");
  if (stream == device.computeStream()) {
    hostWait(device, "mgpuStreamSynchronize");
    return;
  }
  WaitMonitor::Wait wait(device.waits(), "a stream of compiled code");
  device.checkOrAbort(device.driver().cuStreamSynchronize(stream),
                      "mgpuStreamSynchronize", "cuStreamSynchronize");
}

LOOM_RT_ABI_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuStreamWaitEvent");
  device.checkOrAbort(device.driver().cuStreamWaitEvent(stream, event, 0),
                      "mgpuStreamWaitEvent", "cuStreamWaitEvent");
}

LOOM_RT_ABI_EXPORT CUevent mgpuEventCreate() {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuEventCreate");
  CUevent event = nullptr;
  device.checkOrAbort(
      device.driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
      "mgpuEventCreate", "cuEventCreate");
  return event;
}

LOOM_RT_ABI_EXPORT void mgpuEventDestroy(CUevent event) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuEventDestroy");
  device.checkOrAbort(device.driver().cuEventDestroy(event), "mgpuEventDestroy",
                      "cuEventDestroy");
}

LOOM_RT_ABI_EXPORT void mgpuEventSynchronize(CUevent event) {
  // Events of compiled code mark points of the compute stream (the only
  // stream it has), so the same rule as for the stream applies.
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuEventSynchronize");
  if (!device.synchronousMode() && !device.takeHostVisibleWork())
    return;
  WaitMonitor::Wait wait(device.waits(), "an event of compiled code");
  device.checkOrAbort(device.driver().cuEventSynchronize(event),
                      "mgpuEventSynchronize", "cuEventSynchronize");
}

LOOM_RT_ABI_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuEventRecord");
  device.checkOrAbort(device.driver().cuEventRecord(event, stream),
                      "mgpuEventRecord", "cuEventRecord");
}

LOOM_RT_ABI_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                                      bool isHostShared) {
  (void)stream; // every stream is the compute stream
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuMemAlloc");
  if (isHostShared) {
    CUdeviceptr ptr = 0;
    device.checkOrAbort(
        device.driver().cuMemAllocManaged(&ptr, sizeBytes ? sizeBytes : 1,
                                          CU_MEM_ATTACH_GLOBAL),
        "mgpuMemAlloc", "cuMemAllocManaged");
    device.addManaged(ptr);
    return reinterpret_cast<void *>(ptr);
  }
  try {
    return reinterpret_cast<void *>(device.pool().allocate(sizeBytes));
  } catch (const std::exception &e) {
    abortJob(formatString("mgpuMemAlloc: %s", e.what()));
  }
}

LOOM_RT_ABI_EXPORT void mgpuMemFree(void *ptr, CUstream stream) {
  (void)stream;
  if (!ptr)
    return;
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuMemFree");
  auto block = reinterpret_cast<uintptr_t>(ptr);
  if (device.pool().release(block))
    return;
  if (device.removeManaged(static_cast<CUdeviceptr>(block))) {
    // Freeing managed memory that queued kernels still use is undefined,
    // and cuMemFree waits for the whole device: wait for both streams
    // first, polling, so that a collective whose peer died cannot hang it.
    try {
      device.waitFor(device.computeStream(), "the compute stream");
      device.waitFor(device.commStream(), "the communication stream");
    } catch (const std::exception &e) {
      abortJob(formatString("mgpuMemFree: %s", e.what()));
    }
    WaitMonitor::Wait wait(device.waits(), "the GPU (cuMemFree)");
    device.checkOrAbort(
        device.driver().cuMemFree(static_cast<CUdeviceptr>(block)),
        "mgpuMemFree", "cuMemFree");
    return;
  }
  // Freeing what the runtime did not hand out means compiled code and the
  // runtime disagree about ownership; going on would corrupt the pool.
  abortJob(formatString("mgpuMemFree: %p was not allocated by mgpuMemAlloc "
                        "(or was freed twice)",
                        ptr));
}

LOOM_RT_ABI_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                   CUstream stream) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuMemcpy");
  if (sizeBytes == 0)
    return;
  const Driver &driver = device.driver();
  device.checkOrAbort(driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                           reinterpret_cast<CUdeviceptr>(src),
                                           sizeBytes, stream),
                      "mgpuMemcpy", "cuMemcpyAsync");
  // A copy into host memory (the driver does not know the pointer, or
  // knows it as host memory) is something the host may read after a wait.
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  if (driver.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   reinterpret_cast<CUdeviceptr>(dst)) !=
          CUDA_SUCCESS ||
      type == CU_MEMORYTYPE_HOST)
    device.noteHostVisibleWrite();
  device.afterEnqueue("mgpuMemcpy");
}

LOOM_RT_ABI_EXPORT void mgpuMemset32(void *dst, unsigned int value,
                                     size_t count, CUstream stream) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuMemset32");
  device.checkOrAbort(
      device.driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst),
                                       value, count, stream),
      "mgpuMemset32", "cuMemsetD32Async");
  device.afterEnqueue("mgpuMemset32");
}

LOOM_RT_ABI_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                     size_t count, CUstream stream) {
  CudaDevice &device = CudaDevice::forCompiledCode("mgpuMemset16");
  device.checkOrAbort(
      device.driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst),
                                       value, count, stream),
      "mgpuMemset16", "cuMemsetD16Async");
  device.afterEnqueue("mgpuMemset16");
}

LOOM_RT_ABI_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  (void)device; // the runtime chose this rank's GPU before loading the code
}

} // extern "C"
