#include <cmath>
#include <memory>
#include <vector>

#include "core/groups/cyclic_shift.h"
#include "core/groups/sign_flip.h"
#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using testing_util::Act;
using testing_util::ExpectClosedEnumeration;
using testing_util::ExpectExactGroupAxioms;

TEST(CyclicShiftTest, PositiveShiftMovesTheSignalRight) {
  CyclicShift action(5);
  const std::vector<float> x = {0, 1, 2, 3, 4};
  EXPECT_EQ(Act(action, action.Shift(1), x), (std::vector<float>{4, 0, 1, 2, 3}));
  EXPECT_EQ(Act(action, action.Shift(-2), x), (std::vector<float>{2, 3, 4, 0, 1}));
  EXPECT_EQ(action.Shift(-2), action.Shift(3));
  EXPECT_EQ(Act(action, GroupElement{{-7.0}}, x), Act(action, action.Shift(3), x));
}

TEST(CyclicShiftTest, GroupAxiomsAndFullEnumeration) {
  UniformShifts all(std::make_unique<CyclicShift>(13), 0);
  ExpectClosedEnumeration(all, 13);
  ExpectExactGroupAxioms(all.action(), all.Enumerate(), 1);
}

TEST(CyclicShiftTest, LocalShiftsStayInRangeAndCoverIt) {
  const int64_t length = 20, k = 3;
  UniformShifts local(std::make_unique<CyclicShift>(length), k);
  EXPECT_TRUE(local.symmetric());
  ASSERT_TRUE(local.enumerable());
  const std::vector<GroupElement> listed = local.Enumerate();
  ASSERT_EQ(listed.size(), 2u * k + 1);
  EXPECT_EQ(listed[k], local.action().Identity());
  Rng rng(2);
  std::vector<int> counts(2 * k + 1, 0);
  const int draws = 14000;
  for (const GroupElement& g : local.Sample(draws, rng)) {
    int64_t s = static_cast<int64_t>(g.params[0]);
    if (s > length / 2) s -= length;
    ASSERT_LE(std::abs(s), k);
    ++counts[s + k];
  }
  for (int c : counts) EXPECT_NEAR(c, draws / (2 * k + 1), 250);
}

TEST(SignFlipTest, NegatesFlippedCoordinates) {
  SignFlip action(3);
  EXPECT_EQ(Act(action, GroupElement{{1, -1, -1}}, {1, 2, -3}), (std::vector<float>{1, -2, 3}));
}

TEST(SignFlipTest, GroupAxiomsAndEnumeration) {
  UniformSignFlips flips(std::make_unique<SignFlip>(8));
  ExpectClosedEnumeration(flips, 256);
  ExpectExactGroupAxioms(flips.action(), flips.Enumerate(), 3);
  EXPECT_EQ(flips.Enumerate().front(), flips.action().Identity());
  EXPECT_EQ(UniformSignFlips(std::make_unique<SignFlip>(10)).Enumerate().size(), 1024u);
}

TEST(SignFlipTest, EnumerableOnlyUpToTwentyCoordinates) {
  EXPECT_TRUE(UniformSignFlips(std::make_unique<SignFlip>(20)).enumerable());
  EXPECT_FALSE(UniformSignFlips(std::make_unique<SignFlip>(21)).enumerable());
}

TEST(SignFlipTest, SignsAreFairAndSeeded) {
  UniformSignFlips flips(std::make_unique<SignFlip>(70));
  Rng rng(4);
  const int draws = 4000;
  std::vector<int> negatives(70, 0);
  for (const GroupElement& g : flips.Sample(draws, rng)) {
    for (size_t i = 0; i < g.params.size(); ++i) {
      ASSERT_TRUE(g.params[i] == 1.0 || g.params[i] == -1.0);
      negatives[i] += g.params[i] < 0;
    }
  }
  // sd = sqrt(4000/4) ≈ 32; allow 5 sd.
  for (int c : negatives) EXPECT_NEAR(c, draws / 2, 160);
  Rng a(5), b(5);
  EXPECT_EQ(flips.Sample(10, a), flips.Sample(10, b));
}

}  // namespace
}  // namespace invariant
