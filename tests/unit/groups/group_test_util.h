// group_test_util.h: shared helpers for the groups_test binary: seeded test
// vectors and the group-axiom checks every exactly unitary action must pass.
#ifndef INVARIANT_TESTS_UNIT_GROUPS_GROUP_TEST_UTIL_H_
#define INVARIANT_TESTS_UNIT_GROUPS_GROUP_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "core/base/random.h"
#include "core/groups/group.h"
#include "gtest/gtest.h"

namespace invariant {
namespace testing_util {

// n × d standard-normal floats from a seeded Rng.
inline std::vector<float> RandomVectors(int64_t n, int64_t d, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n * d));
  for (float& f : v) f = static_cast<float>(rng.Normal());
  return v;
}

// g·x for n vectors of the action's dim.
inline std::vector<float> Act(const GroupAction& action, const GroupElement& g,
                              const std::vector<float>& x) {
  std::vector<float> out(x.size());
  action.Apply(g, static_cast<int64_t>(x.size()) / action.dim(), x.data(), out.data());
  return out;
}

inline double Dot(const float* a, const float* b, int64_t d) {
  double s = 0.0;
  for (int64_t i = 0; i < d; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Checks, for every element drawn: identity acts as the identity, Compose
// matches applying twice, Inverse undoes, and ⟨g·x, g·z⟩ = ⟨x, z⟩. All
// comparisons of vectors are exact (these actions only move and negate).
inline void ExpectExactGroupAxioms(const GroupAction& action,
                                   const std::vector<GroupElement>& elements, uint64_t seed) {
  ASSERT_TRUE(action.exactly_unitary()) << action.name();
  const int64_t d = action.dim();
  const std::vector<float> x = RandomVectors(3, d, seed);
  EXPECT_EQ(Act(action, action.Identity(), x), x) << action.name();
  for (size_t k = 0; k < elements.size(); ++k) {
    const GroupElement& a = elements[k];
    const GroupElement& b = elements[(k * 7 + 3) % elements.size()];
    const std::vector<float> ax = Act(action, a, x);
    EXPECT_EQ(Act(action, action.Compose(a, b), x), Act(action, a, Act(action, b, x)))
        << action.name() << " element " << k;
    EXPECT_EQ(Act(action, action.Inverse(a), ax), x) << action.name() << " element " << k;
    EXPECT_EQ(action.Compose(a, action.Inverse(a)), action.Identity()) << action.name();
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        const double before = Dot(x.data() + i * d, x.data() + j * d, d);
        const double after = Dot(ax.data() + i * d, ax.data() + j * d, d);
        EXPECT_NEAR(after, before, 1e-12 * (1.0 + std::abs(before))) << action.name();
      }
    }
    // Exactly unitary actions here move and negate coordinates: the multiset
    // of magnitudes is unchanged, bit for bit.
    std::vector<float> mx(x.begin(), x.begin() + d), mgx(ax.begin(), ax.begin() + d);
    for (float& v : mx) v = std::abs(v);
    for (float& v : mgx) v = std::abs(v);
    std::sort(mx.begin(), mx.end());
    std::sort(mgx.begin(), mgx.end());
    EXPECT_EQ(mx, mgx) << action.name();
  }
}

// Checks that an enumeration has `expected_size` distinct elements, holds
// the identity and is closed under composition and inversion.
inline void ExpectClosedEnumeration(const GroupDistribution& dist, size_t expected_size) {
  ASSERT_TRUE(dist.enumerable()) << dist.name();
  const std::vector<GroupElement> all = dist.Enumerate();
  ASSERT_EQ(all.size(), expected_size) << dist.name();
  std::set<std::vector<double>> distinct;
  for (const GroupElement& g : all) distinct.insert(g.params);
  EXPECT_EQ(distinct.size(), expected_size) << dist.name() << " has duplicates";
  const GroupAction& action = dist.action();
  EXPECT_EQ(distinct.count(action.Identity().params), 1u) << dist.name();
  for (const GroupElement& a : all) {
    ASSERT_EQ(distinct.count(action.Inverse(a).params), 1u) << dist.name();
    for (const GroupElement& b : all) {
      ASSERT_EQ(distinct.count(action.Compose(a, b).params), 1u) << dist.name();
    }
  }
}

}  // namespace testing_util
}  // namespace invariant

#endif  // INVARIANT_TESTS_UNIT_GROUPS_GROUP_TEST_UTIL_H_
