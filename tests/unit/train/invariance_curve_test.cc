// The invariance curve of a certificate: the generators and sizes of each
// group kind, zero for an invariant function, growing for one that is not,
// and the same curve for the same seed.
#include "train/pipeline/invariance_curve.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "train/pipeline/certificate.h"

namespace invariant::train {
namespace {

v1::GroupSpec Group(const std::string& text) {
  v1::GroupSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

v1::CertificateConfig Config(int64_t points) {
  v1::CertificateConfig c;
  c.set_num_points(points);
  c.set_num_group_elements(16);
  return c;
}

FloatMatrix Rows(int64_t n, int64_t d) {
  FloatMatrix x = FloatMatrix::Zeros(n, d);
  Rng rng(5);
  for (int64_t i = 0; i < n * d; ++i) x.mutable_data()[i] = static_cast<float>(rng.Normal());
  return x;
}

// The certificate of f against `group` (as a certificate.group).
v1::InvarianceCertificate Certify(const BatchFunction& f, int64_t outputs, const std::string& group,
                                  const FloatMatrix& x) {
  v1::CertificateConfig config = Config(x.rows());
  *config.mutable_group() = Group(group);
  v1::EncoderSpec spec;
  auto c = CertifyPredictor(f, outputs, spec, x, config, 11);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : v1::InvarianceCertificate();
}

TEST(InvarianceCurveTest, ImageGroupHasOnePathPerSetFactorUpToItsReach) {
  auto paths = GroupPaths(Group(R"pb(image {
                                       height: 8
                                       width: 8
                                       channels: 1
                                       rotation { uniform { low: -0.5 high: 0.25 } }
                                       translation_y { fixed { value: -2 } }
                                       scale { log_normal { log_mean: 0 log_stddev: 0.1 } }
                                     })pb"),
                          1);
  ASSERT_TRUE(paths.ok()) << paths.status();
  ASSERT_EQ(paths->size(), 3u);  // translation_x unset: no path
  EXPECT_EQ((*paths)[0].generator, "rotation");
  EXPECT_EQ((*paths)[0].unit, "degrees");
  ASSERT_EQ((*paths)[0].sizes.size(), static_cast<size_t>(kContinuousSizes));
  EXPECT_EQ((*paths)[0].sizes.front(), 0);
  EXPECT_NEAR((*paths)[0].sizes.back(), 0.5 * 180 / M_PI, 1e-9);
  EXPECT_EQ((*paths)[1].generator, "translation_y");
  EXPECT_NEAR((*paths)[1].sizes.back(), 2, 1e-12);
  EXPECT_EQ((*paths)[2].generator, "scale");
  EXPECT_NEAR((*paths)[2].sizes.front(), 1, 1e-12);  // the identity factor
  EXPECT_NEAR((*paths)[2].sizes.back(), std::exp(0.2), 1e-12);
}

TEST(InvarianceCurveTest, DiscreteGroupsCountTheirSteps) {
  auto shifts = GroupPaths(Group("cyclic_shift { length: 10 max_shift: 3 }"), 1);
  ASSERT_TRUE(shifts.ok());
  ASSERT_EQ(shifts->size(), 1u);
  EXPECT_EQ((*shifts)[0].sizes, (std::vector<double>{0, 1, 2, 3}));
  auto blocks = GroupPaths(Group("block_permutation { num_blocks: 5 block_size: 2 }"), 1);
  ASSERT_TRUE(blocks.ok());
  ASSERT_EQ(blocks->size(), 1u);
  EXPECT_EQ((*blocks)[0].generator, "transpositions");
  EXPECT_EQ((*blocks)[0].sizes, (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ((*blocks)[0].elements[0].size(), 1u);  // the identity once
  EXPECT_EQ((*blocks)[0].elements[1].size(), static_cast<size_t>(kDrawsPerSize));
  auto dihedral = GroupPaths(Group("dihedral { height: 3 width: 3 channels: 1 turns: true "
                                   "flips: true }"),
                             1);
  ASSERT_TRUE(dihedral.ok());
  ASSERT_EQ(dihedral->size(), 2u);
  EXPECT_EQ((*dihedral)[0].sizes.size(), 4u);
  EXPECT_EQ((*dihedral)[1].sizes.size(), 2u);
  auto identity = GroupPaths(Group("identity { dim: 4 }"), 1);
  ASSERT_TRUE(identity.ok());
  EXPECT_TRUE(identity->empty());
}

TEST(InvarianceCurveTest, AnInvariantFunctionHasAFlatZeroCurveAndAPlainOneGrows) {
  const FloatMatrix x = Rows(40, 12);
  // The sorted values are invariant to every permutation; a weighted sum
  // with distinct weights is not.
  BatchFunction sorted = [](int64_t n, const float* in, float* out) {
    for (int64_t i = 0; i < n; ++i) {
      std::vector<float> row(in + i * 12, in + (i + 1) * 12);
      std::sort(row.begin(), row.end());
      std::copy(row.begin(), row.end(), out + i * 12);
    }
  };
  BatchFunction weighted = [](int64_t n, const float* in, float* out) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = 0;
      for (int64_t j = 0; j < 12; ++j) out[i] += static_cast<float>(j) * in[i * 12 + j];
    }
  };
  const v1::InvarianceCertificate inv = Certify(sorted, 12, "permutation { dim: 12 }", x);
  ASSERT_EQ(inv.curve_size(), kMaxWordLength + 1);
  for (const v1::InvarianceCurvePoint& p : inv.curve()) {
    EXPECT_EQ(p.generator(), "transpositions");
    EXPECT_EQ(p.relative_mean_discrepancy(), 0) << p.magnitude();
  }
  const v1::InvarianceCertificate plain = Certify(weighted, 1, "permutation { dim: 12 }", x);
  ASSERT_EQ(plain.curve_size(), kMaxWordLength + 1);
  EXPECT_EQ(plain.curve(0).relative_mean_discrepancy(), 0);  // the identity
  // More transpositions move more coordinates.
  EXPECT_GT(plain.curve(1).relative_mean_discrepancy(), 0.05);
  EXPECT_GT(plain.curve(kMaxWordLength).relative_mean_discrepancy(),
            plain.curve(1).relative_mean_discrepancy());
  EXPECT_NEAR(plain.curve(1).relative_mean_discrepancy(),
              plain.curve(1).mean_discrepancy() / plain.mean_pairwise_difference(), 1e-12);
}

TEST(InvarianceCurveTest, TheSameSeedGivesTheSameCurve) {
  const FloatMatrix x = Rows(20, 6);
  BatchFunction first = [](int64_t n, const float* in, float* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i * 6] + 0.5f * in[i * 6 + 1];
  };
  const auto a = Certify(first, 1, "sign_flip { dim: 6 }", x);
  const auto b = Certify(first, 1, "sign_flip { dim: 6 }", x);
  ASSERT_EQ(a.curve_size(), 7);  // 0 … 6 flips
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
}

}  // namespace
}  // namespace invariant::train
