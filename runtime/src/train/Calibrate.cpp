//===- Calibrate.cpp - Measuring the machine for the cost model -*- C++ -*-===//
//
// Every rank measures at the same time, as they compute and communicate
// during training: ranks that share a machine share its cores and memory
// bandwidth, so a rank measured alone would look faster than it will be.
// Each timing is reduced with Max over the ranks (the slowest rank bounds a
// data-parallel step), and Max is exact, so every rank holds bit-identical
// values and takes the same decisions from them; no decision has to be
// broadcast to keep the collectives matched.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Calibrate.h"
#include "loom/runtime/Blas.h"
#include "loom/runtime/Collectives.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"
#include "support/Clock.h"
#include "support/FileUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::rt {

namespace {

// Big enough to run near the BLAS peak, small enough (3 MiB of operands) to
// allocate and warm up at once; long enough in total to average out timer
// resolution and frequency ramp-up.
constexpr int64_t kGemmSize = 512;
constexpr double kGemmSeconds = 0.3;

constexpr int kLatencyRepeats = 30;
constexpr int kBandwidthRepeats = 3;
// Sizes double from the first to the last, stopping early once one
// all-reduce takes kLongEnough: by then latency is a small part of the time
// (on a 10 Mbit/s link after ~256 KiB, keeping the run to a few seconds),
// and on a fast link 64 MiB is well past where the bandwidth levels off.
constexpr int64_t kFirstBytes = 64 << 10;
constexpr int64_t kLastBytes = 64 << 20;
constexpr double kLongEnough = 0.2;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string formatBytes(int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
    return formatString("%lld MiB", static_cast<long long>(bytes >> 20));
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0)
    return formatString("%lld KiB", static_cast<long long>(bytes >> 10));
  return formatString("%lld B", static_cast<long long>(bytes));
}

std::string formatGbps(double bytesPerSecond) {
  double gbps = bytesPerSecond * 8 / 1e9;
  return formatString(gbps >= 100 ? "%.0f" : "%.3g", gbps);
}

std::string formatMicroseconds(double us) {
  return formatString(us >= 10 ? "%.0f" : "%.1f", us);
}

/// This rank's single-precision GEMM rate in GFLOP/s, through the same
/// service compiled code calls.
double measureGemmGflops() {
  const int64_t n = kGemmSize;
  // Values that stay normal: denormals would run far slower than real data.
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  auto gemm = [&] {
    loom_rt_gemm_f32(/*batch=*/1, /*transA=*/0, /*transB=*/0, n, n, n, a.data(),
                     n, 0, b.data(), n, 0, /*beta=*/0.0f, c.data(), n, 0);
  };
  gemm(); // Starts the BLAS threads and faults in the pages.
  int64_t repeats = 0;
  double elapsed = 0;
  Clock::time_point start = Clock::now();
  do {
    gemm();
    ++repeats;
    elapsed = secondsSince(start);
  } while (elapsed < kGemmSeconds);
  return 2.0 * n * n * n * static_cast<double>(repeats) / elapsed / 1e9;
}

/// Times `repeats` back-to-back all-reduces of `count` floats, started
/// together after a barrier; returns the median over repeats of the slowest
/// rank's time, the same on every rank.
double timeAllReduce(Communicator &comm, std::vector<float> &buffer,
                     int repeats) {
  std::vector<double> times(repeats);
  comm.barrier();
  for (double &time : times) {
    Clock::time_point start = Clock::now();
    comm.allReduce(buffer.data(), static_cast<int64_t>(buffer.size()),
                   DType::F32, ReduceOp::Sum);
    time = secondsSince(start);
  }
  comm.allReduce(times.data(), repeats, DType::F64, ReduceOp::Max);
  return median(times);
}

