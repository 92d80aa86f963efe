//===- DevicePool.cpp - Reuse of device memory blocks -----------*- C++ -*-===//
//
// Free lists per size class, and a map from live block to its class so that
// a free needs no header in device memory (which the host cannot write
// cheaply).
//
//===----------------------------------------------------------------------===//

#include "DevicePool.h"
#include "loom/runtime/Error.h"

#include <algorithm>

namespace loom::rt::cuda {

DevicePool::DevicePool(Backend backend) : backend(std::move(backend)) {}

DevicePool::~DevicePool() = default;

size_t DevicePool::sizeClass(size_t bytes) {
  if (bytes == 0)
    return kGranularity;
  return (bytes + kGranularity - 1) / kGranularity * kGranularity;
}

uintptr_t DevicePool::allocate(size_t bytes) {
  const size_t size = sizeClass(bytes);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = freeLists.find(size);
  if (it != freeLists.end() && !it->second.empty()) {
    uintptr_t block = it->second.back();
    it->second.pop_back();
    ++counters.reuses;
    --counters.cachedBlocks;
    counters.cachedBytes -= size;
    return handOut(block, size);
  }
  uintptr_t block = backend.allocate(size);
  if (!block && counters.cachedBlocks > 0) {
    // Cached blocks of other classes may be what the device lacks.
    ++counters.trims;
    trimLocked();
    block = backend.allocate(size);
  }
  if (!block)
    fail("out of GPU memory allocating %zu bytes (Loom holds %llu bytes in "
         "%llu live device buffers)",
         bytes, static_cast<unsigned long long>(counters.liveBytes),
         static_cast<unsigned long long>(counters.liveBlocks));
  ++counters.systemAllocs;
  if (backend.poison)
    backend.poison(block, size);
  return handOut(block, size);
}

uintptr_t DevicePool::handOut(uintptr_t block, size_t size) {
  ++counters.liveBlocks;
  counters.liveBytes += size;
  counters.peakLiveBytes = std::max(counters.peakLiveBytes, counters.liveBytes);
  live.emplace(block, size);
  return block;
}

bool DevicePool::release(uintptr_t block) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = live.find(block);
  if (it == live.end())
    return false;
  size_t size = it->second;
  live.erase(it);
  if (backend.poison)
    backend.poison(block, size);
  freeLists[size].push_back(block);
  --counters.liveBlocks;
  counters.liveBytes -= size;
  ++counters.cachedBlocks;
  counters.cachedBytes += size;
  return true;
}

bool DevicePool::owns(uintptr_t block) const {
  std::lock_guard<std::mutex> lock(mutex);
  return live.count(block) != 0;
}

size_t DevicePool::trim() {
  std::lock_guard<std::mutex> lock(mutex);
  return trimLocked();
}

size_t DevicePool::trimLocked() {
  if (counters.cachedBlocks == 0)
    return 0;
  // A cached block may still be read by work enqueued before its free.
  backend.synchronize();
  size_t freed = 0;
  for (auto &[size, blocks] : freeLists) {
    for (uintptr_t block : blocks) {
      backend.release(block);
      freed += size;
    }
    blocks.clear();
  }
  freeLists.clear();
  counters.cachedBlocks = 0;
  counters.cachedBytes = 0;
  return freed;
}

DevicePoolStats DevicePool::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counters;
}

} // namespace loom::rt::cuda
