#include <cmath>
#include <memory>
#include <vector>

#include "core/groups/permutation_actions.h"
#include "core/groups/permutation_distributions.h"
#include "gtest/gtest.h"
#include "tests/unit/groups/group_test_util.h"

namespace invariant {
namespace {

using testing_util::Act;

constexpr int64_t kN = 6;

// A symmetric n × n matrix whose rows have distinct norms.
std::vector<float> CoulombLikeMatrix(uint64_t seed) {
  Rng rng(seed);
  std::vector<float> m(kN * kN);
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      const float v = static_cast<float>(rng.Uniform(0.1, 1.0) * (1 + i % 4));
      m[i * kN + j] = m[j * kN + i] = v;
    }
  }
  return m;
}

std::vector<double> RowNorms(const std::vector<float>& m) {
  std::vector<double> norms(kN);
  for (int64_t i = 0; i < kN; ++i) {
    norms[i] = std::sqrt(testing_util::Dot(&m[i * kN], &m[i * kN], kN));
  }
  return norms;
}

NoisySort MakeSort(double sigma) {
  return NoisySort(std::make_unique<MatrixPermutation>(kN), sigma);
}

TEST(NoisySortTest, DependsOnInputAndIsNotEnumerable) {
  NoisySort sort = MakeSort(0.5);
  EXPECT_TRUE(sort.depends_on_input());
  EXPECT_FALSE(sort.enumerable());
  EXPECT_FALSE(sort.symmetric());
  EXPECT_EQ(sort.action().dim(), kN * kN);
}

TEST(NoisySortTest, SigmaZeroOrdersRowsByDescendingNorm) {
  NoisySort sort = MakeSort(0.0);
  const std::vector<float> m = CoulombLikeMatrix(1);
  Rng rng(2);
  const std::vector<GroupElement> draws = sort.SampleFor(m.data(), 3, rng);
  ASSERT_EQ(draws.size(), 3u);
  EXPECT_EQ(draws[0], draws[1]);
  EXPECT_EQ(draws[0], draws[2]);
  const std::vector<float> sorted = Act(sort.action(), draws[0], m);
  const std::vector<double> norms = RowNorms(sorted);
  for (int64_t i = 1; i < kN; ++i) EXPECT_GT(norms[i - 1], norms[i]) << "row " << i;
  // Symmetric in, symmetric out (rows and columns move together).
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < kN; ++j) EXPECT_EQ(sorted[i * kN + j], sorted[j * kN + i]);
  }
}

TEST(NoisySortTest, SigmaZeroSortIsInvariantToPermutingTheInput) {
  NoisySort sort = MakeSort(0.0);
  const std::vector<float> m = CoulombLikeMatrix(3);
  Rng rng(4);
  const std::vector<float> reference = Act(sort.action(), sort.SampleFor(m.data(), 1, rng)[0], m);
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<float> shuffled = Act(sort.action(), RandomPermutation(kN, rng), m);
    const GroupElement g = sort.SampleFor(shuffled.data(), 1, rng)[0];
    EXPECT_EQ(Act(sort.action(), g, shuffled), reference) << "trial " << trial;
  }
}

TEST(NoisySortTest, NoiseReordersCloseRowsOnlyAndDrawsRepeatPerSeed) {
  const std::vector<float> m = CoulombLikeMatrix(5);
  const std::vector<double> norms = RowNorms(m);
  // Tiny noise relative to the norm gaps: same order as the exact sort.
  double min_gap = 1e9;
  for (int64_t i = 0; i < kN; ++i) {
    for (int64_t j = 0; j < i; ++j) min_gap = std::min(min_gap, std::abs(norms[i] - norms[j]));
  }
  ASSERT_GT(min_gap, 1e-3);
  Rng rng(6);
  const GroupElement exact = MakeSort(0.0).SampleFor(m.data(), 1, rng)[0];
  for (const GroupElement& g : MakeSort(min_gap * 1e-4).SampleFor(m.data(), 20, rng)) {
    EXPECT_EQ(g, exact);
  }
  // Large noise: valid permutations, not all the same, and seeded.
  NoisySort noisy = MakeSort(10.0);
  Rng a(7), b(7);
  const std::vector<GroupElement> da = noisy.SampleFor(m.data(), 30, a);
  EXPECT_EQ(da, noisy.SampleFor(m.data(), 30, b));
  bool differs = false;
  for (const GroupElement& g : da) {
    ASSERT_TRUE(IsPermutation(g, kN));
    differs |= !(g == da[0]);
  }
  EXPECT_TRUE(differs);
}

TEST(NoisySortTest, NonFiniteRowsStillGiveAPermutation) {
  std::vector<float> m = CoulombLikeMatrix(9);
  m[2 * kN + 1] = std::nanf("");
  Rng rng(10);
  const GroupElement g = MakeSort(0.5).SampleFor(m.data(), 1, rng)[0];
  ASSERT_TRUE(IsPermutation(g, kN));
  EXPECT_EQ(g.params[2], kN - 1);  // the NaN row is ranked last
}

TEST(NoisySortTest, SampleWithoutInputGivesPermutations) {
  NoisySort sort = MakeSort(1.0);
  Rng rng(8);
  const std::vector<GroupElement> draws = sort.Sample(5, rng);
  ASSERT_EQ(draws.size(), 5u);
  for (const GroupElement& g : draws) EXPECT_TRUE(IsPermutation(g, kN));
}

}  // namespace
}  // namespace invariant