/// Seconds of GEMM work per second of wall time lost while an all-reduce of
/// `buffer` runs in the background on the communication thread, as compiled
/// code overlaps it: GEMMs of a small size timed alone, then back to back
/// until the all-reduce is done. Median of `repeats`; this rank's.
double measureCommCpuFraction(Communicator &comm, std::vector<float> &buffer,
                              int repeats) {
  const int64_t n = 192; // ~0.1-1 ms: fine-grained against the all-reduce
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  auto gemm = [&] {
    loom_rt_gemm_f32(1, 0, 0, n, n, n, a.data(), n, 0, b.data(), n, 0, 0.0f,
                     c.data(), n, 0);
  };
  gemm();
  int64_t alone = 0;
  Clock::time_point start = Clock::now();
  while (secondsSince(start) < kGemmSeconds) {
    gemm();
    ++alone;
  }
  const double perGemm = secondsSince(start) / static_cast<double>(alone);
  std::vector<double> fractions;
  ScopedCurrentCommunicator current(comm); // the communication thread
  for (int r = 0; r < repeats; ++r) {
    // Every rank starts its all-reduce before computing; they meet in it.
    int64_t handle = loom_rt_all_reduce_start(
        0, buffer.data(), static_cast<int64_t>(buffer.size()), LOOM_F32,
        LOOM_SUM);
    int64_t done = 0;
    start = Clock::now();
    while (!collectiveFinished(handle)) {
      gemm();
      ++done;
    }
    double elapsed = secondsSince(start);
    loom_rt_wait(handle);
    fractions.push_back(std::max(
        0.0, (elapsed - perGemm * static_cast<double>(done)) / elapsed));
  }
  return median(fractions);
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0)
    return "";
  return name;
}

} // namespace

double ringAllReduceBytes(int64_t bytes, int ranks) {
  if (ranks < 2)
    return 0;
  return 2.0 * static_cast<double>(bytes) * (ranks - 1) / ranks;
}

double fitLinkBandwidth(const AllReduceSample &sample, double latencySeconds,
                        int ranks) {
  double transfer = sample.seconds - latencySeconds;
  // Noise can make a short all-reduce look no slower than an empty one;
  // the whole time is then the safe (low) bound on the transfer time.
  if (transfer <= 0)
    transfer = sample.seconds;
  if (transfer <= 0)
    return 0;
  return ringAllReduceBytes(sample.bytes, ranks) / transfer;
}

CalibrationResult calibrate(Communicator &comm, int threads,
                            std::ostream &progress) {
  CalibrationResult result;
  result.ranks = comm.size();
  result.backend = comm.backend();
  result.threads = threads;
  result.host = hostName();
  const bool print = comm.isRoot();
  const char *rankWord = result.ranks == 1 ? "rank" : "ranks";

  setBlasThreads(threads);
  if (print)
    progress << "calibrate: GEMM " << kGemmSize << "x" << kGemmSize << "x"
             << kGemmSize << " f32 on " << result.ranks << " " << rankWord
             << ", " << threads << (threads == 1 ? " thread" : " threads")
             << " each" << std::endl;
  comm.barrier();
  // The minimum over ranks, as a Max of the negated rates.
  double negated = -measureGemmGflops();
  comm.allReduce(&negated, 1, DType::F64, ReduceOp::Max);
  result.gemmGflops = -negated;
  if (print)
    progress << formatString("calibrate: GEMM %.1f GFLOP/s (slowest rank)",
                             result.gemmGflops)
             << std::endl;
  if (result.ranks < 2)
    return result;

  // The first collective may set up connections; keep that out of the
  // latency.
  std::vector<float> buffer(1, 0.0f);
  comm.allReduce(buffer.data(), 1, DType::F32, ReduceOp::Sum);
  double latency = timeAllReduce(comm, buffer, kLatencyRepeats);
  result.linkLatencyUs = latency * 1e6;
  if (print)
    progress << "calibrate: all-reduce latency "
             << formatMicroseconds(result.linkLatencyUs) << " us (median of "
             << kLatencyRepeats << ")" << std::endl;

  for (int64_t bytes = kFirstBytes;; bytes *= 2) {
    // Zeros: the sums stay zero, never denormal or infinite.
    buffer.assign(static_cast<size_t>(bytes) / sizeof(float), 0.0f);
    AllReduceSample sample{bytes,
                           timeAllReduce(comm, buffer, kBandwidthRepeats)};
    result.allReduceSamples.push_back(sample);
    if (print)
      progress << "calibrate: all-reduce " << formatBytes(bytes) << ": "
               << formatString("%.3g", sample.seconds * 1e3) << " ms ("
               << formatGbps(fitLinkBandwidth(sample, latency, result.ranks))
               << " Gbit/s)" << std::endl;
    if (sample.seconds >= kLongEnough || bytes >= kLastBytes)
      break;
  }
  // The largest size has the smallest share of latency and noise.
  result.linkGbps =
      fitLinkBandwidth(result.allReduceSamples.back(), latency, result.ranks) *
      8 / 1e9;
  double cpu = measureCommCpuFraction(comm, buffer, kBandwidthRepeats);
  comm.allReduce(&cpu, 1, DType::F64, ReduceOp::Max);
  result.commCpuFraction = cpu;
  if (print)
    progress << formatString("calibrate: a background all-reduce takes %.2f "
                             "of its time from compute",
                             result.commCpuFraction)
             << std::endl;
  return result;
}

