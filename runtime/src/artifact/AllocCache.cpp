//===- AllocCache.cpp - The ABI allocator and its block cache ---*- C++ -*-===//
//
// Implements _mlir_memref_to_llvm_alloc/aligned_alloc/free. Each block is
// preceded by a header recording its size class, so free() needs no lookup
// table; freed blocks go to a free list keyed by (size class, alignment) and
// are handed out again for the next request of that class. A training step
// requests the same sizes every time, so after the first step no call
// reaches the system allocator.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/AllocCache.h"
#include "loom/runtime/abi.h"
#include "support/Export.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace loom::rt {
namespace {

constexpr size_t kMinAlignment = 64;
constexpr uint64_t kMagic = 0x4c4f4f4d424c4b31ULL; // "LOOMBLK1"

/// Sits in the 64 bytes just below the pointer handed out.
struct BlockHeader {
  uint64_t magic;
  size_t size;      // size class (bytes usable after the header)
  size_t alignment; // alignment of the user pointer
  void *raw;        // what std::aligned_alloc returned
};
static_assert(sizeof(BlockHeader) <= kMinAlignment, "header must fit");

class AllocCache {
public:
  void *allocate(size_t size, size_t alignment) {
    alignment = roundAlignment(alignment);
    // Size classes are whole cache lines: requests for nearly equal sizes
    // share blocks and the user area always ends on a line boundary.
    size_t sizeClass =
        (size + kMinAlignment - 1) / kMinAlignment * kMinAlignment;
    if (sizeClass == 0)
      sizeClass = kMinAlignment;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = freeLists.find({sizeClass, alignment});
      if (it != freeLists.end() && !it->second.empty()) {
        void *block = it->second.back();
        it->second.pop_back();
        ++stats.reuses;
        --stats.cachedBlocks;
        stats.cachedBytes -= sizeClass;
        countLive(sizeClass);
        return block;
      }
      ++stats.systemAllocs;
      countLive(sizeClass);
    }
    // The header needs 64 bytes below the user pointer and the user pointer
    // must be aligned, so the block starts `alignment` bytes into the raw
    // allocation. aligned_alloc takes only sizes that are a multiple of the
    // alignment (C11 7.22.3.1; sanitizers refuse the others).
    size_t rawSize =
        (alignment + sizeClass + alignment - 1) / alignment * alignment;
    void *raw = std::aligned_alloc(alignment, rawSize);
    if (!raw) {
      std::fprintf(stderr,
                   "loom runtime: out of memory allocating %zu bytes for a "
                   "temporary buffer\n",
                   size);
      std::abort();
    }
    char *user = static_cast<char *>(raw) + alignment;
    auto *header = reinterpret_cast<BlockHeader *>(user - kMinAlignment);
    *header = BlockHeader{kMagic, sizeClass, alignment, raw};
    if (poison)
      std::memset(user, 0xff, sizeClass);
    return user;
  }

  void release(void *ptr) {
    if (!ptr)
      return;
    auto *header = reinterpret_cast<BlockHeader *>(static_cast<char *>(ptr) -
                                                   kMinAlignment);
    if (header->magic != kMagic) {
      // Freeing memory we did not hand out means the compiled code and the
      // runtime disagree about ownership; continuing would corrupt the heap.
      std::fprintf(stderr,
                   "loom runtime: _mlir_memref_to_llvm_free called on "
                   "%p, which the runtime did not allocate\n",
                   ptr);
      std::abort();
    }
    if (poison)
      std::memset(ptr, 0xff, header->size);
    std::lock_guard<std::mutex> lock(mutex);
    freeLists[{header->size, header->alignment}].push_back(ptr);
    --stats.liveBlocks;
    stats.liveBytes -= header->size;
    ++stats.cachedBlocks;
    stats.cachedBytes += header->size;
  }

  void trim() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[key, blocks] : freeLists) {
      for (void *ptr : blocks) {
        auto *header = reinterpret_cast<BlockHeader *>(
            static_cast<char *>(ptr) - kMinAlignment);
        header->magic = 0;
        std::free(header->raw);
      }
      blocks.clear();
    }
    freeLists.clear();
    stats.cachedBlocks = 0;
    stats.cachedBytes = 0;
  }

  AllocCacheStats snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    return stats;
  }

  /// LOOM_ALLOC_POISON=1 (AllocCache.h), read once.
  std::atomic<bool> poison = allocPoisonRequested();

private:
  /// Under the lock: a block of `sizeClass` bytes handed out.
  void countLive(size_t sizeClass) {
    ++stats.liveBlocks;
    stats.liveBytes += sizeClass;
    stats.peakLiveBytes = std::max(stats.peakLiveBytes, stats.liveBytes);
  }

  static size_t roundAlignment(size_t alignment) {
    size_t result = kMinAlignment;
    while (result < alignment)
      result *= 2;
    return result;
  }

  std::mutex mutex;
  std::map<std::pair<size_t, size_t>, std::vector<void *>> freeLists;
  AllocCacheStats stats;
};

/// Never destroyed: compiled code running in atexit handlers or other
/// static destructors may still free blocks.
AllocCache &cache() {
  static AllocCache *instance = new AllocCache();
  return *instance;
}

} // namespace

AllocCacheStats allocCacheStats() { return cache().snapshot(); }

void allocCacheSetPoison(bool poison) { cache().poison = poison; }

bool allocPoisonRequested() {
  const char *value = std::getenv("LOOM_ALLOC_POISON");
  return value && *value && std::strcmp(value, "0") != 0;
}
void allocCacheTrim() { cache().trim(); }

} // namespace loom::rt

extern "C" {

LOOM_RT_ABI_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size) {
  return loom::rt::cache().allocate(size, loom::rt::kMinAlignment);
}

LOOM_RT_ABI_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                            size_t size) {
  return loom::rt::cache().allocate(size, alignment);
}

LOOM_RT_ABI_EXPORT void _mlir_memref_to_llvm_free(void *ptr) {
  loom::rt::cache().release(ptr);
}

LOOM_RT_ABI_EXPORT void *loom_rt_arena_slice(void *arena, int64_t offset) {
  return static_cast<char *>(arena) + offset;
}

} // extern "C"
