//===- Calibrate.h - Measuring the machine for the cost model ---*- C++ -*-===//
//
// `loom-run --calibrate FILE` measures what the compiler's cost model would
// otherwise have to guess: the GEMM rate of the slowest rank and the
// all-reduce latency and bandwidth between the ranks, on the machines the job
// actually runs on. `loomc --calibration=FILE` reads the file, so the format
// (see writeCalibration) is a contract with the compiler: version it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_CALIBRATE_H
#define LOOM_RUNTIME_CALIBRATE_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace loom::rt {

class Communicator;

/// Bump on any change a reader of version 1 would misread.
constexpr int kCalibrationVersion = 1;

/// One all-reduce size and its median time (the slowest rank's each time).
struct AllReduceSample {
  int64_t bytes = 0;
  double seconds = 0;
};

struct CalibrationResult {
  int ranks = 1;
  /// Communicator::backend(): "local" or "mpi".
  std::string backend = "local";
  /// OpenBLAS threads per rank during the GEMM measurement.
  int threads = 1;
  /// Single-precision GEMM rate of the slowest rank, GFLOP/s.
  double gemmGflops = 0;
  /// The link model t = latency + ringBytes / bandwidth; only measured, and
  /// only written, with more than one rank.
  double linkGbps = 0;
  double linkLatencyUs = 0;
  /// Compute time lost per second of an all-reduce running on the
  /// communication thread (its polls, the network stack): the slowest
  /// rank's, from GEMMs alone against GEMMs beside the largest all-reduce.
  double commCpuFraction = 0;
  std::vector<AllReduceSample> allReduceSamples;
  /// The calling rank's host name (rank 0's is the one written).
  std::string host;
};

/// Collective: every rank of `comm` must call it. Sets the OpenBLAS thread
/// count to `threads`, measures, and returns the same result on every rank
/// (but `host`).
/// Rank 0 prints a line per measurement to `progress`. Takes about a second
/// alone, and well under 30 s with 2 ranks on a 10 Mbit/s link.
CalibrationResult calibrate(Communicator &comm, int threads,
                            std::ostream &progress);

/// Bytes each rank sends (and receives) in a ring all-reduce of `bytes`
/// over `ranks`: 2 * bytes * (ranks - 1) / ranks.
double ringAllReduceBytes(int64_t bytes, int ranks);

/// Link bandwidth in bytes/s from one all-reduce of `sample.bytes` that took
/// `sample.seconds`, given the latency: ringBytes / (seconds - latency), or
/// ringBytes / seconds when noise makes the transfer time vanish.
double fitLinkBandwidth(const AllReduceSample &sample, double latencySeconds,
                        int ranks);

/// "2 ranks: GEMM 38.1 GFLOP/s, all-reduce 0.93 Gbit/s, latency 61 us".
std::string describeCalibration(const CalibrationResult &result);

/// Throws Error unless `path` looks writable (its directory exists and is
/// writable, and it is not a directory), so that a bad path fails before the
/// measurements rather than after them.
void checkCalibrationPath(const std::string &path);

/// Writes `result` to `path` atomically (PATH.tmp, fsync, rename) as JSON:
///   {"format": "loom-calibration", "version": 1, "ranks": N,
///    "backend": "mpi"|"local", "threads": T, "gemm_gflops": G,
///    "link_gbps": B, "link_latency_us": L,      (only when ranks > 1)
///    "allreduce_samples": [{"bytes": S, "seconds": t}, ...],
///    "host": "..."}
/// Throws Error naming `path` on failure.
void writeCalibration(const std::string &path, const CalibrationResult &result);

} // namespace loom::rt

#endif // LOOM_RUNTIME_CALIBRATE_H
