//===- CollectiveTimer.cpp - GPU time of the collectives --------*- C++ -*-===//
#include "CollectiveTimer.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Trace.h"

#include <algorithm>

namespace loom::rt::cuda {

size_t CollectiveTimer::pending() const {
  std::lock_guard<std::mutex> lock(mutex);
  return entries.size();
}

int64_t CollectiveTimer::untimed() const {
  std::lock_guard<std::mutex> lock(mutex);
  return untimedCount;
}

CollectiveTimer::~CollectiveTimer() {
  for (Entry &entry : entries)
    release(entry);
}

void CollectiveTimer::release(Entry &entry) {
  events.give(entry.start);
  events.give(entry.end);
  events.give(entry.waitFrom);
  entry.start = entry.end = entry.waitFrom = nullptr;
}

CollectiveTimer::Entry *CollectiveTimer::find(int64_t ticket) {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (it->ticket == ticket)
      return &*it;
  return nullptr;
}

void CollectiveTimer::begin(int64_t ticket, CUstream comm, const char *name,
                            int64_t bytes, const char *op) {
  std::lock_guard<std::mutex> lock(mutex);
  Entry entry;
  entry.ticket = ticket;
  entry.issued = Clock::now();
  entry.name = name;
  entry.bytes = bytes;
  entry.op = op;
  entry.start = events.record(comm);
  entries.push_back(entry);
}

void CollectiveTimer::end(int64_t ticket, CUstream comm) {
  std::lock_guard<std::mutex> lock(mutex);
  Entry *entry = find(ticket);
  if (entry && entry->start && !entry->end)
    entry->end = events.record(comm);
}

void CollectiveTimer::computeWaits(int64_t ticket, CUstream compute) {
  std::lock_guard<std::mutex> lock(mutex);
  waitedThrough = std::max(waitedThrough, ticket);
  Entry *entry = find(ticket);
  if (entry && entry->end && !entry->waitFrom)
    entry->waitFrom = events.record(compute);
}

std::optional<CollectiveTimer::Overdue>
CollectiveTimer::overdue(double limitSeconds, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const Entry &entry : entries) {
    double age = std::chrono::duration<double>(now - entry.issued).count();
    if (age < limitSeconds)
      break; // the later ones were issued later still
    // cuEventQuery, not cuEventElapsedTime: the driver says only the
    // former reliably reports pending work. (An error here is the next
    // wait's to report.)
    if (entry.start && entry.end &&
        events.query(entry.end) == CUDA_ERROR_NOT_READY)
      return Overdue{entry.ticket, entry.name, entry.bytes, age,
                     events.query(entry.start) != CUDA_ERROR_NOT_READY};
  }
  return std::nullopt;
}

std::string CollectiveTimer::describe(const Overdue &late,
                                      double limitSeconds) {
  std::string what = formatString("%s #%lld (%lld bytes)", late.name.c_str(),
                                  static_cast<long long>(late.ticket),
                                  static_cast<long long>(late.bytes));
  if (!late.started)
    return formatString(
        "%s has not started on this rank's GPU %.0f s after it was issued "
        "(--collective-timeout %g): the kernels before it on this rank have "
        "not finished (a kernel that does not end, or a GPU that has "
        "stopped responding). Stopping the job",
        what.c_str(), late.seconds, limitSeconds);
  return formatString(
      "%s has not finished on the GPU %.0f s after it was issued "
      "(--collective-timeout %g): another rank is stuck or has died, or the "
      "ranks issued different collectives (NCCL_DEBUG=WARN says more). "
      "Stopping the job",
      what.c_str(), late.seconds, limitSeconds);
}

DeviceCommTimes CollectiveTimer::take(CUstream compute) {
  std::lock_guard<std::mutex> lock(mutex);
  DeviceCommTimes times;
  // The trace's anchor: an event the GPU reaches when the host gets past
  // the synchronize (after a drain, at once), so an event `d` ms before it
  // happened `d` ms before `anchorNs` on the host's clock.
  CUevent anchor = nullptr;
  int64_t anchorNs = 0;
  if (tracingEnabled() && !entries.empty() &&
      entries.front().ticket <= waitedThrough) {
    anchor = events.record(compute);
    if (anchor && events.synchronize(anchor) != CUDA_SUCCESS) {
      events.give(anchor);
      anchor = nullptr;
    }
    anchorNs = traceNowNanos();
  }
  auto hostNanos = [&](CUevent event) -> int64_t {
    float before = 0;
    if (events.elapsed(before, event, anchor) != CUDA_SUCCESS)
      return -1;
    return anchorNs - static_cast<int64_t>(double(before) * 1e6);
  };
  std::deque<Entry> kept;
  for (Entry &entry : entries) {
    if (entry.ticket > waitedThrough) {
      kept.push_back(entry); // its stall is not known yet
      continue;
    }
    if (!entry.start || !entry.end) {
      ++untimedCount;
      release(entry);
      continue;
    }
    float ms = 0, stallMs = 0;
    CUresult result = events.elapsed(ms, entry.start, entry.end);
    CUresult stall = entry.waitFrom
                         ? events.elapsed(stallMs, entry.waitFrom, entry.end)
                         : CUDA_SUCCESS;
    if (result == CUDA_ERROR_NOT_READY || stall == CUDA_ERROR_NOT_READY) {
      kept.push_back(entry);
      continue;
    }
    if (result == CUDA_SUCCESS) {
      times.commSeconds += ms * 1e-3;
      // A collective done before the compute stream got there: no stall.
      stallMs = stall == CUDA_SUCCESS ? std::max(0.0f, stallMs) : 0;
      times.exposedSeconds += stallMs * 1e-3;
      if (anchor) {
        int64_t startNs = hostNanos(entry.start);
        if (startNs >= 0)
          recordTrace({entry.name, TraceLane::Comm, startNs,
                       static_cast<int64_t>(double(ms) * 1e6), entry.bytes,
                       entry.op});
        int64_t waitNs =
            entry.waitFrom && stallMs > 0 ? hostNanos(entry.waitFrom) : -1;
        if (waitNs >= 0)
          recordTrace({"wait", TraceLane::Compute, waitNs,
                       static_cast<int64_t>(double(stallMs) * 1e6), -1, ""});
      }
    } else {
      ++untimedCount;
    }
    release(entry);
  }
  entries = std::move(kept);
  events.give(anchor);
  return times;
}

} // namespace loom::rt::cuda
