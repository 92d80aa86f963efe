//===- Transfers.cpp - loom_rt_transfer_start and its link model ----------===//
//
// Transfers.h says what is modelled. The arrival times are kept per handle
// until the handle's one wait (the comm dialect's verifier makes compiled
// code wait each token once), so memory stays bounded over a long run.
//
//===----------------------------------------------------------------------===//
#include "loom/runtime/Transfers.h"

#include "loom/runtime/CurrentCommunicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Trace.h"
#include "loom/runtime/abi.h"
#include "support/Export.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace loom::rt {

namespace {

using Clock = std::chrono::steady_clock;

struct Link {
  std::mutex mutex;
  double bytesPerSecond = 0;
  /// When the last transfer of each direction arrives.
  Clock::time_point freeAt[2];
  std::unordered_map<int64_t, Clock::time_point> arrivals;
  int64_t issued = 0;
  TransferTotals totals;
};

Link &link() {
  static Link l;
  return l;
}

int64_t nanos(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}

} // namespace

void setOffloadBandwidth(double bytesPerSecond) {
  std::lock_guard<std::mutex> lock(link().mutex);
  link().bytesPerSecond = bytesPerSecond > 0 ? bytesPerSecond : 0;
}

double offloadBandwidth() {
  std::lock_guard<std::mutex> lock(link().mutex);
  return link().bytesPerSecond;
}

TransferTotals transferTotals() {
  std::lock_guard<std::mutex> lock(link().mutex);
  return link().totals;
}

void waitForTransfer(int64_t handle) {
  Clock::time_point arrival;
  {
    Link &l = link();
    std::lock_guard<std::mutex> lock(l.mutex);
    auto it = l.arrivals.find(-handle);
    if (it == l.arrivals.end())
      abortJob(formatString("loom_rt_wait: %lld is not the handle of a "
                            "transfer in flight",
                            static_cast<long long>(handle)));
    arrival = it->second;
    l.arrivals.erase(it);
  }
  Clock::time_point now = Clock::now();
  if (arrival <= now)
    return;
  std::this_thread::sleep_until(arrival);
  Clock::duration blocked = Clock::now() - now;
  if (tracingEnabled())
    recordTrace(
        {"wait", TraceLane::Compute, nanos(now),
         std::chrono::duration_cast<std::chrono::nanoseconds>(blocked).count(),
         -1, ""});
  std::lock_guard<std::mutex> lock(link().mutex);
  link().totals.blockedSeconds +=
      std::chrono::duration<double>(blocked).count();
}

} // namespace loom::rt

using namespace loom::rt;

extern "C" {

LOOM_RT_ABI_EXPORT int64_t loom_rt_transfer_start(void *dst, const void *src,
                                                  int64_t bytes,
                                                  int32_t direction) {
  if (direction != LOOM_TRANSFER_UPLOAD && direction != LOOM_TRANSFER_OFFLOAD)
    abortJob(formatString("loom_rt_transfer_start: unknown direction %d "
                          "(abi.h loom_transfer_direction)",
                          static_cast<int>(direction)));
  if (bytes < 0 || (bytes > 0 && (!dst || !src)))
    abortJob(formatString("loom_rt_transfer_start: bad buffer of %lld bytes",
                          static_cast<long long>(bytes)));
  if (bytes > 0 && dst != src)
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  Link &l = link();
  std::lock_guard<std::mutex> lock(l.mutex);
  Clock::time_point now = Clock::now();
  Clock::time_point start = std::max(now, l.freeAt[direction]);
  Clock::time_point arrival = start;
  if (l.bytesPerSecond > 0)
    arrival += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(double(bytes) / l.bytesPerSecond));
  l.freeAt[direction] = arrival;
  (direction == LOOM_TRANSFER_UPLOAD ? l.totals.uploadBytes
                                     : l.totals.offloadBytes) += bytes;
  int64_t handle = ++l.issued;
  l.arrivals[handle] = arrival;
  if (tracingEnabled() && arrival > start)
    recordTrace({direction == LOOM_TRANSFER_UPLOAD ? "upload" : "offload",
                 TraceLane::Comm, nanos(start), nanos(arrival) - nanos(start),
                 bytes,
                 direction == LOOM_TRANSFER_UPLOAD ? "upload" : "offload"});
  return -handle;
}

} // extern "C"
