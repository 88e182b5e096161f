#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "core/groups/permutation_actions.h"
#include "core/groups/permutation_distributions.h"
#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using testing_util::Act;
using testing_util::ExpectClosedEnumeration;
using testing_util::ExpectExactGroupAxioms;

TEST(CoordinatePermutationTest, MovesCoordinateIToPositionPiOfI) {
  CoordinatePermutation action(4);
  const GroupElement g = PermutationElement({2, 0, 3, 1});
  const std::vector<float> x = {10, 11, 12, 13};
  // (g·x)[π(i)] = x[i]: x0 → 2, x1 → 0, x2 → 3, x3 → 1.
  EXPECT_EQ(Act(action, g, x), (std::vector<float>{11, 13, 10, 12}));
  EXPECT_EQ(action.Inverse(g), PermutationElement({1, 3, 0, 2}));
  EXPECT_EQ(action.name(), "coordinate_permutation(4)");
}

TEST(CoordinatePermutationTest, GroupAxiomsHoldExactly) {
  UniformPermutations dist(std::make_unique<CoordinatePermutation>(11));
  Rng rng(1);
  ExpectExactGroupAxioms(dist.action(), dist.Sample(20, rng), 2);
}

TEST(BlockPermutationTest, MovesWholeBlocks) {
  BlockPermutation action(3, 2);
  EXPECT_EQ(action.dim(), 6);
  const GroupElement g = PermutationElement({1, 2, 0});
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};
  // Block 0 → position 1, block 1 → 2, block 2 → 0.
  EXPECT_EQ(Act(action, g, x), (std::vector<float>{4, 5, 0, 1, 2, 3}));
}

TEST(BlockPermutationTest, XpermGroupAxiomsAndEnumeration) {
  UniformPermutations dist(std::make_unique<BlockPermutation>(5, 8));
  EXPECT_EQ(dist.action().dim(), 40);
  EXPECT_TRUE(dist.symmetric());
  ExpectClosedEnumeration(dist, 120);
  ExpectExactGroupAxioms(dist.action(), dist.Enumerate(), 3);
  EXPECT_EQ(dist.Enumerate().front(), dist.action().Identity());
}

TEST(MatrixPermutationTest, PermutesRowsAndColumnsTogether) {
  MatrixPermutation action(3);
  EXPECT_EQ(action.dim(), 9);
  const GroupElement g = PermutationElement({2, 0, 1});
  std::vector<float> m(9);
  for (int i = 0; i < 9; ++i) m[i] = static_cast<float>(i);
  const std::vector<float> out = Act(action, g, m);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(out[static_cast<int>(g.params[i]) * 3 + static_cast<int>(g.params[j])],
                m[i * 3 + j]);
    }
  }
}

TEST(MatrixPermutationTest, GroupAxiomsAndSmallEnumeration) {
  UniformPermutations dist(std::make_unique<MatrixPermutation>(4));
  ExpectClosedEnumeration(dist, 24);
  Rng rng(4);
  ExpectExactGroupAxioms(dist.action(), dist.Sample(10, rng), 5);
}

TEST(UniformPermutationsTest, EnumerableOnlyUpToDegreeEight) {
  EXPECT_TRUE(UniformPermutations(std::make_unique<CoordinatePermutation>(8)).enumerable());
  UniformPermutations big(std::make_unique<CoordinatePermutation>(9));
  EXPECT_FALSE(big.enumerable());
  EXPECT_TRUE(big.Enumerate().empty());
}

TEST(UniformPermutationsTest, DrawsAreUniformOverTheSixPermutationsOfThree) {
  UniformPermutations dist(std::make_unique<CoordinatePermutation>(3));
  Rng rng(9);
  std::map<std::vector<double>, int> counts;
  const int draws = 60000;
  for (const GroupElement& g : dist.Sample(draws, rng)) {
    ASSERT_TRUE(IsPermutation(g, 3));
    ++counts[g.params];
  }
  ASSERT_EQ(counts.size(), 6u);
  // Binomial sd = sqrt(60000 · 1/6 · 5/6) ≈ 91; allow ~5 sd.
  for (const auto& [params, c] : counts) EXPECT_NEAR(c, draws / 6, 450);
}

TEST(PermutationHelpersTest, IsPermutationRejectsMalformedElements) {
  EXPECT_TRUE(IsPermutation(PermutationElement({1, 0, 2}), 3));
  EXPECT_FALSE(IsPermutation(PermutationElement({1, 1, 2}), 3));
  EXPECT_FALSE(IsPermutation(PermutationElement({0, 1, 3}), 3));
  EXPECT_FALSE(IsPermutation(PermutationElement({0, 1}), 3));
  EXPECT_FALSE(IsPermutation(GroupElement{{0.5, 1, 2}}, 3));
}

TEST(PermutationHelpersTest, SeededDrawsRepeatBitForBit) {
  UniformPermutations dist(std::make_unique<BlockPermutation>(5, 8));
  Rng a(17), b(17), c(18);
  const auto da = dist.Sample(50, a);
  EXPECT_EQ(da, dist.Sample(50, b));
  EXPECT_NE(da, dist.Sample(50, c));
}

}  // namespace
}  // namespace invariant
