//===- AllocCache.h - Introspection of the ABI allocator cache --*- C++ -*-===//
//
// Compiled code gets every temporary buffer from
// _mlir_memref_to_llvm_alloc/_free (abi.h). The runtime keeps freed blocks in
// a size-keyed free list so that a training step, which allocates the same
// sizes every time, stops calling the system allocator after the first step.
// These helpers let tests and tools observe and trim that cache.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_ALLOCCACHE_H
#define LOOM_RUNTIME_ALLOCCACHE_H

#include <cstddef>
#include <cstdint>

namespace loom::rt {

struct AllocCacheStats {
  /// Blocks obtained from the system allocator.
  uint64_t systemAllocs = 0;
  /// Requests served from the free list.
  uint64_t reuses = 0;
  /// Blocks handed out and not yet freed, their bytes (size classes), and
  /// the most those bytes have been.
  uint64_t liveBlocks = 0;
  uint64_t liveBytes = 0;
  uint64_t peakLiveBytes = 0;
  /// Blocks sitting in the free list, and their bytes.
  uint64_t cachedBlocks = 0;
  uint64_t cachedBytes = 0;
};

AllocCacheStats allocCacheStats();
/// Whether blocks are filled with 0xff bytes (a NaN in every float type)
/// when freed and when first allocated, so that compiled code reading a
/// buffer after freeing it, or before writing it, computes NaNs. Off
/// unless LOOM_ALLOC_POISON=1; for tests.
void allocCacheSetPoison(bool poison);
/// Whether LOOM_ALLOC_POISON asks for poisoning (set and not "0"); the GPU's
/// device pool poisons its blocks too.
bool allocPoisonRequested();
/// Returns every cached (free) block to the system.
void allocCacheTrim();

} // namespace loom::rt

#endif // LOOM_RUNTIME_ALLOCCACHE_H
