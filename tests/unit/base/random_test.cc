#include "core/base/random.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(RngTest, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.NextU64();
    EXPECT_EQ(x, b.NextU64());
    differs |= x != c.NextU64();
  }
  EXPECT_TRUE(differs);
}

TEST(RngTest, StreamsDiffer) {
  Rng a = Rng::ForStream(7, 0), b = Rng::ForStream(7, 1);
  EXPECT_NE(a.NextU64(), b.NextU64());
}

TEST(RngTest, NormalMoments) {
  Rng rng(1);
  const int n = 200000;
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double z = rng.Normal();
    s += z;
    s2 += z * z;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
}

TEST(RngTest, UniformIntCoversRangeEvenly) {
  Rng rng(3);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) ++counts[rng.UniformInt(7)];
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
}

TEST(RngTest, VonMisesMeanResultantLength) {
  // E[cos θ] = I1(κ)/I0(κ); for κ = 2 that is 0.697775.
  Rng rng(5);
  const int n = 100000;
  double c = 0, s = 0;
  for (int i = 0; i < n; ++i) {
    const double t = rng.VonMises(0.0, 2.0);
    ASSERT_LE(std::abs(t), M_PI + 1e-12);
    c += std::cos(t);
    s += std::sin(t);
  }
  EXPECT_NEAR(c / n, 0.697775, 0.01);
  EXPECT_NEAR(s / n, 0.0, 0.01);
}

}  // namespace
}  // namespace invariant