std::string describeCalibration(const CalibrationResult &result) {
  std::string text =
      formatString("%d %s: GEMM %.1f GFLOP/s", result.ranks,
                   result.ranks == 1 ? "rank" : "ranks", result.gemmGflops);
  if (result.ranks > 1)
    text += ", all-reduce " + formatGbps(result.linkGbps * 1e9 / 8) +
            " Gbit/s, latency " + formatMicroseconds(result.linkLatencyUs) +
            " us";
  return text;
}

void checkCalibrationPath(const std::string &path) {
  struct stat info;
  if (path.empty())
    fail("cannot write calibration file: empty path");
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    fail("cannot write calibration file %s: it is a directory", path.c_str());
  std::string dir = parentDirectory(path);
  if (::stat(dir.c_str(), &info) != 0)
    fail("cannot write calibration file %s: directory %s does not exist",
         path.c_str(), dir.c_str());
  if (!S_ISDIR(info.st_mode))
    fail("cannot write calibration file %s: %s is not a directory",
         path.c_str(), dir.c_str());
  // A probe file, not access(2), which says yes anywhere to root.
  checkCanCreateFileIn(dir, path, "calibration file");
}

void writeCalibration(const std::string &path,
                      const CalibrationResult &result) {
  checkCalibrationPath(path);
  nlohmann::ordered_json json = {
      {"format", "loom-calibration"}, {"version", kCalibrationVersion},
      {"ranks", result.ranks},        {"backend", result.backend},
      {"threads", result.threads},    {"gemm_gflops", result.gemmGflops},
  };
  // A one-rank file has no link numbers rather than made-up ones: loomc
  // then keeps its own link model.
  if (result.ranks > 1) {
    json["link_gbps"] = result.linkGbps;
    json["link_latency_us"] = result.linkLatencyUs;
    json["comm_cpu_fraction"] = result.commCpuFraction;
  }
  nlohmann::ordered_json samples = nlohmann::ordered_json::array();
  for (const AllReduceSample &sample : result.allReduceSamples)
    samples.push_back({{"bytes", sample.bytes}, {"seconds", sample.seconds}});
  json["allreduce_samples"] = std::move(samples);
  json["host"] = result.host;

  // Readers (loomc) never see half a file, and a crash keeps the old one.
  std::string tmp = path + ".tmp";
  try {
    writeFileDurable(tmp, json.dump(2) + "\n");
  } catch (const Error &e) {
    ::unlink(tmp.c_str());
    fail("cannot write calibration file %s: %s", path.c_str(), e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail("cannot write calibration file %s: %s", path.c_str(), reason.c_str());
  }
  syncDirectory(parentDirectory(path));
}

} // namespace loom::rt
