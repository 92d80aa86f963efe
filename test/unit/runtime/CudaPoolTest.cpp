//===- CudaPoolTest.cpp - The device memory pool, without a GPU -*- C++ -*-===//
//
// DevicePool (runtime/src/cuda/DevicePool.h) on a fake driver that hands out
// addresses from a counter: size classes, reuse in the steady state of a
// training step, rejection of foreign pointers, and the retry after
// trimming when the device is out of memory.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "cuda/DevicePool.h"

#include <map>
#include <set>

using namespace loom::rt;
using namespace loom::rt::cuda;
using namespace loom::rt::test;

namespace {

/// A driver with `capacity` bytes that records what the pool does.
struct FakeDevice {
  explicit FakeDevice(size_t capacity = size_t(1) << 40) : capacity(capacity) {}

  DevicePool::Backend backend() {
    return {[this](size_t bytes) -> uintptr_t {
              if (used + bytes > capacity)
                return 0;
              used += bytes;
              uintptr_t block = next;
              next += bytes + 4096;
              blocks[block] = bytes;
              ++allocations;
              return block;
            },
            [this](uintptr_t block) {
              used -= blocks.at(block);
              blocks.erase(block);
              ++frees;
            },
            [this] { ++synchronizations; }};
  }

  size_t capacity, used = 0;
  uintptr_t next = 0x10000;
  std::map<uintptr_t, size_t> blocks;
  int allocations = 0, frees = 0, synchronizations = 0;
};

} // namespace

TEST(DevicePool, SizeClassesAreWholeGranules) {
  EXPECT_EQ(DevicePool::sizeClass(0), 256u);
  EXPECT_EQ(DevicePool::sizeClass(1), 256u);
  EXPECT_EQ(DevicePool::sizeClass(256), 256u);
  EXPECT_EQ(DevicePool::sizeClass(257), 512u);
  EXPECT_EQ(DevicePool::sizeClass(1 << 20), size_t(1) << 20);
}

TEST(DevicePool, SteadyStateReusesEveryBlock) {
  FakeDevice device;
  DevicePool pool(device.backend());
  // One "step": the same sizes, allocated and freed in a nested pattern.
  const std::vector<size_t> sizes = {4096, 100, 4096, 65536, 0, 300};
  auto step = [&] {
    std::vector<uintptr_t> live;
    for (size_t size : sizes) {
      uintptr_t block = pool.allocate(size);
      EXPECT_NE(block, 0u);
      EXPECT_EQ(block % DevicePool::kGranularity, 0u);
      live.push_back(block);
    }
    // Live blocks are distinct, even two of one size and the empty one.
    std::set<uintptr_t> distinct(live.begin(), live.end());
    EXPECT_EQ(distinct.size(), live.size());
    for (uintptr_t block : live)
      EXPECT_TRUE(pool.release(block));
  };
  step();
  EXPECT_EQ(device.allocations, static_cast<int>(sizes.size()));
  for (int i = 0; i < 10; ++i)
    step();
  // After the first step nothing reaches the driver.
  EXPECT_EQ(device.allocations, static_cast<int>(sizes.size()));
  DevicePoolStats stats = pool.stats();
  EXPECT_EQ(stats.systemAllocs, sizes.size());
  EXPECT_EQ(stats.reuses, 10 * sizes.size());
  EXPECT_EQ(stats.liveBlocks, 0u);
  EXPECT_EQ(stats.cachedBlocks, sizes.size());
  EXPECT_EQ(device.frees, 0);
  EXPECT_EQ(device.synchronizations, 0); // reuse never waits
}

TEST(DevicePool, CountsPeakBytesInUse) {
  FakeDevice device;
  DevicePool pool(device.backend());
  uintptr_t a = pool.allocate(1000); // 1024-byte class
  uintptr_t b = pool.allocate(256);
  ASSERT_TRUE(pool.release(a));
  uintptr_t c = pool.allocate(512);
  EXPECT_EQ(pool.stats().liveBytes, 256u + 512u);
  // The most at once was a and b together, not a + b + c.
  EXPECT_EQ(pool.stats().peakLiveBytes, 1024u + 256u);
  ASSERT_TRUE(pool.release(b));
  ASSERT_TRUE(pool.release(c));
  EXPECT_EQ(pool.stats().liveBytes, 0u);
  EXPECT_EQ(pool.stats().peakLiveBytes, 1024u + 256u);
}

