//===- FlightRecord.cpp - What a rank waited in when it timed out ---------===//
//
// The records are small JSON objects, one file per rank, written through a
// temporary file so that the launcher never reads half of one.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/FlightRecord.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/abi.h"
#include "support/FileUtil.h"
#include "support/JsonParse.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace loom::rt {

namespace {

/// "32 us", "4.1 ms", "2.50 s".
std::string describeSeconds(double seconds) {
  if (seconds < 1e-3)
    return formatString("%.0f us", seconds * 1e6);
  if (seconds < 1)
    return formatString("%.1f ms", seconds * 1e3);
  return formatString("%.2f s", seconds);
}

} // namespace

std::string describeRanks(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

std::string describeCollective(const CollectiveEntry &collective) {
  std::string text = collective.op + " #" + std::to_string(collective.seq);
  if (collective.count > 0)
    text +=
        " (" + std::to_string(collective.count) + " " + collective.dtype + ")";
  return text;
}

std::string describeRecords(std::vector<FlightRecord> records,
                            int recentShown) {
  std::sort(records.begin(), records.end(),
            [](const FlightRecord &a, const FlightRecord &b) {
              return a.rank < b.rank;
            });
  std::string text;
  for (const FlightRecord &r : records) {
    // A record taken outside any collective (a dump on request) has no op.
    if (r.op.empty())
      text += formatString("rank %d: not in a collective", r.rank);
    else
      text += formatString("rank %d: waited %.0f s in ", r.rank, r.waitedS) +
              describeCollective(r);
    if (r.stoppedS > 0)
      text += formatString(" (of which %.0f s stopped)", r.stoppedS);
    int shown = 0;
    for (auto past = r.recent.rbegin();
         past != r.recent.rend() && shown < recentShown; ++past, ++shown)
      text += (shown          ? ", "
               : r.op.empty() ? "; last "
                              : "; before it ") +
              describeCollective(*past) + " in " + describeSeconds(past->tookS);
    if (static_cast<int>(r.recent.size()) > recentShown)
      text += formatString(", ... (%zu in the record)", r.recent.size());
    text += "\n";
  }
  return text;
}

bool writeFlightRecord(const std::string &dir, const FlightRecord &record) {
  nlohmann::json recent = nlohmann::json::array();
  for (const PastCollective &past : record.recent)
    recent.push_back({{"op", past.op},
                      {"seq", past.seq},
                      {"count", past.count},
                      {"dtype", past.dtype},
                      {"started_s_ago", past.startedAgoS},
                      {"took_s", past.tookS}});
  nlohmann::json json = {{"rank", record.rank},
                         {"ranks", record.ranks},
                         {"op", record.op},
                         {"seq", record.seq},
                         {"count", record.count},
                         {"dtype", record.dtype},
                         {"waited_s", record.waitedS},
                         {"stopped_s", record.stoppedS},
                         {"recent", recent}};
  std::string path = dir + "/rank" + std::to_string(record.rank) + ".json";
  std::string temporary = path + ".tmp";
  // A directory named for an external launch may not exist yet.
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  try {
    writeFileDurable(temporary, json.dump() + "\n");
  } catch (const Error &) {
    return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::vector<FlightRecord> readFlightRecords(const std::string &dir,
                                            std::vector<std::string> *skipped) {
  std::vector<FlightRecord> records;
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("rank", 0) != 0 || entry.path().extension() != ".json")
      continue;
    const std::string path = entry.path().string();
    auto skip = [&](const std::string &why) {
      if (skipped)
        skipped->push_back("skipping " + path + ": " + why);
    };
    try {
      std::string body = readFileText(path), problem;
      nlohmann::json json;
      if (!parseJson(body.data(), body.data() + body.size(), json, problem)) {
        skip(problem);
        continue;
      }
      if (!json.is_object() || !json.at("rank").is_number_integer() ||
          (json.contains("ranks") && !json["ranks"].is_number_integer())) {
        skip("\"rank\" and \"ranks\" must be integers");
        continue;
      }
      FlightRecord r;
      const int64_t rank = json.at("rank").get<int64_t>();
      const int64_t ranks = json.value("ranks", int64_t(0));
      // The analysis allocates per rank: "ranks": 2000000000 in a record
      // allocated until it was killed.
      if (rank < 0 || rank >= LOOM_MAX_RANKS || ranks < 0 ||
          ranks > LOOM_MAX_RANKS) {
        skip(formatString("\"rank\": %lld, \"ranks\": %lld is out of "
                          "range (a job has at most 2^20 ranks)",
                          static_cast<long long>(rank),
                          static_cast<long long>(ranks)));
        continue;
      }
      r.rank = static_cast<int>(rank);
      r.ranks = static_cast<int>(ranks);
      r.op = json.at("op").get<std::string>();
      r.seq = json.at("seq").get<int64_t>();
      r.count = json.at("count").get<int64_t>();
      r.dtype = json.at("dtype").get<std::string>();
      r.waitedS = json.at("waited_s").get<double>();
      r.stoppedS = json.value("stopped_s", 0.0);
      for (const nlohmann::json &entry :
           json.value("recent", nlohmann::json::array())) {
        PastCollective past;
        past.op = entry.at("op").get<std::string>();
        past.seq = entry.at("seq").get<int64_t>();
        past.count = entry.at("count").get<int64_t>();
        past.dtype = entry.at("dtype").get<std::string>();
        past.startedAgoS = entry.at("started_s_ago").get<double>();
        past.tookS = entry.at("took_s").get<double>();
        r.recent.push_back(past);
      }
      records.push_back(r);
    } catch (const std::exception &e) { // unreadable or not a whole record
      skip(e.what());
    }
  }
  return records;
}

} // namespace loom::rt
