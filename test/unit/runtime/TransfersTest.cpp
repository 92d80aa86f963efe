//===- TransfersTest.cpp - Tests of the modelled host-device link --------===//
//
// loom_rt_transfer_start and loom_rt_wait on a transfer's handle
// (Transfers.h): the data is copied at the start, the handle is negative,
// and a wait does not return before the modelled link has delivered every
// transfer queued ahead in its direction. Only lower bounds on time are
// checked: a loaded machine may always be slower.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Transfers.h"
#include "TestUtil.h"
#include "loom/runtime/abi.h"

#include <chrono>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// Restores the link model after a test.
struct Bandwidth {
  explicit Bandwidth(double bytesPerSecond) {
    loom::rt::setOffloadBandwidth(bytesPerSecond);
  }
  ~Bandwidth() { loom::rt::setOffloadBandwidth(0); }
};

TEST(Transfers, CopiesAtStartAndCountsBytes) {
  std::vector<float> src{1, 2, 3, 4}, dst(4, 0);
  loom::rt::TransferTotals before = loom::rt::transferTotals();
  int64_t handle =
      loom_rt_transfer_start(dst.data(), src.data(), 16, LOOM_TRANSFER_UPLOAD);
  EXPECT_LT(handle, 0);
  EXPECT_EQ(dst, src);
  loom_rt_wait(handle);
  int64_t back =
      loom_rt_transfer_start(src.data(), dst.data(), 8, LOOM_TRANSFER_OFFLOAD);
  loom_rt_wait(back);
  loom::rt::TransferTotals after = loom::rt::transferTotals();
  EXPECT_EQ(after.uploadBytes - before.uploadBytes, 16);
  EXPECT_EQ(after.offloadBytes - before.offloadBytes, 8);
}

TEST(Transfers, WaitsForTheLinkInIssueOrder) {
  Bandwidth link(1e6); // 1 MB/s: 2000 bytes take 2 ms
  std::vector<char> a(2000, 'a'), b(2000, 'b'), c(2000);
  Clock::time_point start = Clock::now();
  int64_t first =
      loom_rt_transfer_start(c.data(), a.data(), 2000, LOOM_TRANSFER_UPLOAD);
  int64_t second =
      loom_rt_transfer_start(c.data(), b.data(), 2000, LOOM_TRANSFER_UPLOAD);
  EXPECT_NE(first, second);
  // The second arrives after the first: 4 ms of link time at least.
  loom_rt_wait(second);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(4));
  loom_rt_wait(first);
  EXPECT_EQ(c[0], 'b');
}

} // namespace
