//===- SequencePlan.cpp - Placing a step's documents on the ranks ---------===//
//
// SequencePlan.h says what the plan is. Costs are causal (query, key)
// pairs: the attention's work, to which the linear layers add the same per
// token everywhere once the tokens are rebalanced for them.
//
//===----------------------------------------------------------------------===//

#include "loom/runtime/SequencePlan.h"
#include "loom/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace loom::rt {

double causalPairs(int64_t begin, int64_t end) {
  const double b = static_cast<double>(begin), e = static_cast<double>(end);
  return (e * (e + 1) - b * (b + 1)) / 2;
}

/// Documents costing less than this fraction of a rank's share are never
/// split.
constexpr double kSplitFraction = 0.125;
/// A longer document goes whole to a rank it brings to at most this
/// multiple of its share (splitting it would buy less balance than this).
constexpr double kWholeSlack = 1.02;

double SequencePlan::maxOverMean() const {
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  if (load.empty() || total <= 0)
    return 1;
  return *std::max_element(load.begin(), load.end()) /
         (total / static_cast<double>(load.size()));
}

namespace {

class Planner {
public:
  Planner(const SequencePlanOptions &options, SequencePlan &plan, double share)
      : options(options), plan(plan), share(share) {
    plan.load.assign(options.ranks, 0);
    plan.tokens.assign(options.ranks, 0);
  }

  /// The least loaded rank not in `used` (a document's ranks so far),
  /// preferring `node`'s ranks (-1: any node) when one of them is under its
  /// share; -1 if every rank is used.
  int leastLoaded(int node, const std::vector<bool> &used = {}) const {
    auto usable = [&](int r) { return used.empty() || !used[r]; };
    const int perNode = std::max(1, options.ranksPerNode);
    int best = -1;
    if (node >= 0)
      for (int r = node * perNode;
           r < std::min((node + 1) * perNode, options.ranks); ++r)
        if (usable(r) && plan.load[r] < share &&
            (best < 0 || plan.load[r] < plan.load[best]))
          best = r;
    if (best >= 0)
      return best;
    for (int r = 0; r < options.ranks; ++r)
      if (usable(r) && (best < 0 || plan.load[r] < plan.load[best]))
        best = r;
    return best;
  }

  /// A document too costly to sit whole on one rank: its tokens in
  /// contiguous pieces, each filling the least loaded rank (the first's
  /// node first) up to its share of pairs, the last piece whatever is
  /// left.
  void fill(int64_t doc, int64_t length) {
    int node = -1;
    std::vector<bool> used(options.ranks);
    for (int64_t begin = 0; begin < length;) {
      // Every rank used and tokens left (rounding): the least loaded rank
      // takes the rest.
      int rank = leastLoaded(node, used);
      const bool rest = rank < 0;
      if (rest)
        rank = leastLoaded(-1);
      node = rank / std::max(1, options.ranksPerNode);
      used[rank] = true;
      const double room = share - plan.load[rank];
      int64_t end = length;
      if (!rest &&
          causalPairs(begin, length) > room + static_cast<double>(length)) {
        // The end whose pairs fill the room, e(e+1) = 2 room + b(b+1),
        // rounded (a token's pairs more or less); at least one token, so
        // the document always advances. What is left within a token's
        // pairs of the room goes on this rank too.
        const double b = static_cast<double>(begin);
        const double e =
            (std::sqrt(1 + 4 * (2 * std::max(room, 0.0) + b * (b + 1))) - 1) /
            2;
        end = std::clamp<int64_t>(std::llround(e), begin + 1, length);
      }
      place(doc, begin, end, rank);
      begin = end;
    }
  }

  void place(int64_t doc, int64_t begin, int64_t end, int rank) {
    // A piece that continues the last one on the same rank extends it.
    SequencePiece *last = plan.pieces.empty() ? nullptr : &plan.pieces.back();
    if (last && last->doc == doc && last->rank == rank && last->end == begin)
      last->end = end;
    else
      plan.pieces.push_back({doc, begin, end, rank});
    plan.load[rank] += causalPairs(begin, end);
    plan.tokens[rank] += end - begin;
  }

  int64_t tokenRoom(int rank) const {
    return options.tokenCapacity > 0 ? options.tokenCapacity - plan.tokens[rank]
                                     : std::numeric_limits<int64_t>::max() / 2;
  }

  [[noreturn]] void noRoom(int64_t doc, int64_t length) const {
    fail("sequence plan: no rank has room for document %lld (%lld tokens; "
         "capacity %lld per rank)",
         static_cast<long long>(doc), static_cast<long long>(length),
         static_cast<long long>(options.tokenCapacity));
  }

private:
  const SequencePlanOptions &options;
  SequencePlan &plan;
  const double share;
};

/// plan.split: the documents with pieces on more than one rank.
void countSplit(SequencePlan &plan) {
  std::map<int64_t, int> firstRank;
  std::set<int64_t> split;
  for (const SequencePiece &p : plan.pieces) {
    auto [it, fresh] = firstRank.insert({p.doc, p.rank});
    if (!fresh && it->second != p.rank)
      split.insert(p.doc);
  }
  plan.split = static_cast<int64_t>(split.size());
}

/// Ranges of one document that go to one rank together.
struct Unit {
  int64_t doc = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t tokens = 0;
  double pairs = 0;

