//===- MeshGroupsTest.cpp - The groups of a mesh's axes -------------------===//
//
// The runtime numbers a rank's place in the group of some mesh axes the way
// the mesh is laid out (row-major, the last axis fastest) and the compiler
// numbers the groups (bit i: axis i). Checked against a brute-force listing
// of a 2 x 3 x 2 mesh's coordinates.
//
//===----------------------------------------------------------------------===//
#include "artifact/MeshGroups.h"
#include "loom/runtime/Communicator.h"
#include "loom/runtime/Manifest.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace loom::rt;

namespace {

MeshSpec mesh(std::vector<int64_t> shape) {
  MeshSpec m;
  m.shape = shape;
  for (size_t i = 0; i < shape.size(); ++i)
    m.axes.push_back("a" + std::to_string(i));
  return m;
}

TEST(MeshGroups, TensorGroupsAreConsecutiveRanks) {
  // dp=2 x tp=2: ranks 0,1 and 2,3 share a tp group; 0,2 and 1,3 a dp one.
  MeshSpec m = mesh({2, 2});
  EXPECT_EQ(groupPosition(m, 0, 0b10), std::make_pair(int64_t(0), int64_t(0)));
  EXPECT_EQ(groupPosition(m, 1, 0b10), std::make_pair(int64_t(0), int64_t(1)));
  EXPECT_EQ(groupPosition(m, 2, 0b10), std::make_pair(int64_t(1), int64_t(0)));
  EXPECT_EQ(groupPosition(m, 1, 0b01), std::make_pair(int64_t(1), int64_t(0)));
  EXPECT_EQ(groupPosition(m, 3, 0b01), std::make_pair(int64_t(1), int64_t(1)));
  EXPECT_EQ(groupSize(m, 0b01), 2);
  EXPECT_EQ(groupSize(m, 0b11), 4);
}

TEST(MeshGroups, EveryGroupHoldsTheRanksThatDifferOnlyAlongItsAxes) {
  const std::vector<int64_t> shape{2, 3, 2};
  MeshSpec m = mesh(shape);
  std::vector<std::vector<int64_t>> coords;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 2; ++c)
        coords.push_back({a, b, c}); // row-major: rank = index here
  for (unsigned mask = 1; mask < 8; ++mask) {
    std::map<int64_t, std::set<int64_t>> keysByColor;
    for (int64_t rank = 0; rank < 12; ++rank) {
      auto [color, key] = groupPosition(m, rank, mask);
      EXPECT_TRUE(keysByColor[color].insert(key).second)
          << "two ranks at one place, mask " << mask;
      for (int64_t other = 0; other < 12; ++other) {
        bool sameOutside = true;
        for (size_t i = 0; i < 3; ++i)
          if (!(mask & (1u << i)) && coords[rank][i] != coords[other][i])
            sameOutside = false;
        EXPECT_EQ(groupPosition(m, other, mask).first == color, sameOutside)
            << "ranks " << rank << " and " << other << ", mask " << mask;
      }
    }
    for (auto &[color, keys] : keysByColor) {
      EXPECT_EQ(int64_t(keys.size()), groupSize(m, mask));
      EXPECT_EQ(*keys.rbegin(), groupSize(m, mask) - 1);
    }
  }
}

TEST(MeshGroups, OneRankHasEveryGroupAsItsWorld) {
  LocalCommunicator world;
  auto groups = connectMeshGroups(world, mesh({1, 1}));
  ASSERT_EQ(groups->byId.size(), 4u);
  for (Communicator *c : groups->byId)
    EXPECT_EQ(c, &world);
  EXPECT_EQ(groups->find(4), nullptr);
  EXPECT_EQ(groups->find(-1), nullptr);
}

} // namespace
