#include <cmath>
#include <memory>
#include <vector>

#include "core/groups/image_distribution.h"
#include "core/groups/image_transform.h"
#include "core/groups/scalar_distribution.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

constexpr double kPi = 3.14159265358979323846;
using SD = ScalarDistribution;

TEST(ScalarDistributionTest, UniformStaysInRangeWithTheRightMean) {
  const SD u = SD::Uniform(-0.35, 0.35);
  Rng rng(1);
  const int n = 50000;
  double sum = 0.0, lo = 1e9, hi = -1e9;
  for (int i = 0; i < n; ++i) {
    const double v = u.Sample(rng);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -0.35);
  EXPECT_LT(hi, 0.35);
  EXPECT_LT(lo, -0.34);  // the draws reach both ends
  EXPECT_GT(hi, 0.34);
  EXPECT_NEAR(sum / n, 0.0, 0.005);  // sd of the mean = 0.7/sqrt(12 n) ≈ 0.0009
}

TEST(ScalarDistributionTest, VonMisesHasTheRightCircularMeanAndConcentration) {
  // E[cos(θ − μ)] = I1(κ)/I0(κ) = 0.697775 for κ = 2.
  const SD vm = SD::VonMises(0.5, 2.0);
  Rng rng(2);
  const int n = 50000;
  double c = 0.0, s = 0.0;
  for (int i = 0; i < n; ++i) {
    const double t = vm.Sample(rng);
    ASSERT_LE(std::abs(t), kPi + 1e-12);
    c += std::cos(t);
    s += std::sin(t);
  }
  EXPECT_NEAR(std::atan2(s, c), 0.5, 0.02);
  EXPECT_NEAR(std::hypot(c, s) / n, 0.697775, 0.01);
}

TEST(ScalarDistributionTest, NormalAndLogNormalMoments) {
  Rng rng(3);
  const int n = 50000;
  double s = 0.0, s2 = 0.0, log_sum = 0.0, log_sum2 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double v = SD::Normal(1.0, 0.3).Sample(rng);
    s += v;
    s2 += v * v;
    const double a = SD::LogNormal(0.1, 0.3).Sample(rng);
    ASSERT_GT(a, 0.0);
    log_sum += std::log(a);
    log_sum2 += std::log(a) * std::log(a);
  }
  EXPECT_NEAR(s / n, 1.0, 0.01);
  EXPECT_NEAR(std::sqrt(s2 / n - (s / n) * (s / n)), 0.3, 0.01);
  EXPECT_NEAR(log_sum / n, 0.1, 0.01);
  EXPECT_NEAR(std::sqrt(log_sum2 / n - (log_sum / n) * (log_sum / n)), 0.3, 0.01);
}

TEST(ScalarDistributionTest, FixedDrawsNothingAndSeededDrawsRepeat) {
  Rng a(4), b(4);
  EXPECT_EQ(SD::Fixed(2.5).Sample(a), 2.5);
  EXPECT_EQ(a.NextU64(), b.NextU64());  // Fixed consumed no randomness
  for (const SD& d :
       {SD::Uniform(0, 1), SD::VonMises(0, 3), SD::Normal(0, 1), SD::LogNormal(0, 1)}) {
    Rng x(5), y(5);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(d.Sample(x), d.Sample(y)) << d.name();
  }
}

TEST(ScalarDistributionTest, SymmetryPredicates) {
  EXPECT_TRUE(SD::Uniform(-3, 3).SymmetricAboutZero());
  EXPECT_FALSE(SD::Uniform(-3, 2).SymmetricAboutZero());
  EXPECT_TRUE(SD::Normal(0, 2).SymmetricAboutZero());
  EXPECT_FALSE(SD::Normal(0.1, 2).SymmetricAboutZero());
  EXPECT_TRUE(SD::Fixed(0).SymmetricAboutZero());

  EXPECT_TRUE(SD::VonMises(0, 0.2).SymmetricAngle());
  EXPECT_TRUE(SD::VonMises(kPi, 5).SymmetricAngle());
  EXPECT_TRUE(SD::VonMises(1.0, 0).SymmetricAngle());  // κ = 0 is uniform on the circle
  EXPECT_FALSE(SD::VonMises(1.0, 0.5).SymmetricAngle());
  EXPECT_TRUE(SD::Uniform(0, 2 * kPi).SymmetricAngle());
  EXPECT_TRUE(SD::Uniform(-0.35, 0.35).SymmetricAngle());
  EXPECT_FALSE(SD::Uniform(0, 1).SymmetricAngle());

  EXPECT_TRUE(SD::LogNormal(0, 0.3).SymmetricUnderReciprocal());
  EXPECT_FALSE(SD::LogNormal(0.2, 0.3).SymmetricUnderReciprocal());
  EXPECT_TRUE(SD::Fixed(1).SymmetricUnderReciprocal());
  EXPECT_FALSE(SD::Uniform(0.8, 1.25).SymmetricUnderReciprocal());
}

