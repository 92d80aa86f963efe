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
#include "loom/runtime/abi.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <tuple>

namespace loom::rt {

namespace {

std::tuple<int64_t, std::string, int64_t, std::string>
key(const CollectiveEntry &r) {
  return {r.seq, r.op, r.count, r.dtype};
}

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

namespace {

/// describeHang for ranks that waited; `accounted` ranks are described
/// already (not silent); `explained`: a cause was named already.
std::string describeWaits(std::vector<FlightRecord> records, int ranks,
                          const std::vector<int> &accounted, bool explained) {
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
                            : describeRanks(silent) +
                                  " did not report: stopped, or stuck outside "
                                  "collectives (in compute or I/O)";

  if (groups.empty())
    return silence;
  if (groups.size() == 1) {
    std::string waiting = describeRanks(groups[0].second) + " waited in " +
                          describeCollective(*groups[0].first);
    if (silent.empty() && accounted.empty() && !explained)
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
    text = describeRanks(behind) + (behind.size() == 1 ? " is" : " are") +
           " behind the others: ";
  }
  for (size_t i = 0; i < groups.size(); ++i)
    text += (i ? ", " : "") + describeRanks(groups[i].second) + " in " +
            describeCollective(*groups[i].first);
  if (!silence.empty())
    text += "; " + silence;
  return text;
}

/// The lowest collective number at which the records (the collectives
/// waited in and the recent ones) show ranks in different collectives, and
/// what each rank issued there; 0 and "" when they agree wherever they
/// overlap.
std::pair<int64_t, std::string>
firstDivergence(const std::vector<FlightRecord> &records) {
  using Groups =
      std::vector<std::pair<const CollectiveEntry *, std::vector<int>>>;
  std::map<int64_t, Groups> byNumber;
  auto add = [&](const CollectiveEntry &entry, int rank) {
    Groups &groups = byNumber[entry.seq];
    auto group = std::find_if(groups.begin(), groups.end(), [&](auto &g) {
      return key(*g.first) == key(entry);
    });
    if (group == groups.end())
      groups.push_back({&entry, {rank}});
    else if (std::find(group->second.begin(), group->second.end(), rank) ==
             group->second.end())
      group->second.push_back(rank);
  };
  for (const FlightRecord &r : records) {
    add(r, r.rank);
    for (const PastCollective &past : r.recent)
      add(past, r.rank);
  }
  for (auto &[number, groups] : byNumber) {
    if (groups.size() < 2)
      continue;
    for (auto &group : groups)
      std::sort(group.second.begin(), group.second.end());
    std::sort(groups.begin(), groups.end(), [](auto &a, auto &b) {
      return a.second.front() < b.second.front();
    });
    std::string text;
    for (size_t i = 0; i < groups.size(); ++i)
      text += (i ? ", " : "") + describeRanks(groups[i].second) + " " +
              describeCollective(*groups[i].first);
    return {number, text};
  }
  return {0, ""};
}

} // namespace

std::string describeHang(std::vector<FlightRecord> records, int ranks) {
  if (records.empty())
    return "";
  // Schedules that parted before the collectives waited in: the first
  // difference is the cause, whatever the waits look like.
  auto [parted, difference] = firstDivergence(records);
  int64_t firstWait = records.front().seq;
  for (const FlightRecord &r : records)
    firstWait = std::min(firstWait, r.seq);
  std::string cause = parted > 0 && parted < firstWait
                          ? "the ranks' collectives first differ at #" +
                                std::to_string(parted) +
                                ", before any they wait in: " + difference +
                                "; "
                          : "";
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
  std::string waits =
      describeWaits(records, ranks, stoppedRanks, !cause.empty());
  if (stopped.empty() || waits.empty())
    return cause + stopped + waits;
  return cause + stopped + "; " + waits;
}

} // namespace loom::rt
