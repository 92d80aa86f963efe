//===- CudaDevice.h - The process's GPU -------------------------*- C++ -*-===//
//
// Internal to libLoomCuda.so. One GPU per process, opened once and never
// closed: its primary context, the compute stream (all kernels, GEMMs,
// copies), the communication stream (collectives), the cuBLAS handle and
// the device memory pool. The mgpu* and loom_rt_gpu_* services of compiled
// code (Mgpu.cpp, CublasGemm.cpp) and the runtime's Device interface
// (src/device/Device.h) all act on it.
//
// Errors: runtime-side calls (the Device interface) throw Error; services
// called from compiled code cannot throw through it, so they stop the job
// with abortJob and a message naming the service, the driver call and the
// CUDA error. Kernels fail asynchronously: their errors surface at the next
// synchronisation, or at once with LOOM_CUDA_SYNC=1, which waits after
// every kernel, GEMM and collective so that the message names the culprit.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_CUDADEVICE_H
#define LOOM_RUNTIME_SRC_CUDA_CUDADEVICE_H

#include "CudaDriver.h"
#include "DevicePool.h"
#include "WaitMonitor.h"
#include "device/Device.h"

#include <cublas_v2.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace loom::rt::cuda {

/// Something whose failures happen in the background (NCCL), checked while
/// the host waits for the device, so that a wait on a collective that will
/// never finish ends with an error instead of hanging.
class AsyncErrorSource {
public:
  virtual ~AsyncErrorSource() = default;
  /// Throws Error if the source has failed.
  virtual void checkAsyncError() = 0;
};

class CudaDevice final : public Device {
public:
  /// Opens the GPU `options` select (once per process; later calls return
  /// it, whatever their options). Throws Error, not remembering it.
  static CudaDevice &open(const DeviceOptions &options);
  /// The opened device, or nullptr.
  static CudaDevice *opened();
  /// The device for a service of compiled code: opened if needed with the
  /// job's defaults (DeviceOptions from the environment); if that fails,
  /// stops the job with a message naming `caller`.
  static CudaDevice &forCompiledCode(const char *caller);
  /// The options a job opens its GPU with when the runtime has not: this
  /// rank's local rank and the ranks on this machine, from the launcher's
  /// environment.
  static DeviceOptions jobDefaults();

  // Device.
  const char *kind() const override { return "cuda"; }
  std::string describe() const override;
  int computeMajor() const override { return major; }
  int computeMinor() const override { return minor; }
  void *allocate(size_t bytes) override;
  void release(void *ptr) noexcept override;
  void upload(void *device, const void *host, size_t bytes) override;
  void download(void *host, const void *device, size_t bytes) override;
  void synchronize() override;
  uint64_t peakBytesInUse() const override {
    return memory.stats().peakLiveBytes;
  }
  std::string takeDeferredError() override;
  std::unique_ptr<DeviceCommunicator> connect(Communicator &host) override;

  const Driver &driver() const { return drv; }
  CUstream computeStream() const { return compute; }
  CUstream commStream() const { return comm; }
  cublasHandle_t blas() const { return blasHandle; }
  DevicePool &pool() { return memory; }
  int ordinal() const { return deviceOrdinal; }
  /// The GPU's UUID (unique across machines). Throws Error.
  CUuuid uuid() const;
  int deviceCount() const { return count; }
  /// Ranks sharing this machine, as the launcher announced (0: unknown).
  int localRanks() const { return localSize; }

  /// Makes the device's context current on the calling thread (cheap when
  /// it already is).
  void bind();
  /// Throws Error("<call> failed: <CUDA error>").
  void check(CUresult result, const char *call) const;
  /// For services of compiled code: stops the job with "<caller>: <call>
  /// failed: <CUDA error>" unless `result` is success.
  void checkOrAbort(CUresult result, const char *caller,
                    const char *call) const;
  /// Blocks until `stream` is idle, checking the registered asynchronous
  /// error sources meanwhile. Throws Error.
  void waitFor(CUstream stream, const char *what);
  /// Every wait for the GPU holds a WaitMonitor::Wait on this, so that one
  /// that never ends stops the job (WaitMonitor.h).
  WaitMonitor &waits() { return *monitor; }

  /// LOOM_CUDA_SYNC=1: wait after every piece of work compiled code
  /// enqueues.
  bool synchronousMode() const { return syncEveryCall; }
  /// After compiled code enqueued `what`: in synchronous mode waits for it
  /// and stops the job if it failed.
  void afterEnqueue(const char *what);

  /// The host may read memory the compute stream writes (a copy into host
  /// memory, managed memory), so the next stream synchronisation requested
  /// by compiled code must really wait (Mgpu.cpp).
  void noteHostVisibleWrite() { hostVisibleWrite = true; }
  bool takeHostVisibleWork();
  void addManaged(CUdeviceptr ptr);
  bool removeManaged(CUdeviceptr ptr);

  void watch(AsyncErrorSource *source);
  void unwatch(AsyncErrorSource *source);

  /// A failure where nothing can be thrown or stopped (an artifact's global
  /// constructor), kept for takeDeferredError. Works without a device.
  static void deferError(const std::string &message);

private:
  CudaDevice(Driver driver, const DeviceOptions &options);
  void checkAsyncErrors();
  /// The pool's poisoning under LOOM_ALLOC_POISON, else empty.
  std::function<void(uintptr_t, size_t)> poisonBlocks();

  Driver drv;
  CUdevice dev = 0;
  CUcontext context = nullptr;
  CUstream compute = nullptr, comm = nullptr;
  cublasHandle_t blasHandle = nullptr;
  std::string name;
  int major = 0, minor = 0;
  int deviceOrdinal = 0, count = 0, localSize = 0;
  bool syncEveryCall = false;
  DevicePool memory;
  std::atomic<bool> hostVisibleWrite{false};
  std::mutex mutex; // managed, sources
  std::set<CUdeviceptr> managed;
  std::vector<AsyncErrorSource *> sources;
  std::optional<double> waitLimitSetting;
  std::unique_ptr<WaitMonitor> monitor;
};

/// The device communicator over `host` (NcclCommunicator.cpp).
std::unique_ptr<DeviceCommunicator>
connectDeviceCommunicator(CudaDevice &device, Communicator &host);

/// "CUBLAS_STATUS_EXECUTION_FAILED".
const char *cublasStatusText(cublasStatus_t status);

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_CUDADEVICE_H
