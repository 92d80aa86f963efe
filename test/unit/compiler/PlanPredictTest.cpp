//===- PlanPredictTest.cpp - Where a layout's groups lie ------------------===//
//
// placeGroups (lib/Driver/PlanPredict.h) tells the planner's time model
// how many nodes a group of each mesh axis spans and how many of its ranks
// share a node: row-major dp x pp x tp ranks, consecutive ranks on a node.
//
//===----------------------------------------------------------------------===//

#include "PlanPredict.h"

#include <gtest/gtest.h>

using namespace mlir::loom::driver;
using mlir::loom::ClusterSpec;

namespace {

ClusterSpec cluster(int64_t nodes, int64_t ranksPerNode) {
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.ranksPerNode = ranksPerNode;
  return spec;
}

Layout layout(int64_t dp, int64_t pp, int64_t tp) {
  Layout l;
  l.dp = dp;
  l.pp = pp;
  l.tp = tp;
  return l;
}

void expectPlaced(const Layout &l, MeshAxis axis, const ClusterSpec &c,
                  int64_t nodes, int64_t ranksPerNode) {
  GroupPlacement placed = placeGroups(l, axis, c);
  EXPECT_EQ(placed.nodes, nodes);
  EXPECT_EQ(placed.ranksPerNode, ranksPerNode);
}

TEST(PlanPredict, PlacesGroupsOnNodes) {
  const ClusterSpec twoByTwo = cluster(2, 2);
  // dp 2 x tp 2: tp groups are a node's two ranks, dp groups one rank of
  // each node.
  expectPlaced(layout(2, 1, 2), MeshAxis::TP, twoByTwo, 1, 2);
  expectPlaced(layout(2, 1, 2), MeshAxis::DP, twoByTwo, 2, 1);
  EXPECT_FALSE(groupSpansNodes(layout(2, 1, 2), MeshAxis::TP, twoByTwo));
  EXPECT_TRUE(groupSpansNodes(layout(2, 1, 2), MeshAxis::DP, twoByTwo));
  // dp 4: one group, two ranks on each node.
  expectPlaced(layout(4, 1, 1), MeshAxis::DP, twoByTwo, 2, 2);
  // dp 2 x pp 2: a node holds both stages of one replica.
  expectPlaced(layout(2, 2, 1), MeshAxis::PP, twoByTwo, 1, 2);
  expectPlaced(layout(2, 2, 1), MeshAxis::DP, twoByTwo, 2, 1);
  // pp 2 x tp 2: the stages on different nodes.
  expectPlaced(layout(1, 2, 2), MeshAxis::PP, twoByTwo, 2, 1);
  // 4 nodes of 2: dp 8 spans all four, two ranks on each.
  expectPlaced(layout(8, 1, 1), MeshAxis::DP, cluster(4, 2), 4, 2);
  // One node: nothing spans.
  expectPlaced(layout(2, 2, 2), MeshAxis::DP, cluster(1, 8), 1, 2);
}

} // namespace
