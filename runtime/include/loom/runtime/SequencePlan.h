//===- SequencePlan.h - Placing a step's documents on the ranks -*- C++ -*-===//
//
// The per-step planner of variable-length sequences (docs/sequences.md,
// after Zeppelin): given the lengths of the documents a step trains on, it
// places them on ranks so that the ranks' attention work, counted in causal
// (query, key) pairs, is even. The documents are taken costliest first. A
// short one (under an eighth of a rank's share of the pairs) goes whole to
// the least loaded rank; so does a longer one that fits under that rank's
// share. Any other is cut into contiguous pieces, each filling the least
// loaded rank up to its share (the first piece's node first, so that the
// K/V exchange stays on a node's links when it can): the pieces' pairs, not
// their tokens, are equal, so the rank with a document's cheap first tokens
// takes more of them. Lengths need no divisibility; the plan is a pure
// function of its inputs, so every rank computes the same one.
//
// The plan is what --loom-partition-sequences is to execute; until that
// pass exists, loom-run only reports the balance the plan would give.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SEQUENCEPLAN_H
#define LOOM_RUNTIME_SEQUENCEPLAN_H

#include <cstdint>
#include <vector>

namespace loom::rt {

struct SequencePlanOptions {
  int ranks = 1;
  /// Ranks sharing a node's fast links; a split document's ranks are taken
  /// from one node when it has enough.
  int ranksPerNode = 1;
  /// The most tokens a rank may hold in the attention layout (0: no
  /// limit); the linear layers see the tokens rebalanced anyway.
  int64_t tokenCapacity = 0;
};

/// Tokens [begin, end) of document `doc` (an index into the lengths) on
/// `rank`.
struct SequencePiece {
  int64_t doc = 0, begin = 0, end = 0;
  int rank = 0;
};

struct SequencePlan {
  std::vector<SequencePiece> pieces;
  /// Per rank: causal (query, key) pairs of its pieces, each query seeing
  /// its document's keys up to itself; and its tokens.
  std::vector<double> load;
  std::vector<int64_t> tokens;
  /// Documents split over several ranks.
  int64_t split = 0;

  /// The most loaded rank's pairs over the mean (1 when there is no work).
  double maxOverMean() const;
};

/// Causal pairs of queries [begin, end) of a document (keys from its
/// start): sum over q of (q + 1).
double causalPairs(int64_t begin, int64_t end);

/// Places documents of `lengths` (each at least 1) on the ranks; throws
/// Error when they cannot fit under the token capacity.
SequencePlan planSequences(const std::vector<int64_t> &lengths,
                           const SequencePlanOptions &options);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SEQUENCEPLAN_H
