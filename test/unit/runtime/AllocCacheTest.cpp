//===- AllocCacheTest.cpp - Tests of the ABI allocator cache ----*- C++ -*-===//
//
// The steady state of a training step must not reach the system allocator.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/AllocCache.h"
#include "TestUtil.h"
#include "loom/runtime/abi.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

using namespace loom::rt;

namespace {

/// What one step of compiled code might do: nested temporaries of mixed sizes.
void fakeStep() {
  void *a = _mlir_memref_to_llvm_alloc(100);
  void *b = _mlir_memref_to_llvm_alloc(4096);
  void *c = _mlir_memref_to_llvm_aligned_alloc(64, 1 << 20);
  void *d = _mlir_memref_to_llvm_alloc(100); // same size while `a` is live
  std::memset(c, 1, 1 << 20);
  _mlir_memref_to_llvm_free(a);
  void *e = _mlir_memref_to_llvm_alloc(24);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(d);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(e);
}

} // namespace

TEST(AllocCache, SteadyStateDoesNotAllocate) {
  fakeStep();
  AllocCacheStats before = allocCacheStats();
  for (int i = 0; i < 100; ++i)
    fakeStep();
  AllocCacheStats after = allocCacheStats();
  EXPECT_EQ(after.systemAllocs, before.systemAllocs);
  EXPECT_EQ(after.reuses - before.reuses, 100u * 5);
  EXPECT_EQ(after.liveBlocks, before.liveBlocks);
}

TEST(AllocCache, ReusesTheFreedBlock) {
  void *p = _mlir_memref_to_llvm_alloc(777);
  _mlir_memref_to_llvm_free(p);
  void *q = _mlir_memref_to_llvm_alloc(777);
  EXPECT_EQ(p, q);
  _mlir_memref_to_llvm_free(q);
}

TEST(AllocCache, CountsPeakBytesInUse) {
  AllocCacheStats before = allocCacheStats();
  void *a = _mlir_memref_to_llvm_alloc(1000); // a 1024-byte class
  void *b = _mlir_memref_to_llvm_alloc(64);
  _mlir_memref_to_llvm_free(a);
  void *c = _mlir_memref_to_llvm_alloc(128);
  AllocCacheStats during = allocCacheStats();
  EXPECT_EQ(during.liveBytes - before.liveBytes, 64u + 128u);
  // The most at once was a and b together.
  EXPECT_EQ(during.peakLiveBytes,
            std::max(before.peakLiveBytes, before.liveBytes + 1024 + 64));
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
  EXPECT_EQ(allocCacheStats().liveBytes, before.liveBytes);
}

TEST(AllocCache, PoisonFillsFreedAndFreshBlocks) {
  allocCacheSetPoison(true);
  auto allNaNBytes = [](const void *p, size_t n) {
    const auto *bytes = static_cast<const unsigned char *>(p);
    return std::all_of(bytes, bytes + n,
                       [](unsigned char x) { return x == 0xff; });
  };
  // A size no other test uses, so the first block is fresh.
  auto *fresh = static_cast<float *>(_mlir_memref_to_llvm_alloc(4 * 1111));
  EXPECT_TRUE(allNaNBytes(fresh, 4 * 1111));
  EXPECT_TRUE(std::isnan(fresh[0]));
  std::memset(fresh, 0, 4 * 1111);
  _mlir_memref_to_llvm_free(fresh);
  // Still the cache's memory: what compiled code would read after a free.
  EXPECT_TRUE(allNaNBytes(fresh, 4 * 1111));
  allocCacheSetPoison(false);
  void *again = _mlir_memref_to_llvm_alloc(4 * 1111);
  EXPECT_EQ(again, static_cast<void *>(fresh));
  std::memset(again, 0, 4 * 1111);
  _mlir_memref_to_llvm_free(again);
  EXPECT_FALSE(allNaNBytes(again, 4 * 1111)); // off again: left as it was
}

TEST(AllocCache, BlocksAreAligned) {
  for (size_t size : {0, 1, 63, 64, 65, 1000, 100000}) {
    void *p = _mlir_memref_to_llvm_alloc(size);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << size;
    _mlir_memref_to_llvm_free(p);
  }
  for (size_t alignment : {8, 16, 128, 256, 4096}) {
    void *p = _mlir_memref_to_llvm_aligned_alloc(alignment, 300);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << alignment;
    std::memset(p, 0, 300);
    _mlir_memref_to_llvm_free(p);
  }
  _mlir_memref_to_llvm_free(nullptr); // a no-op, as free(NULL)
}

TEST(AllocCache, IsThreadSafe) {
  AllocCacheStats before = allocCacheStats();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        void *p = _mlir_memref_to_llvm_alloc(64 * (1 + (i + t) % 5));
        static_cast<char *>(p)[0] = static_cast<char>(i);
        _mlir_memref_to_llvm_free(p);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  AllocCacheStats after = allocCacheStats();
  EXPECT_EQ(after.liveBlocks, before.liveBlocks);
  EXPECT_EQ((after.systemAllocs - before.systemAllocs) +
                (after.reuses - before.reuses),
            4u * 2000);
}

TEST(AllocCache, TrimReleasesCachedBlocks) {
  void *p = _mlir_memref_to_llvm_alloc(12345);
  _mlir_memref_to_llvm_free(p);
  EXPECT_GT(allocCacheStats().cachedBlocks, 0u);
  allocCacheTrim();
  EXPECT_EQ(allocCacheStats().cachedBlocks, 0u);
  EXPECT_EQ(allocCacheStats().cachedBytes, 0u);
}