ImageTransformDistribution MakeImageDist(ImageTransformLaw law) {
  return ImageTransformDistribution(std::make_unique<ImageTransform>(28, 28, 1), law);
}

TEST(ImageTransformDistributionTest, SymmetricExactlyWhenInverseHasTheSameLaw) {
  ImageTransformLaw law;
  EXPECT_TRUE(MakeImageDist(law).symmetric());  // point mass at the identity
  law.rotation = SD::VonMises(0, 0.2);
  EXPECT_TRUE(MakeImageDist(law).symmetric());
  law.scale = SD::LogNormal(0, 0.3);
  EXPECT_TRUE(MakeImageDist(law).symmetric());  // (θ, 0, a)⁻¹ = (−θ, 0, 1/a)
  law.translation_x = law.translation_y = SD::Normal(0, 0.3);
  EXPECT_FALSE(MakeImageDist(law).symmetric());  // t⁻¹ = −R(−θ)t/a couples t with a
  law.scale = SD::Fixed(1);
  EXPECT_TRUE(MakeImageDist(law).symmetric());  // isotropic Gaussian t
  law.translation_y = SD::Normal(0, 0.5);
  EXPECT_FALSE(MakeImageDist(law).symmetric());  // anisotropic t, random θ
  law.translation_x = law.translation_y = SD::Uniform(-3, 3);
  EXPECT_FALSE(MakeImageDist(law).symmetric());  // a square is not rotation invariant
  law.rotation = SD::Fixed(0);
  EXPECT_TRUE(MakeImageDist(law).symmetric());  // pure translations, symmetric range
  law.rotation = SD::Uniform(0.1, 0.5);
  law.translation_x = law.translation_y = SD::Fixed(0);
  EXPECT_FALSE(MakeImageDist(law).symmetric());
}

// Empirical check of the documentation: E[t_x(g⁻¹)²] equals E[t_x(g)²] for
// the symmetric law and differs (by E[1/a²] = e^{2σ²}) when the scale is random.
TEST(ImageTransformDistributionTest, InverseMomentsAgreeWithSymmetric) {
  const ImageTransform action(28, 28, 1);
  ImageTransformLaw law;
  law.rotation = SD::VonMises(0, 2);
  law.translation_x = law.translation_y = SD::Normal(0, 1.5);
  const double ls = 0.5;
  for (bool random_scale : {false, true}) {
    law.scale = random_scale ? SD::LogNormal(0, ls) : SD::Fixed(1);
    const ImageTransformDistribution dist = MakeImageDist(law);
    Rng rng(6);
    double fwd = 0.0, inv = 0.0;
    const int n = 40000;
    for (const GroupElement& g : dist.Sample(n, rng)) {
      fwd += g.params[1] * g.params[1];
      const double tx = action.Inverse(g).params[1];
      inv += tx * tx;
    }
    const double ratio = inv / fwd;
    if (random_scale) {
      EXPECT_FALSE(dist.symmetric());
      EXPECT_NEAR(ratio, std::exp(2 * ls * ls), 0.08);
    } else {
      EXPECT_TRUE(dist.symmetric());
      EXPECT_NEAR(ratio, 1.0, 0.03);
    }
  }
}

TEST(ImageTransformDistributionTest, DrawsFollowTheFactorsAndRepeatPerSeed) {
  ImageTransformLaw law;
  law.rotation = SD::Uniform(-20 * kPi / 180, 20 * kPi / 180);
  law.translation_x = law.translation_y = SD::Uniform(-3, 3);
  const ImageTransformDistribution dist = MakeImageDist(law);
  EXPECT_FALSE(dist.enumerable());
  EXPECT_FALSE(dist.depends_on_input());
  Rng rng(7);
  const std::vector<GroupElement> draws = dist.Sample(2000, rng);
  for (const GroupElement& g : draws) {
    ASSERT_EQ(g.params.size(), 4u);
    EXPECT_LE(std::abs(g.params[0]), 20 * kPi / 180);
    EXPECT_LE(std::abs(g.params[1]), 3.0);
    EXPECT_LE(std::abs(g.params[2]), 3.0);
    EXPECT_EQ(g.params[3], 1.0);
  }
  Rng a(8), b(8);
  EXPECT_EQ(dist.Sample(30, a), dist.Sample(30, b));
}

}  // namespace
}  // namespace invariant
