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
#include <numeric>

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

  /// The least loaded rank with room for a token and not in `used` (a
  /// document's ranks so far), preferring `node`'s ranks (-1: any node)
  /// when one of them is under its share; -1 if no rank qualifies.
  int leastLoaded(int node, const std::vector<bool> &used = {}) const {
    auto usable = [&](int r) {
      return tokenRoom(r) > 0 && (used.empty() || !used[r]);
    };
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
    int ranks = 0;
    std::vector<bool> used(options.ranks);
    for (int64_t begin = 0; begin < length; ++ranks) {
      // Every rank used and tokens left (rounding, or ranks filled
      // before): the least loaded rank takes the rest.
      int rank = leastLoaded(node, used);
      const bool rest = rank < 0;
      if (rest)
        rank = leastLoaded(-1);
      if (rank < 0)
        noRoom(doc, length);
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
      if (options.tokenCapacity > 0)
        end = std::min(end, begin + tokenRoom(rank));
      place(doc, begin, end, rank);
      begin = end;
    }
    if (ranks > 1)
      ++plan.split;
  }

  void place(int64_t doc, int64_t begin, int64_t end, int rank) {
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
  // The costliest first (LPT); equal lengths in document order.
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return lengths[a] > lengths[b];
  });
  SequencePlan plan;
  Planner planner(options, plan, share);
  for (int64_t doc : order) {
    const int64_t length = lengths[doc];
    // A short document (under a kSplitFraction of a share) goes whole to
    // the least loaded rank with room: splitting it would cost an exchange
    // for little balance. A long one fills ranks up to their shares.
    const int rank = planner.leastLoaded(-1);
    if (rank >= 0 && planner.tokenRoom(rank) >= length &&
        (causalPairs(0, length) <= kSplitFraction * share ||
         plan.load[rank] + causalPairs(0, length) <= share * kWholeSlack)) {
      planner.place(doc, 0, length, rank);
      continue;
    }
    planner.fill(doc, length);
  }
  return plan;
}

} // namespace loom::rt
