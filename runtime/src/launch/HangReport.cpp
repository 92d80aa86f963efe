//===- HangReport.cpp - Which rank a hung job waited for --------*- C++ -*-===//
//
// The records are small JSON objects; the analysis groups the ranks by the
// collective they wait in.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/HangReport.h"
#include "FileUtil.h"
#include "JsonParse.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>

namespace loom::rt {

namespace {

/// "rank 1" or "ranks 0, 2".
std::string rankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

std::tuple<int64_t, std::string, int64_t, std::string>
key(const FlightRecord &r) {
  return {r.seq, r.op, r.count, r.dtype};
}

} // namespace

std::string describeCollective(const FlightRecord &record) {
  std::string text = record.op + " #" + std::to_string(record.seq);
  if (record.count > 0)
    text += " (" + std::to_string(record.count) + " " + record.dtype + ")";
  return text;
}

bool writeFlightRecord(const std::string &dir, const FlightRecord &record) {
  nlohmann::json json = {
      {"rank", record.rank},         {"op", record.op},
      {"seq", record.seq},           {"count", record.count},
      {"dtype", record.dtype},       {"waited_s", record.waitedS},
      {"stopped_s", record.stoppedS}};
  std::string path = dir + "/rank" + std::to_string(record.rank) + ".json";
  std::string temporary = path + ".tmp";
  try {
    writeFileDurable(temporary, json.dump() + "\n");
  } catch (const Error &) {
    return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::vector<FlightRecord> readFlightRecords(const std::string &dir) {
  std::vector<FlightRecord> records;
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("rank", 0) != 0 || entry.path().extension() != ".json")
      continue;
    try {
      std::string body = readFileText(entry.path().string()), problem;
      nlohmann::json json;
      if (!parseJson(body.data(), body.data() + body.size(), json, problem))
        continue;
      FlightRecord r;
      r.rank = json.at("rank").get<int>();
      r.op = json.at("op").get<std::string>();
      r.seq = json.at("seq").get<int64_t>();
      r.count = json.at("count").get<int64_t>();
      r.dtype = json.at("dtype").get<std::string>();
      r.waitedS = json.at("waited_s").get<double>();
      r.stoppedS = json.value("stopped_s", 0.0);
      records.push_back(r);
    } catch (const std::exception &) { // unreadable or not a whole record
    }
  }
  return records;
}

namespace {

/// describeHang for ranks that waited; `accounted` ranks are described
/// already (not silent).
std::string describeWaits(std::vector<FlightRecord> records, int ranks,
                          const std::vector<int> &accounted) {
  std::sort(records.begin(), records.end(),
            [](const FlightRecord &a, const FlightRecord &b) {
              return a.rank < b.rank;
            });
  // The ranks in each distinct collective, in the order first seen.
  std::vector<std::pair<const FlightRecord *, std::vector<int>>> groups;
  std::vector<bool> reported(std::max(ranks, 0), false);
  for (int rank : accounted)
    if (rank >= 0 && rank < ranks)
      reported[rank] = true;
  for (const FlightRecord &r : records) {
    if (r.rank >= 0 && r.rank < ranks)
      reported[r.rank] = true;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](auto &g) { return key(*g.first) == key(r); });
    if (group == groups.end())
      groups.push_back({&r, {r.rank}});
    else
      group->second.push_back(r.rank);
  }
  std::vector<int> silent;
  for (int rank = 0; rank < ranks; ++rank)
    if (!reported[rank])
      silent.push_back(rank);
  std::string silence = silent.empty()
                            ? ""
                            : rankList(silent) +
                                  " did not report: stopped, or stuck outside "
                                  "collectives (in compute or I/O)";

  if (groups.empty())
    return silence;
  if (groups.size() == 1) {
    std::string waiting = rankList(groups[0].second) + " waited in " +
                          describeCollective(*groups[0].first);
    if (silent.empty() && accounted.empty())
      return "every rank waited in " + describeCollective(*groups[0].first) +
             ": the collective itself is stuck (the network, or the MPI "
             "library)";
    return silence.empty() ? waiting : waiting + "; " + silence;
  }
  // Earlier collectives first: a rank in an earlier one is behind (stopped
  // or slow inside it, or it skipped ahead of nothing); at one number,
  // different collectives mean the schedules diverged there.
  std::stable_sort(groups.begin(), groups.end(), [](auto &a, auto &b) {
    return a.first->seq < b.first->seq;
  });
  const int64_t first = groups.front().first->seq;
  std::string text;
  if (groups.back().first->seq == first) {
    text = "the ranks issued different collectives as their #" +
           std::to_string(first) + ": ";
  } else {
    std::vector<int> behind;
    for (auto &g : groups)
      if (g.first->seq == first)
        behind.insert(behind.end(), g.second.begin(), g.second.end());
    std::sort(behind.begin(), behind.end());
    text = rankList(behind) + (behind.size() == 1 ? " is" : " are") +
           " behind the others: ";
  }
  for (size_t i = 0; i < groups.size(); ++i)
    text += (i ? ", " : "") + rankList(groups[i].second) + " in " +
            describeCollective(*groups[i].first);
  if (!silence.empty())
    text += "; " + silence;
  return text;
}

} // namespace

std::string describeHang(std::vector<FlightRecord> records, int ranks) {
  if (records.empty())
    return "";
  // Ranks that were themselves stopped in the collective (their records
  // were written once they ran again, as the job was being stopped).
  std::string stopped;
  std::vector<int> stoppedRanks;
  for (const FlightRecord &r : records)
    if (r.stoppedS > 0) {
      stoppedRanks.push_back(r.rank);
      stopped += (stopped.empty() ? "" : "; ") +
                 formatString("rank %d was itself stopped for %.0f s in ",
                              r.rank, r.stoppedS) +
                 describeCollective(r) +
                 " (SIGSTOP, a debugger, or a frozen machine)";
    }
  records.erase(
      std::remove_if(records.begin(), records.end(),
                     [](const FlightRecord &r) { return r.stoppedS > 0; }),
      records.end());
  std::string waits = describeWaits(records, ranks, stoppedRanks);
  if (stopped.empty() || waits.empty())
    return stopped + waits;
  return stopped + "; " + waits;
}

} // namespace loom::rt
