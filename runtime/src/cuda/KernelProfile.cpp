//===- KernelProfile.cpp - GPU time per kernel (LOOM_CUDA_PROFILE) --------===//
#include "KernelProfile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace loom::rt::cuda {

void KernelTimes::add(const std::string &name, double ms,
                      const std::string &shape) {
  // By name and shape: a kernel's grid never changes, but every cuBLAS GEMM
  // has the same name, and one row for all of them hid which GEMMs cost.
  Row &row = rows[{name, shape}];
  ++row.calls;
  row.milliseconds += ms;
  row.slowest = std::max(row.slowest, ms);
  ++calls;
  milliseconds += ms;
}

std::string KernelTimes::table(size_t top, int64_t untimed) const {
  std::vector<std::pair<Key, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](auto &a, auto &b) {
    return a.second.milliseconds > b.second.milliseconds;
  });
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%10s %8s %11s %11s %10s  %-40s %s\n",
                "total ms", "calls", "mean us", "max us", "share", "kernel",
                "shape");
  out += line;
  for (size_t i = 0; i < sorted.size() && i < top; ++i) {
    const auto &[key, row] = sorted[i];
    const auto &[name, shape] = key;
    std::snprintf(
        line, sizeof line,
        "%10.3f %8" PRId64 " %11.2f %11.2f %9.1f%%  %-40s %s\n",
        row.milliseconds, row.calls,
        1000 * row.milliseconds / double(row.calls), 1000 * row.slowest,
        milliseconds > 0 ? 100 * row.milliseconds / milliseconds : 0.0,
        name.c_str(), shape.c_str());
    out += line;
  }
  if (sorted.size() > top) {
    std::snprintf(line, sizeof line, "(%zu more rows)\n", sorted.size() - top);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "%10.3f %8" PRId64
                " launches of %zu kernels and shapes in all\n",
                milliseconds, calls, rows.size());
  out += line;
  if (untimed) {
    std::snprintf(line, sizeof line,
                  "%" PRId64 " launches not timed (never synchronized, or no "
                  "event could be made)\n",
                  untimed);
    out += line;
  }
  return out;
}

KernelProfiler::~KernelProfiler() {
  for (const Pair &pair : pairs) {
    events.give(pair.start);
    events.give(pair.end);
  }
}

CUevent KernelProfiler::begin(CUstream stream) {
  std::lock_guard<std::mutex> lock(mutex);
  return events.record(stream);
}

void KernelProfiler::end(CUstream stream, CUevent start, std::string name,
                         std::string shape) {
  std::lock_guard<std::mutex> lock(mutex);
  CUevent stop = start ? events.record(stream) : nullptr;
  if (!stop) {
    events.give(start);
    ++untimed;
    return;
  }
  pairs.push_back({start, stop, std::move(name), std::move(shape)});
}

void KernelProfiler::harvest() {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<Pair> waiting;
  for (Pair &pair : pairs) {
    float ms = 0;
    CUresult result = events.elapsed(ms, pair.start, pair.end);
    if (result == CUDA_ERROR_NOT_READY) {
      waiting.push_back(std::move(pair));
      continue;
    }
    if (result == CUDA_SUCCESS)
      times.add(pair.name, ms, pair.shape);
    else
      ++untimed;
    events.give(pair.start);
    events.give(pair.end);
  }
  pairs = std::move(waiting);
}

size_t KernelProfiler::pending() const {
  std::lock_guard<std::mutex> lock(mutex);
  return pairs.size();
}

std::string KernelProfiler::report(size_t top) {
  harvest();
  std::lock_guard<std::mutex> lock(mutex);
  return times.table(top, untimed + int64_t(pairs.size()));
}

namespace {

std::mutex profilerMutex;
KernelProfiler *profiler = nullptr;

std::string reportPath(const char *setting) {
  if (std::strcmp(setting, "1") == 0)
    return "";
  std::string path = setting;
  for (size_t at = path.find("%p"); at != std::string::npos;
       at = path.find("%p", at))
    path.replace(at, 2, std::to_string(::getpid()));
  return path;
}

void printReport() {
  // The job synchronized the stream when it finished; pairs still pending
  // are counted as untimed rather than waited for during exit. A file gets
  // every row (the long tail of small kernels can add up to more than the
  // top rows), the terminal the top ones.
  std::string path = reportPath(std::getenv("LOOM_CUDA_PROFILE"));
  std::string table =
      path.empty() ? profiler->report() : profiler->report(SIZE_MAX);
  if (!path.empty()) {
    if (FILE *file = std::fopen(path.c_str(), "w")) {
      std::fputs(table.c_str(), file);
      std::fclose(file);
      std::fprintf(stderr, "loom: GPU time per kernel written to %s\n",
                   path.c_str());
      return;
    }
    std::fprintf(stderr, "loom: cannot write %s; GPU time per kernel:\n",
                 path.c_str());
  } else {
    std::fprintf(stderr, "loom: GPU time per kernel (LOOM_CUDA_PROFILE):\n");
  }
  std::fputs(table.c_str(), stderr);
}

} // namespace

KernelProfiler *kernelProfiler(const Driver &driver) {
  static const bool enabled = [] {
    const char *value = std::getenv("LOOM_CUDA_PROFILE");
    return value && *value && std::strcmp(value, "0") != 0;
  }();
  if (!enabled)
    return nullptr;
  std::lock_guard<std::mutex> lock(profilerMutex);
  if (!profiler) {
    // Never destroyed: the report at exit reads it, and the driver's
    // events need not be freed by a process about to end.
    profiler = new KernelProfiler(driver);
    std::atexit(printReport);
  }
  return profiler;
}

} // namespace loom::rt::cuda
