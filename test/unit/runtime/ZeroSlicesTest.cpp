//===- ZeroSlicesTest.cpp - The arithmetic of ZeRO's slices -----*- C++ -*-===//
//
// Rank r of N holds elements [r·s, r·s + s) of a tensor's flattening, s =
// ceil(n / N), zeros past n: initialised so (fillInitSlice), and
// reassembled from the shards of any other rank count (shardPieces).
// Checkpoints and initialisation of whole artifacts: ZeroTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/ZeroShards.h"
#include "loom/runtime/Init.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace loom::rt;

namespace {

/// `pieces` as {rank, from, at, count} rows, to compare.
std::vector<std::vector<int64_t>>
shardRuns(const std::vector<ShardPiece> &pieces) {
  std::vector<std::vector<int64_t>> runs;
  for (const ShardPiece &piece : pieces)
    runs.push_back({piece.rank, piece.from, piece.at, piece.count});
  return runs;
}

} // namespace

TEST(ZeroShardPieces, APartTakesItsRunsFromTheShardsInOrder) {
  using Runs = std::vector<std::vector<int64_t>>;
  // 10 elements over 3 ranks: shards of 4, the last with 2 of padding.
  EXPECT_EQ(shardRuns(shardPieces(10, 3, 3, 4)),
            (Runs{{0, 3, 0, 1}, {1, 0, 1, 3}}));
  EXPECT_EQ(shardRuns(shardPieces(10, 3, 0, 10)),
            (Runs{{0, 0, 0, 4}, {1, 0, 4, 4}, {2, 0, 8, 2}}));
  // A part that reaches past the end takes its elements only: the rest is
  // padding, which no shard is read for.
  EXPECT_EQ(shardRuns(shardPieces(10, 3, 8, 4)), (Runs{{2, 0, 0, 2}}));
  EXPECT_TRUE(shardPieces(10, 3, 12, 4).empty());
  // A scalar over 4 ranks lies in rank 0's shard alone.
  EXPECT_EQ(shardRuns(shardPieces(1, 4, 0, 1)), (Runs{{0, 0, 0, 1}}));
  EXPECT_TRUE(shardPieces(1, 4, 3, 1).empty());
}

TEST(ZeroShardPieces, ShardsOfAnyRankCountReassembleIntoAnyOther) {
  for (int64_t n : {1, 3, 7, 10, 32, 33})
    for (int64_t saved = 1; saved <= 5; ++saved)
      // 0: the whole tensor (no ZeRO).
      for (int64_t loading = 0; loading <= 5; ++loading) {
        SCOPED_TRACE(std::to_string(n) + " elements, " + std::to_string(saved) +
                     " ranks to " + std::to_string(loading));
        // Element i of the whole is i + 1; the padding -1, which no part
        // may take.
        const int64_t s = (n + saved - 1) / saved;
        std::vector<std::vector<double>> shards(saved,
                                                std::vector<double>(s, -1.0));
        for (int64_t i = 0; i < n; ++i)
          shards[i / s][i % s] = static_cast<double>(i + 1);
        const int64_t p = loading ? (n + loading - 1) / loading : n;
        for (int64_t r = 0; r < std::max<int64_t>(loading, 1); ++r) {
          std::vector<double> part(p, 0.0);
          for (const ShardPiece &piece : shardPieces(n, saved, r * p, p))
            for (int64_t k = 0; k < piece.count; ++k)
              part[piece.at + k] = shards[piece.rank][piece.from + k];
          for (int64_t k = 0; k < p; ++k)
            EXPECT_EQ(part[k], r * p + k < n ? r * p + k + 1 : 0.0)
                << "rank " << r << " element " << k;
        }
      }
}

TEST(ZeroInit, ASliceHoldsTheWholeTensorsValuesThenZeros) {
  using Kind = InitSpec::Kind;
  for (InitSpec init :
       {InitSpec{Kind::Normal, 0.5}, InitSpec{Kind::Uniform, 0.3},
        InitSpec{Kind::Ones, 0}, InitSpec{Kind::Zeros, 0}})
    for (int64_t n : {7, 32})
      for (int ranks : {2, 3, 5}) {
        SCOPED_TRACE("init kind " +
                     std::to_string(static_cast<int>(init.kind)) + ", " +
                     std::to_string(n) + " elements, " + std::to_string(ranks) +
                     " ranks");
        std::vector<double> whole(n);
        fillInit(whole.data(), DType::F64, n, init, 4, "w");
        const int64_t s = (n + ranks - 1) / ranks;
        for (int r = 0; r < ranks; ++r) {
          std::vector<double> slice(s, -7.0);
          fillInitSlice(slice.data(), DType::F64, s, r * s, n, init, 4, "w");
          for (int64_t i = 0; i < s; ++i)
            EXPECT_EQ(slice[i], r * s + i < n ? whole[r * s + i] : 0.0)
                << "rank " << r << " element " << i;
        }
      }
}
