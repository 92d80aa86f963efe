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
// A model compiled with --partition-sequences is trained on the plan
// (data/Documents.cpp fills each rank's rows with its pieces); for packed
// rows loom-run only reports the balance the plan would give.
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
  /// The tokens a rank holds (0: no limit). With a capacity the ranks are
  /// filled to it (exactly, when the documents have ranks x capacity
  /// tokens, as a partitioned model's static rows do) and the pairs are
  /// balanced under that constraint: documents longer than an eighth of a
  /// rank's tokens go in zigzag units (chunks j and 2m-1-j of 2m), units
  /// costliest first, each on the rank whose pairs then need the least
  /// correction per token of room left.
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

/// The options the runtime plans a step with, on `ranks` ranks: one node
/// (ranks per node are not detected yet); a partitioned model's ranks hold
/// exactly their `tokensPerRank` (batch x seq), packed rows' have no limit
/// (the plan is only reported).
inline SequencePlanOptions stepPlanOptions(int ranks, bool partitioned,
                                           int64_t tokensPerRank) {
  SequencePlanOptions options;
  options.ranks = ranks;
  options.ranksPerNode = ranks;
  options.tokenCapacity = partitioned ? tokensPerRank : 0;
  return options;
}

/// Places documents of `lengths` (each at least 1) on the ranks; throws
/// Error when they cannot fit under the token capacity.
SequencePlan planSequences(const std::vector<int64_t> &lengths,
                           const SequencePlanOptions &options);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SEQUENCEPLAN_H
