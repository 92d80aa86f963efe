//===- Trace.cpp - A Chrome trace of compute and communication --*- C++ -*-===//
//
// Ranks of one machine share steady_clock, so their events line up on one
// time axis; ranks on other machines are only approximately aligned.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/Trace.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>

namespace loom::rt {

namespace {

std::atomic<bool> enabled{false};
std::mutex eventsMutex;
std::vector<TraceEvent> recorded;

using nlohmann::ordered_json;

ordered_json toJson(const TraceEvent &event, int rank) {
  ordered_json json = {
      {"name", event.name},
      {"cat", event.lane == TraceLane::Comm ? "comm" : "compute"},
      {"ph", "X"},
      {"ts", event.startNs * 1e-3},
      {"dur", event.durationNs * 1e-3},
      {"pid", rank},
      {"tid", static_cast<int>(event.lane)}};
  if (event.bytes >= 0 || !event.op.empty())
    json["args"] = {{"bytes", event.bytes}, {"op", event.op}};
  return json;
}

ordered_json metadata(const char *what, int rank, int tid,
                      const std::string &name) {
  ordered_json json = {{"name", what}, {"ph", "M"}, {"pid", rank}};
  if (tid >= 0)
    json["tid"] = tid;
  json["args"] = {{"name", name}};
  return json;
}

void writeText(const std::string &path, const std::string &text) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    fail("cannot write trace file %s: %s", path.c_str(), std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    fail("cannot write trace file %s: %s", path.c_str(), std::strerror(errno));
}

std::string partPath(const std::string &path, int rank) {
  return path + ".rank" + std::to_string(rank);
}

} // namespace

void setTracing(bool on) { enabled = on; }
bool tracingEnabled() { return enabled.load(std::memory_order_relaxed); }

int64_t traceNowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void recordTrace(TraceEvent event) {
  if (!tracingEnabled())
    return;
  std::lock_guard<std::mutex> lock(eventsMutex);
  recorded.push_back(std::move(event));
}

std::vector<TraceEvent> takeTraceEvents() {
  std::lock_guard<std::mutex> lock(eventsMutex);
  std::vector<TraceEvent> events;
  events.swap(recorded);
  return events;
}

void checkTraceWritable(const std::string &path, int rank) {
  const std::string mine = rank > 0 ? partPath(path, rank) : path;
  std::FILE *existing = std::fopen(mine.c_str(), "r");
  if (existing)
    std::fclose(existing);
  std::FILE *file = std::fopen(mine.c_str(), "a");
  if (!file)
    fail("cannot write trace file %s: %s", mine.c_str(), std::strerror(errno));
  std::fclose(file);
  if (!existing)
    std::remove(mine.c_str());
}

void writeChromeTrace(const std::string &path, Communicator &comm,
                      const std::vector<TraceEvent> &events) {
  const int rank = comm.rank();
  ordered_json mine = ordered_json::array();
  for (const TraceEvent &event : events)
    mine.push_back(toJson(event, rank));

  std::string failure;
  if (rank > 0) {
    try {
      writeText(partPath(path, rank), mine.dump());
    } catch (const std::exception &e) {
      failure = e.what();
    }
  }
  agreeOnFailure(comm, failure); // the parts are written
  if (rank > 0)
    return;

  std::vector<ordered_json> perRank{std::move(mine)};
  for (int r = 1; r < comm.size(); ++r) {
    std::ifstream in(partPath(path, r));
    ordered_json part = ordered_json::parse(in, nullptr, /*exceptions=*/false);
    if (!part.is_array())
      fail("trace part %s is not a JSON array", partPath(path, r).c_str());
    perRank.push_back(std::move(part));
    std::remove(partPath(path, r).c_str());
  }
  double origin = std::numeric_limits<double>::infinity();
  for (const ordered_json &part : perRank)
    for (const ordered_json &event : part)
      origin = std::min(origin, event["ts"].get<double>());
  ordered_json all = ordered_json::array();
  for (int r = 0; r < comm.size(); ++r) {
    all.push_back(metadata("process_name", r, -1, "rank " + std::to_string(r)));
    all.push_back(metadata("thread_name", r, 0, "compute"));
    all.push_back(metadata("thread_name", r, 1, "comm"));
  }
  for (ordered_json &part : perRank)
    for (ordered_json &event : part) {
      event["ts"] = event["ts"].get<double>() - origin;
      all.push_back(std::move(event));
    }
  ordered_json trace = {{"traceEvents", std::move(all)},
                        {"displayTimeUnit", "ms"}};
  writeText(path, trace.dump());
}

} // namespace loom::rt
