//===- HangReport.cpp - Which rank a hung job waited for --------*- C++ -*-===//
//
// The analysis groups the ranks by the collective they wait in.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/HangReport.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace loom::rt {

namespace {

std::tuple<int64_t, std::string, int64_t, std::string>
key(const CollectiveEntry &r) {
  return {r.seq, r.op, r.count, r.dtype};
}

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
