//===- FlightRecord.h - What a rank waited in when it timed out -*- C++ -*-===//
//
// When a collective times out, the watchdog of each rank that waits in one
// writes what it waits in (a flight record) to the directory the launcher
// named in LOOM_RUN_FLIGHT_DIR, before the job is stopped. A record also
// holds the rank's last collectives before the one it waits in, so that a
// user can read what each rank did last and HangReport.h can find where the
// ranks' schedules differ.
//
// Apart from HangReport.h because the records are written by the
// communicators (runtime/src/comm/) and read by the launcher
// (runtime/src/launch/): the record belongs to the lower of the two, so
// that the launcher depends on the communicators and not the other way.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_FLIGHTRECORD_H
#define LOOM_RUNTIME_FLIGHTRECORD_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

/// The environment variable naming the directory of a job's records.
constexpr const char *kFlightDirEnv = "LOOM_RUN_FLIGHT_DIR";

/// How many of the collectives before the one waited in a record keeps.
constexpr int kRecentCollectives = 16;

/// A collective as a rank numbered it.
struct CollectiveEntry {
  /// The collective ("all_reduce") and its 1-based number among this rank's
  /// collectives: ranks that issue the same collectives in the same order
  /// agree on it.
  std::string op;
  int64_t seq = 0;
  /// Elements and their dtype name ("f32"); count 0 for a barrier.
  int64_t count = 0;
  std::string dtype;
};

/// A collective that finished before the one a rank waits in.
struct PastCollective : CollectiveEntry {
  /// Seconds before the record was written that it began, and its duration.
  double startedAgoS = 0;
  double tookS = 0;
};

/// What one rank waited in when its collective timed out, and the
/// collectives it issued before (a ring of the last ones).
struct FlightRecord : CollectiveEntry {
  int rank = 0;
  /// Ranks of the job (0: not recorded).
  int ranks = 0;
  double waitedS = 0;
  /// Seconds of the wait in which this process did not run (its watchdog
  /// woke long after it should have): the rank was stopped, not waiting.
  double stoppedS = 0;
  /// Up to kRecentCollectives collectives before this one, oldest first.
  std::vector<PastCollective> recent;
};

/// "rank 1" or "ranks 0, 2".
std::string describeRanks(const std::vector<int> &ranks);

/// "all_reduce #57 (1024 f32)".
std::string describeCollective(const CollectiveEntry &collective);

/// Writes `record` to `<dir>/rank<R>.json` (through a temporary file, so a
/// reader never sees half of it). Returns false on an I/O error.
bool writeFlightRecord(const std::string &dir, const FlightRecord &record);

/// The records in `dir`; files that do not parse, or whose rank or rank
/// count is out of range (more than 2^20 ranks), are skipped, each with a
/// line "skipping PATH: why" added to `skipped` if given.
std::vector<FlightRecord>
readFlightRecords(const std::string &dir,
                  std::vector<std::string> *skipped = nullptr);

/// One line per record, by rank: what the rank waited in, for how long,
/// and the last collectives it finished, most recent first, e.g. "rank 0:
/// waited 60 s in all_reduce #57 (1 f64); before it all_reduce #56 (36
/// f64) in 0.4 ms, ..."; a record with no op (taken outside collectives)
/// "rank 0: not in a collective; last ...".
std::string describeRecords(std::vector<FlightRecord> records,
                            int recentShown = 4);

} // namespace loom::rt

#endif // LOOM_RUNTIME_FLIGHTRECORD_H
