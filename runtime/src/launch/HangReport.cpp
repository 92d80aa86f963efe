//===- HangReport.cpp - Which rank a hung job waited for --------*- C++ -*-===//
//
// The records are small JSON objects; the analysis groups the ranks by the
// collective they wait in.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/HangReport.h"
#include "JsonParse.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
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
  nlohmann::json json = {{"rank", record.rank},   {"op", record.op},
                         {"seq", record.seq},     {"count", record.count},
                         {"dtype", record.dtype}, {"waited_s", record.waitedS}};
  std::string path = dir + "/rank" + std::to_string(record.rank) + ".json";
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << json.dump() << "\n";
    if (!out.flush())
      return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::vector<FlightRecord> readFlightRecords(const std::string &dir) {
  std::vector<FlightRecord> records;
  DIR *listing = opendir(dir.c_str());
  if (!listing)
    return records;
  while (dirent *entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name.rfind("rank", 0) != 0 || name.size() < 6 ||
        name.substr(name.size() - 5) != ".json")
      continue;
    std::ifstream in(dir + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    std::string body = text.str(), problem;
    nlohmann::json json;
    if (!parseJson(body.data(), body.data() + body.size(), json, problem))
      continue;
    try {
      FlightRecord r;
      r.rank = json.at("rank").get<int>();
      r.op = json.at("op").get<std::string>();
      r.seq = json.at("seq").get<int64_t>();
      r.count = json.at("count").get<int64_t>();
      r.dtype = json.at("dtype").get<std::string>();
      r.waitedS = json.at("waited_s").get<double>();
      records.push_back(r);
    } catch (const nlohmann::json::exception &) {
    }
  }
  closedir(listing);
  return records;
}

std::string describeHang(std::vector<FlightRecord> records, int ranks) {
  if (records.empty())
    return "";
  std::sort(records.begin(), records.end(),
            [](const FlightRecord &a, const FlightRecord &b) {
              return a.rank < b.rank;
            });
  // The ranks in each distinct collective, in the order first seen.
  std::vector<std::pair<const FlightRecord *, std::vector<int>>> groups;
  std::vector<bool> reported(std::max(ranks, 0), false);
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

  if (groups.size() == 1) {
    std::string waiting = rankList(groups[0].second) + " waited in " +
                          describeCollective(*groups[0].first);
    if (silent.empty())
      return "every rank waited in " + describeCollective(*groups[0].first) +
             ": the collective itself is stuck (the network, or the MPI "
             "library)";
    return waiting + "; " + silence;
  }
  bool sameSeq = std::all_of(groups.begin(), groups.end(), [&](auto &g) {
    return g.first->seq == groups[0].first->seq;
  });
  std::string text = sameSeq ? "the ranks issued different collectives as "
                               "their #" +
                                   std::to_string(groups[0].first->seq) + ": "
                             : "the ranks wait in different collectives: ";
  for (size_t i = 0; i < groups.size(); ++i)
    text += (i ? ", " : "") + rankList(groups[i].second) + " in " +
            describeCollective(*groups[i].first);
  if (!silence.empty())
    text += "; " + silence;
  return text;
}

} // namespace loom::rt