  void add(int64_t begin, int64_t end) {
    if (begin >= end)
      return;
    ranges.push_back({begin, end});
    tokens += end - begin;
    pairs += causalPairs(begin, end);
  }
};

/// Units of the equal-token planner hold at most this fraction of a
/// rank's tokens: coarser units split fewer documents but leave ranks that
/// fill up early with no room to even out their pairs (max/mean over 40
/// lognormal steps, 4 ranks: 1.06-1.10 with halves, 1.015-1.02 with
/// quarters, 1.002-1.005 with eighths; SequencePlanTest).
constexpr int64_t kUnitDivisor = 8;

/// A document as units: whole when it is at most 1/kUnitDivisor of a
/// rank's tokens; otherwise cut into 2m chunks of equal tokens, m units of
/// chunks j and 2m-1-j (the zigzag of load-balanced context parallelism):
/// the units' tokens and pairs are equal, so no rank holds only a cheap
/// first chunk.
std::vector<Unit> documentUnits(int64_t doc, int64_t length, int64_t capacity,
                                int ranks) {
  const int64_t half = std::max<int64_t>(1, capacity / kUnitDivisor);
  int64_t m = std::min<int64_t>(
      {(length + half - 1) / half, ranks, std::max<int64_t>(1, length / 2)});
  std::vector<Unit> units(m);
  auto edge = [&](int64_t k) { return k * length / (2 * m); };
  for (int64_t j = 0; j < m; ++j) {
    units[j].doc = doc;
    units[j].add(edge(j), edge(j + 1));
    units[j].add(edge(2 * m - 1 - j), edge(2 * m - j));
  }
  return units;
}

/// The plan when every rank holds exactly its share of the tokens (a
/// partitioned model's static rows): units costliest first, each on the
/// rank with room whose pairs then need the least correction per token of
/// its remaining room to reach its tokens' share of the pairs (rho, the
/// step's pairs per token, times its tokens); a unit no rank has room for
/// fills the roomiest rank and its rest goes on.
void planEqualTokens(const std::vector<int64_t> &lengths,
                     const SequencePlanOptions &options, double rho,
                     Planner &planner, SequencePlan &plan) {
  std::vector<Unit> units;
  for (size_t d = 0; d < lengths.size(); ++d)
    for (Unit &u : documentUnits(static_cast<int64_t>(d), lengths[d],
                                 options.tokenCapacity, options.ranks))
      units.push_back(std::move(u));
  std::stable_sort(
      units.begin(), units.end(),
      [](const Unit &a, const Unit &b) { return a.pairs > b.pairs; });
  auto excess = [&](int r) { return plan.load[r] - rho * plan.tokens[r]; };
  // The correction per token the rest of rank r's tokens would have to
  // bring after taking a unit: a rank with little room left cannot make up
  // for much.
  auto score = [&](int r, double delta, int64_t tokens) {
    const double room = static_cast<double>(planner.tokenRoom(r) - tokens);
    return std::abs(excess(r) + delta) / std::max(room, 1.0);
  };
  for (size_t i = 0; i < units.size(); ++i) {
    Unit unit = units[i];
    while (unit.tokens > 0) {
      const double delta = unit.pairs - rho * unit.tokens;
      int best = -1, roomiest = -1;
      for (int r = 0; r < options.ranks; ++r) {
        const int64_t room = planner.tokenRoom(r);
        if (room > 0 && (roomiest < 0 || room > planner.tokenRoom(roomiest)))
          roomiest = r;
        if (room >= unit.tokens &&
            (best < 0 ||
             score(r, delta, unit.tokens) < score(best, delta, unit.tokens)))
          best = r;
      }
      if (best >= 0) {
        for (auto [b, e] : unit.ranges)
          planner.place(unit.doc, b, e, best);
        break;
      }
      if (roomiest < 0)
        planner.noRoom(unit.doc, lengths[unit.doc]);
      // Fill the roomiest rank with the unit's first tokens.
      int64_t room = planner.tokenRoom(roomiest);
      Unit rest;
      rest.doc = unit.doc;
      for (auto [b, e] : unit.ranges) {
        const int64_t take = std::min(room, e - b);
        if (take > 0)
          planner.place(unit.doc, b, b + take, roomiest);
        room -= take;
        rest.add(b + take, e);
      }
      unit = rest;
    }
  }
}

} // namespace

SequencePlan planSequences(const std::vector<int64_t> &lengths,
                           const SequencePlanOptions &options) {
  if (options.ranks < 1)
    fail("sequence plan: %d ranks", options.ranks);
  double total = 0;
  int64_t tokens = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 1)
      fail("sequence plan: document %zu has %lld tokens (at least 1)", i,
           static_cast<long long>(lengths[i]));
    total += causalPairs(0, lengths[i]);
    tokens += lengths[i];
  }
  if (options.tokenCapacity > 0 &&
      tokens > options.tokenCapacity * options.ranks)
    fail("sequence plan: %lld tokens do not fit in %d ranks of %lld",
         static_cast<long long>(tokens), options.ranks,
         static_cast<long long>(options.tokenCapacity));
  const double share = total / options.ranks;
  SequencePlan plan;
  Planner planner(options, plan, share);
  if (options.tokenCapacity > 0) {
    planEqualTokens(lengths, options, total / static_cast<double>(tokens),
                    planner, plan);
    countSplit(plan);
    return plan;
  }
  // The costliest first (LPT); equal lengths in document order.
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return lengths[a] > lengths[b];
  });
  for (int64_t doc : order) {
    const int64_t length = lengths[doc];
    // A short document (under a kSplitFraction of a share) goes whole to
    // the least loaded rank: splitting it would cost an exchange
    // for little balance. A long one fills ranks up to their shares.
    const int rank = planner.leastLoaded(-1);
    if (causalPairs(0, length) <= kSplitFraction * share ||
        plan.load[rank] + causalPairs(0, length) <= share * kWholeSlack) {
      planner.place(doc, 0, length, rank);
      continue;
    }
    planner.fill(doc, length);
  }
  countSplit(plan);
  return plan;
}

} // namespace loom::rt
