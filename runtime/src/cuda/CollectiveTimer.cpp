//===- CollectiveTimer.cpp - GPU time of the collectives --------*- C++ -*-===//
#include "CollectiveTimer.h"

#include <algorithm>

namespace loom::rt::cuda {

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

void CollectiveTimer::begin(int64_t ticket, CUstream comm) {
  Entry entry;
  entry.ticket = ticket;
  entry.start = events.record(comm);
  entries.push_back(entry);
}

void CollectiveTimer::end(int64_t ticket, CUstream comm) {
  Entry *entry = find(ticket);
  if (entry && entry->start && !entry->end)
    entry->end = events.record(comm);
}

void CollectiveTimer::computeWaits(int64_t ticket, CUstream compute) {
  waitedThrough = std::max(waitedThrough, ticket);
  Entry *entry = find(ticket);
  if (entry && entry->end && !entry->waitFrom)
    entry->waitFrom = events.record(compute);
}

DeviceCommTimes CollectiveTimer::take() {
  DeviceCommTimes times;
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
      if (stall == CUDA_SUCCESS)
        times.exposedSeconds += std::max(0.0f, stallMs) * 1e-3;
    } else {
      ++untimedCount;
    }
    release(entry);
  }
  entries = std::move(kept);
  return times;
}

} // namespace loom::rt::cuda
