//===- DevicePool.h - Reuse of device memory blocks -------------*- C++ -*-===//
//
// Internal to libLoomCuda.so. Compiled code allocates every temporary
// device buffer with mgpuMemAlloc and frees it with mgpuMemFree, the same
// sizes at every step. cuMemAlloc and cuMemFree synchronise the device, so
// the pool keeps freed blocks in free lists keyed by size class and hands
// them out again, as AllocCache.cpp does for host memory: after the first
// step, training allocates nothing from the driver.
//
// Reuse without waiting is safe because all work that touches pool memory
// is ordered on the one compute stream: a block freed after the kernels
// that use it were enqueued is handed to kernels enqueued later still.
// (Collectives on the communication stream read only staging blocks, which
// go back to the pool after the compute stream has been made to wait for
// the collective; NcclCommunicator.cpp.)
//
// The pool does no device calls itself: the owner passes functions that
// allocate, free and synchronise, which is also how the tests drive it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_DEVICEPOOL_H
#define LOOM_RUNTIME_SRC_CUDA_DEVICEPOOL_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace loom::rt::cuda {

struct DevicePoolStats {
  /// Blocks obtained from the driver, and requests served from free lists.
  uint64_t systemAllocs = 0;
  uint64_t reuses = 0;
  /// Blocks handed out and not yet freed, and their bytes (size classes).
  uint64_t liveBlocks = 0;
  uint64_t liveBytes = 0;
  /// The most liveBytes has been.
  uint64_t peakLiveBytes = 0;
  /// Blocks sitting in free lists, and their bytes.
  uint64_t cachedBlocks = 0;
  uint64_t cachedBytes = 0;
  /// Times an allocation failed, the pool trimmed its free lists and
  /// retried.
  uint64_t trims = 0;
};

class DevicePool {
public:
  /// Block sizes are multiples of this, which is also the alignment the ABI
  /// promises for device buffers (cuMemAlloc aligns to at least 256).
  static constexpr size_t kGranularity = 256;

  struct Backend {
    /// A new block of exactly `bytes`; 0 when the device is out of memory.
    /// Throws Error on any other failure.
    std::function<uintptr_t(size_t bytes)> allocate;
    /// Returns a block to the driver.
    std::function<void(uintptr_t block)> release;
    /// Waits until no queued work uses any block (before blocks are
    /// returned to the driver).
    std::function<void()> synchronize;
    /// If set (LOOM_ALLOC_POISON, AllocCache.h): fills a block with 0xff
    /// bytes after the work queued so far, when it is first handed out and
    /// when it is freed, so that a read after the free computes NaNs.
    std::function<void(uintptr_t block, size_t bytes)> poison;
  };

  explicit DevicePool(Backend backend);
  ~DevicePool();
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;

  /// The size class of a request: `bytes` rounded up to kGranularity (at
  /// least one granule, so even 0 bytes gets a distinct block).
  static size_t sizeClass(size_t bytes);

  /// A block of sizeClass(bytes), from the free list if one is cached.
  /// When the device is out of memory: synchronises, returns every cached
  /// block to the driver and tries once more. Throws Error ("out of GPU
  /// memory ...") if that fails too.
  uintptr_t allocate(size_t bytes);
  /// Puts a block from allocate() in its free list. Returns false (and
  /// changes nothing) for a pointer this pool did not hand out or already
  /// took back.
  bool release(uintptr_t block);
  /// Whether `block` is a live block of this pool.
  bool owns(uintptr_t block) const;
  /// Returns every cached block to the driver (after synchronising), and
  /// the number of bytes freed.
  size_t trim();

  DevicePoolStats stats() const;

private:
  size_t trimLocked();
  /// Counts `block` (of size class `size`) as live and returns it.
  uintptr_t handOut(uintptr_t block, size_t size);

  Backend backend;
  mutable std::mutex mutex;
  std::map<size_t, std::vector<uintptr_t>> freeLists;
  std::unordered_map<uintptr_t, size_t> live;
  DevicePoolStats counters;
};

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_DEVICEPOOL_H