TEST(DevicePool, PoisonsFreshAndFreedBlocks) {
  FakeDevice device;
  DevicePool::Backend backend = device.backend();
  std::vector<std::pair<uintptr_t, size_t>> poisoned;
  backend.poison = [&](uintptr_t block, size_t bytes) {
    poisoned.emplace_back(block, bytes);
  };
  DevicePool pool(backend);
  uintptr_t a = pool.allocate(1000);
  EXPECT_EQ(poisoned, (decltype(poisoned){{a, 1024}})); // fresh
  ASSERT_TRUE(pool.release(a));
  EXPECT_EQ(poisoned.size(), 2u); // freed
  EXPECT_EQ(poisoned.back(), std::make_pair(a, size_t(1024)));
  EXPECT_EQ(pool.allocate(1024), a);
  EXPECT_EQ(poisoned.size(), 2u); // reused: it was poisoned when freed
}

TEST(DevicePool, NearlyEqualSizesShareAClass) {
  FakeDevice device;
  DevicePool pool(device.backend());
  uintptr_t a = pool.allocate(1000);
  ASSERT_TRUE(pool.release(a));
  EXPECT_EQ(pool.allocate(1024), a); // same 1024-byte class
  uintptr_t b = pool.allocate(1025); // the next class
  EXPECT_NE(b, a);
  EXPECT_EQ(device.allocations, 2);
}

TEST(DevicePool, RejectsForeignAndDoubleFrees) {
  FakeDevice device;
  DevicePool pool(device.backend());
  uintptr_t block = pool.allocate(512);
  EXPECT_TRUE(pool.owns(block));
  EXPECT_FALSE(pool.release(block + 256)); // inside, not the start
  EXPECT_FALSE(pool.release(0xdead000));
  EXPECT_TRUE(pool.release(block));
  EXPECT_FALSE(pool.owns(block));
  EXPECT_FALSE(pool.release(block)); // twice
  EXPECT_EQ(pool.stats().cachedBlocks, 1u);
}

TEST(DevicePool, TrimsAndRetriesWhenOutOfMemory) {
  FakeDevice device(/*capacity=*/3 * 1024);
  DevicePool pool(device.backend());
  uintptr_t a = pool.allocate(1024), b = pool.allocate(1024);
  ASSERT_TRUE(pool.release(a));
  ASSERT_TRUE(pool.release(b));
  // 2048 bytes do not fit beside the 2048 cached: the pool waits for the
  // device, returns its cached blocks and tries again.
  uintptr_t big = pool.allocate(2048);
  EXPECT_NE(big, 0u);
  EXPECT_EQ(device.synchronizations, 1);
  EXPECT_EQ(device.frees, 2);
  EXPECT_EQ(pool.stats().trims, 1u);
  EXPECT_EQ(pool.stats().cachedBlocks, 0u);
  // Nothing left to trim: a clear error naming what the pool holds.
  EXPECT_TRUE(throwsError([&] { pool.allocate(4096); },
                          {"out of GPU memory allocating 4096 bytes",
                           "2048 bytes in 1 live device buffers"}));
}

TEST(DevicePool, TrimReturnsCachedBlocksOnly) {
  FakeDevice device;
  DevicePool pool(device.backend());
  uintptr_t kept = pool.allocate(256), cached = pool.allocate(512);
  ASSERT_TRUE(pool.release(cached));
  EXPECT_EQ(pool.trim(), 512u);
  EXPECT_EQ(device.frees, 1);
  EXPECT_TRUE(pool.owns(kept));
  EXPECT_EQ(pool.trim(), 0u);
  EXPECT_EQ(device.synchronizations, 1);
}
