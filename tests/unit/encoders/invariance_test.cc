// Encode(g·x) == Encode(x) for fully enumerated finite groups, and a
// shrinking invariance error for sampled groups as r grows.
#include <cmath>
#include <cstring>
#include <vector>

#include "core/groups/image_transform.h"
#include "gtest/gtest.h"
#include "tests/unit/encoders/test_util.h"

namespace invariant {
namespace {

using testing::BlockPermutationSpec;
using testing::CyclicShiftSpec;
using testing::EncodeAll;
using testing::MakeGroup;
using testing::MaxAbsDiff;
using testing::SignFlipSpec;
using testing::Transform;
using testing::UnitRows;

// Max over a few seeded group elements of |Encode(g·x) − Encode(x)|.
double InvarianceError(const Encoder& encoder, const GroupDistribution& q, const FloatMatrix& x,
                       int draws, uint64_t seed) {
  Rng rng(seed);
  const FloatMatrix base = EncodeAll(encoder, x);
  double worst = 0.0;
  for (const GroupElement& g : q.Sample(draws, rng)) {
    worst = std::max(worst, MaxAbsDiff(EncodeAll(encoder, Transform(q.action(), g, x)), base));
  }
  return worst;
}

struct FiniteGroupCase {
  const char* name;
  v1::GroupSpec spec;
};

std::vector<FiniteGroupCase> FiniteGroups() {
  return {{"block_permutation_5x8", BlockPermutationSpec(5, 8, true)},
          {"sign_flip_7", SignFlipSpec(7, true)},
          {"cyclic_shift_24", CyclicShiftSpec(24, true)}};
}

TEST(EnumeratedInvarianceTest, CdfPoolingsAreInvariant) {
  for (const FiniteGroupCase& c : FiniteGroups()) {
    auto q = MakeGroup(c.spec);
    const FloatMatrix x = UnitRows(6, q->action().dim(), 11);
    for (Pooling pooling : {Pooling::kCdf, Pooling::kMean, Pooling::kSecondMoment, Pooling::kMax}) {
      auto encoder = testing::MakeCdf(*q, pooling, 16, 0, /*enumerate=*/true, 5);
      const double err = InvarianceError(*encoder, *q, x, 8, 3);
      EXPECT_LE(err, 1e-6) << c.name << " pooling " << static_cast<int>(pooling);
      // The features are not trivially constant (mean pooling over all sign
      // flips is identically 0, which is right but proves nothing).
      if (pooling == Pooling::kMean && c.spec.has_sign_flip()) continue;
      const FloatMatrix f = EncodeAll(*encoder, x);
      double spread = 0.0;
      for (int64_t i = 0; i < f.size(); ++i) {
        spread = std::max(spread, std::abs(static_cast<double>(f.data()[i]) - f.data()[0]));
      }
      EXPECT_GT(spread, 1e-3) << c.name;
    }
  }
}

TEST(EnumeratedInvarianceTest, RandomFourierIsInvariant) {
  for (const FiniteGroupCase& c : FiniteGroups()) {
    auto q = MakeGroup(c.spec);
    const FloatMatrix x = UnitRows(6, q->action().dim(), 12);
    auto encoder = testing::MakeRandomFourier(*q, 32, 0, true, 0.7, 6);
    EXPECT_LE(InvarianceError(*encoder, *q, x, 8, 4), 2e-6) << c.name;
  }
}

TEST(EnumeratedInvarianceTest, NystromIsInvariant) {
  for (const FiniteGroupCase& c : FiniteGroups()) {
    auto q = MakeGroup(c.spec);
    const FloatMatrix x = UnitRows(6, q->action().dim(), 13);
    const FloatMatrix landmarks = UnitRows(12, q->action().dim(), 14);
    auto encoder = testing::MakeNystrom(*q, landmarks, 0, true, 0.8, 7);
    EXPECT_LE(InvarianceError(*encoder, *q, x, 8, 5), 1e-4) << c.name;
  }
}

TEST(EnumeratedInvarianceTest, NonInvariantBaselineIsNot) {
  // r = 1 with the identity (plain random Fourier) must fail the same check,
  // otherwise the invariance tests above would prove nothing.
  auto q = MakeGroup(BlockPermutationSpec(5, 8, true));
  v1::GroupSpec identity_spec = BlockPermutationSpec(1, 40, true);
  auto identity = MakeGroup(identity_spec);
  auto plain = testing::MakeRandomFourier(*identity, 32, 0, true, 0.7, 6);
  const FloatMatrix x = UnitRows(6, 40, 12);
  EXPECT_GT(InvarianceError(*plain, *q, x, 8, 4), 1e-2);
}

// Mean invariance error of RF features with r sampled shifts: it must shrink
// as r grows (Raj Thm 3.1: error ~ 1/√r for the features).
TEST(SampledInvarianceTest, ErrorShrinksAsRGrows) {
  auto q = MakeGroup(CyclicShiftSpec(32, false));
  const FloatMatrix x = UnitRows(8, 32, 21);
  std::vector<double> errors;
  for (int64_t r : {2, 8, 32, 128}) {
    auto encoder = testing::MakeRandomFourier(*q, 64, r, false, 1.0, 9);
    Rng rng(31);
    const FloatMatrix base = EncodeAll(*encoder, x);
    double total = 0.0;
    int count = 0;
    for (const GroupElement& g : q->Sample(6, rng)) {
      const FloatMatrix moved = EncodeAll(*encoder, Transform(q->action(), g, x));
      for (int64_t i = 0; i < base.size(); ++i) {
        total += std::abs(moved.data()[i] - base.data()[i]);
        ++count;
      }
    }
    errors.push_back(total / count);
  }
  for (size_t i = 1; i < errors.size(); ++i) {
    EXPECT_LT(errors[i], errors[i - 1]) << "r index " << i;
  }
  // 64× more elements: ~8× smaller error; demand at least 3×.
  EXPECT_LT(errors.back() * 3.0, errors.front());
}

// Input placement: each input gets its own draws, seeded by (model seed, its
// bytes), so the same input always gets the same features.
TEST(InputPlacementTest, SameInputSameFeatures) {
  v1::GroupSpec spec;
  spec.mutable_matrix_permutation()->set_n(5);
  spec.mutable_matrix_permutation()->set_noisy_sort_sigma(0.5);
  auto q = MakeGroup(spec);
  ASSERT_TRUE(q->depends_on_input());
  Rng rng(3);
  auto templates = SampleGaussianRejectionTemplates(12, 25, 0.5, rng);
  ASSERT_TRUE(templates.ok());
  auto projector = Projector::OverInput(*templates, 20, q, /*seed=*/77);
  ASSERT_TRUE(projector.ok()) << projector.status();
  CdfOptions options;
  options.num_bins = 8;
  options.range = 1.5;
  auto encoder = CdfEncoder::Create(options, *projector);
  ASSERT_TRUE(encoder.ok());
  const FloatMatrix x = UnitRows(5, 25, 8);
  const FloatMatrix a = EncodeAll(**encoder, x);
  const FloatMatrix b = EncodeAll(**encoder, x);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.bytes()));
  // A different model seed gives different draws.
  auto other_projector = Projector::OverInput(*templates, 20, q, /*seed=*/78);
  ASSERT_TRUE(other_projector.ok());
  auto other = CdfEncoder::Create(options, *other_projector);
  ASSERT_TRUE(other.ok());
  EXPECT_GT(MaxAbsDiff(EncodeAll(**other, x), a), 0.0);
  // CDF values are fractions k/r in [0, 1], non-decreasing along the bins.
  for (int64_t i = 0; i < a.rows(); ++i) {
    for (int64_t j = 0; j < 12; ++j) {
      const float* bins = a.row(i) + j * 17;
      for (int k = 0; k < 17; ++k) {
        EXPECT_GE(bins[k], 0.0f);
        EXPECT_LE(bins[k], 1.0f);
        if (k > 0) {
          EXPECT_GE(bins[k], bins[k - 1]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace invariant

namespace invariant {
namespace {

using testing::EncodeAll;
using testing::MakeGroup;
using testing::MakeRandomFourier;
using testing::MaxAbsDiff;
using testing::Transform;
using testing::UnitRows;

// A quarter turn moves pixels exactly, and with a stratified grid of r = 8
// angles it maps the bank's rotations onto each other: the pooled random
// Fourier features of a rotated image equal the original's up to rounding,
// while independent angles leave a sampling error.
TEST(StratifiedRotationInvarianceTest, QuarterTurnsLeaveFeaturesInPlace) {
  auto spec = [](bool stratified) {
    v1::GroupSpec s;
    v1::ImageTransformGroup* img = s.mutable_image();
    img->set_height(12);
    img->set_width(12);
    img->set_channels(1);
    img->mutable_rotation()->mutable_uniform()->set_low(0);
    img->mutable_rotation()->mutable_uniform()->set_high(2 * M_PI);
    img->set_stratified_rotation(stratified);
    return s;
  };
  const FloatMatrix x = UnitRows(6, 144, 5);
  ImageTransform turn(12, 12, 1);
  const FloatMatrix turned = Transform(turn, ImageTransform::Similarity(M_PI / 2, 0, 0, 1), x);
  double error[2];
  for (int stratified = 0; stratified < 2; ++stratified) {
    auto q = MakeGroup(spec(stratified == 1));
    auto rf = MakeRandomFourier(*q, 64, 8, false, 1.0, 9);
    const FloatMatrix a = EncodeAll(*rf, x), b = EncodeAll(*rf, turned);
    error[stratified] = MaxAbsDiff(a, b);
  }
  EXPECT_LT(error[1], 1e-5);
  EXPECT_GT(error[0], 100 * error[1] + 1e-4);
}

}  // namespace
}  // namespace invariant
