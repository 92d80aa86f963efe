//===- Device.h - The accelerator interface of the runtime ------*- C++ -*-===//
//
// Internal to the runtime, shared with its device plugins. The core runtime
// (Artifact, the loom_rt_* collectives) reaches a GPU only through these
// interfaces, which libLoomCuda.so implements (src/cuda/), so that the core
// links no GPU library and includes no GPU header.
//
// The execution model (docs/gpu.md): one compute stream per process, on
// which compiled code enqueues every kernel, copy and GEMM, and on which the
// runtime enqueues its uploads and downloads; one communication stream on
// which collectives run, ordered against the compute stream with events.
// The host blocks only in Device::synchronize (before it reads results) and
// never in a collective.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_DEVICE_DEVICE_H
#define LOOM_RUNTIME_SRC_DEVICE_DEVICE_H

#include "loom/runtime/Communicator.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace loom::rt {

/// Collectives on device buffers, enqueued on the communication stream
/// behind the compute work issued before them. The Communicator methods are
/// the synchronous loom_rt_* forms: the compute work issued after them waits
/// for them, the host does not. The start* forms are the asynchronous ones:
/// the compute stream waits only at wait(ticket), so the collective overlaps
/// with the kernels issued in between. Every rank issues the same calls in
/// the same order. Throws Error on a backend failure.
/// GPU time of collectives (CollectiveTimer.h): their own, and the part
/// the compute stream stalled for.
struct DeviceCommTimes {
  double commSeconds = 0;
  double exposedSeconds = 0;
};

class DeviceCommunicator : public Communicator {
public:
  /// Each returns a ticket (1, 2, ... in issue order, shared by all kinds).
  virtual int64_t startAllReduce(void *buf, int64_t count, DType dtype,
                                 ReduceOp op) = 0;
  /// The resizing starts read a copy of `send` taken on the compute stream
  /// at the start (compiled code may overwrite `send` at once, abi.h).
  virtual int64_t startReduceScatter(const void *send, void *recv,
                                     int64_t count, DType dtype,
                                     ReduceOp op) = 0;
  virtual int64_t startAllGather(const void *send, void *recv, int64_t count,
                                 DType dtype) = 0;
  virtual int64_t startBroadcast(void *buf, int64_t count, DType dtype,
                                 int root) = 0;
  /// Makes the compute stream wait for collective `ticket` (and so for every
  /// earlier one); returns at once.
  virtual void wait(int64_t ticket) = 0;
  /// Tickets handed out so far.
  virtual int64_t issued() const = 0;
  /// Waits for every collective issued so far and blocks the host until the
  /// device is idle.
  virtual void drain() = 0;
  /// The GPU time of the collectives finished since the last call (all of
  /// them after a drain()).
  virtual DeviceCommTimes takeTimes() = 0;
};

/// Which GPU a process opens.
struct DeviceOptions {
  /// This rank's index among the ranks on its machine (-1: unknown, use
  /// device 0) and their number (0: unknown); see JobInfo.
  int localRank = -1;
  int localSize = 0;
};

/// One GPU, opened once per process and never closed.
class Device {
public:
  virtual ~Device();

  /// "cuda".
  virtual const char *kind() const = 0;
  /// e.g. "NVIDIA H100 80GB HBM3 (sm_90), device 0 of 8".
  virtual std::string describe() const = 0;
  /// The compute capability, e.g. 9 and 0 for an H100.
  virtual int computeMajor() const = 0;
  virtual int computeMinor() const = 0;

  /// `bytes` of zero-filled device memory, 256-byte aligned (a distinct
  /// non-null pointer even for 0 bytes). Throws Error.
  virtual void *allocate(size_t bytes) = 0;
  /// Returns `ptr` (from allocate) for reuse by later compute-stream work.
  virtual void release(void *ptr) noexcept = 0;

  /// Enqueues host -> device on the compute stream; `host` may be reused as
  /// soon as this returns. Throws Error.
  virtual void upload(void *device, const void *host, size_t bytes) = 0;
  /// Enqueues device -> host on the compute stream; `host` holds the data
  /// only after synchronize(). Throws Error.
  virtual void download(void *host, const void *device, size_t bytes) = 0;
  /// Blocks until everything enqueued so far (kernels, copies, collectives)
  /// is done. Throws Error naming the failure, which may come from any
  /// earlier asynchronous work.
  virtual void synchronize() = 0;

  /// The most device memory the runtime's pool has had in use at once
  /// (parameters, optimizer state and temporaries), in bytes.
  virtual uint64_t peakBytesInUse() const = 0;

  /// A failure of a call made where nothing could be thrown or stopped (the
  /// module load in an artifact's global constructor), "" if none; clears it.
  virtual std::string takeDeferredError() = 0;

  /// The communicator for the collectives of compiled code. `host` is the
  /// job's communicator (MPI or local); with several ranks this is a
  /// collective call over `host` (NCCL's id travels through it), and any
  /// rank's failure throws on every rank (agreeOnFailure). With one rank the
  /// backend is chosen lazily, at the first collective.
  virtual std::unique_ptr<DeviceCommunicator> connect(Communicator &host) = 0;
};

/// The entry point libLoomCuda.so exports: opens (once) the GPU `options`
/// select and returns it. Throws Error, e.g. "no NVIDIA driver (...); this
/// machine cannot run CUDA artifacts".
using OpenDeviceFn = Device *(*)(int abiVersion, const DeviceOptions *options);
constexpr const char *kOpenCudaDeviceSymbol = "loom_cuda_plugin_open";

/// The opened CUDA device (loading libLoomCuda.so on first use). Throws
/// Error.
Device &openCudaDevice();

/// The device of the cuda artifacts currently loaded, or nullptr when none
/// is; Artifact::load and ~Artifact count the artifacts in and out. While
/// one is loaded, ScopedCurrentCommunicator connects a device communicator.
Device *activeDevice();
void retainActiveDevice(Device &device);
void releaseActiveDevice();

/// The device whose entry point the calling thread is running (Entry::call
/// of a cuda artifact), or nullptr: the loom_rt_* collectives called from
/// there take device buffers, those called by anything else host buffers.
Device *deviceOfCall();

/// Marks the calling thread as running an entry point on `device` for its
/// lifetime.
class DeviceCallScope {
public:
  explicit DeviceCallScope(Device *device);
  ~DeviceCallScope();
  DeviceCallScope(const DeviceCallScope &) = delete;
  DeviceCallScope &operator=(const DeviceCallScope &) = delete;

private:
  Device *previous;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_SRC_DEVICE_DEVICE_H
