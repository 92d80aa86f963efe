//===- Trace.h - A Chrome trace of compute and communication ----*- C++ -*-===//
//
// `loom-run --trace FILE` records, per rank, what the main thread computes
// (one event per step, plus every span it spends blocked waiting for a
// collective) and what the communication thread runs (one event per
// collective, with its size and operation), and writes them as Chrome trace
// JSON (chrome://tracing, ui.perfetto.dev): pid = rank, tid 0 = "compute",
// tid 1 = "comm". On a GPU the "comm" events are the collectives as the
// GPU's communication stream ran them, and the waits the compute stream's
// stalls for them (src/cuda/CollectiveTimer.h). Recording is off unless
// enabled, and then costs one locked vector append per event.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TRACE_H
#define LOOM_RUNTIME_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

class Communicator;

enum class TraceLane { Compute = 0, Comm = 1 };

struct TraceEvent {
  std::string name;
  TraceLane lane = TraceLane::Compute;
  /// steady_clock nanoseconds (one clock for all processes of a machine).
  int64_t startNs = 0;
  int64_t durationNs = 0;
  /// Comm events: the buffer size and the operation; -1 / "" otherwise.
  int64_t bytes = -1;
  std::string op;
};

/// Turns recording on or off (off: recordTrace does nothing).
void setTracing(bool on);
bool tracingEnabled();
/// steady_clock now, in nanoseconds.
int64_t traceNowNanos();
/// Thread-safe.
void recordTrace(TraceEvent event);
/// The events recorded so far; clears them.
std::vector<TraceEvent> takeTraceEvents();

/// Collective over `comm`: writes every rank's `events` into one Chrome trace
/// JSON file at `path` (rank r > 0 hands its events over in `path.rank<r>`,
/// which rank 0 merges and removes). Times start at 0 at the earliest event.
/// Throws unless this rank can write its part of the trace at `path` (checked
/// before training, so a long run does not lose its trace at the end).
void checkTraceWritable(const std::string &path, int rank);

void writeChromeTrace(const std::string &path, Communicator &comm,
                      const std::vector<TraceEvent> &events);

} // namespace loom::rt

#endif // LOOM_RUNTIME_TRACE_H
