//===- KernelProfile.h - GPU time per kernel --------------------*- C++ -*-===//
//
// Internal to libLoomCuda.so. With LOOM_CUDA_PROFILE set, every kernel
// launch and cuBLAS GEMM compiled code enqueues on the compute stream is
// bracketed by a pair of CUDA events; when the stream has been synchronized
// the pairs' elapsed times are summed per kernel, and at exit the process
// prints (or writes) a table of kernels by total GPU time: what to look at
// first when a step is slower than it should be (docs/gpu.md).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SRC_CUDA_KERNELPROFILE_H
#define LOOM_RUNTIME_SRC_CUDA_KERNELPROFILE_H

#include "EventPool.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::rt::cuda {

/// GPU time summed per kernel name and shape.
class KernelTimes {
public:
  /// One timed launch of `name` with `shape` (its grid and block, or a
  /// GEMM's sizes); each name and shape is a row of its own.
  void add(const std::string &name, double milliseconds,
           const std::string &shape);
  /// The kernels by total time, at most `top` rows, with calls, total,
  /// mean and maximum time, share of the total and shape; then the totals and,
  /// if not zero, how many launches were never timed (`untimed`).
  std::string table(size_t top, int64_t untimed) const;
  int64_t launches() const { return calls; }

private:
  using Key = std::pair<std::string, std::string>; // name, shape
  struct Row {
    int64_t calls = 0;
    double milliseconds = 0;
    /// The slowest call: a row's first launch also waits for its module to
    /// load (CUDA loads kernels lazily) and cuBLAS's first call of a shape
    /// picks its algorithm, so a mean far below the maximum is warm-up.
    double slowest = 0;
  };
  std::map<Key, Row> rows;
  int64_t calls = 0;
  double milliseconds = 0;
};

/// Brackets work on a stream with events and collects their times.
/// Thread-safe. Events are reused once harvested.
class KernelProfiler {
public:
  explicit KernelProfiler(const Driver &driver) : events(driver) {}
  ~KernelProfiler();
  KernelProfiler(const KernelProfiler &) = delete;
  KernelProfiler &operator=(const KernelProfiler &) = delete;

  /// Records the start of the next piece of work on `stream`; null if no
  /// event could be made (that launch then goes untimed).
  CUevent begin(CUstream stream);
  /// Records its end, naming it.
  void end(CUstream stream, CUevent start, std::string name, std::string shape);
  /// Sums the pairs whose end has completed (all of them once the stream
  /// was synchronized); keeps the others.
  void harvest();
  /// harvest(), then the table (KernelTimes::table).
  std::string report(size_t top = 40);
  /// Pairs recorded and not yet harvested.
  size_t pending() const;

private:
  struct Pair {
    CUevent start, end;
    std::string name, shape;
  };
  mutable std::mutex mutex;
  EventPool events;
  std::vector<Pair> pairs;
  KernelTimes times;
  int64_t untimed = 0;
};

/// The process's profiler when LOOM_CUDA_PROFILE is set (made on first use
/// with `driver`, which must outlive the process's work), else null. At
/// exit it prints its report to stderr (LOOM_CUDA_PROFILE=1) or writes it to
/// the file the variable names ("%p" becomes the process id).
KernelProfiler *kernelProfiler(const Driver &driver);

} // namespace loom::rt::cuda

#endif // LOOM_RUNTIME_SRC_CUDA_KERNELPROFILE_H
