// The plain encoders: over the identity group with r = 1, random Fourier
// features are the textbook map cos/sin(ωᵀx)/√s with ω as drawn, bit for bit.
#include <cmath>
#include <vector>

#include "core/base/random.h"
#include "core/encoders/fast_math.h"
#include "core/encoders/templates.h"
#include "core/model/encoder_kinds.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

constexpr int64_t kDim = 37;
constexpr int64_t kFeatures = 50;

v1::EncoderSpec PlainRandomFourier() {
  v1::EncoderSpec spec;
  spec.mutable_random_fourier()->set_num_features(kFeatures);
  spec.mutable_random_fourier()->set_num_group_elements(1);
  spec.mutable_random_fourier()->set_sigma(0.7);
  spec.mutable_group()->mutable_identity()->set_dim(kDim);
  spec.set_seed(11);
  return spec;
}

TEST(PlainEncoderTest, RandomFourierOverTheIdentityIsTheTextbookMapBitForBit) {
  v1::EncoderSpec spec = PlainRandomFourier();
  const EncoderKind* kind = *FindEncoderKind(spec, "encoder");
  ASSERT_TRUE(kind->validate_config(spec).ok());
  EncoderTrainingData data;
  data.input_dim = kDim;
  ModelTensors tensors;
  ASSERT_TRUE(kind->draw(spec, data, tensors).ok());
  auto encoder = kind->load(spec, kDim, tensors);
  ASSERT_TRUE(encoder.ok()) << encoder.status();

  // The frequencies as drawn: ω_j ~ N(0, σ⁻² I), untransformed in the bank.
  Rng rng = Rng::ForStream(spec.seed(), 1);
  FloatMatrix omega = *SampleGaussianTemplates(kFeatures, kDim, 0.7, rng);
  const FloatMatrix& bank = tensors.f32.at("encoder/bank");
  ASSERT_EQ(bank.rows(), kFeatures);
  for (int64_t i = 0; i < kFeatures * kDim; ++i) ASSERT_EQ(bank.data()[i], omega.data()[i]) << i;

  Rng data_rng(3);
  const int64_t n = 9;
  std::vector<float> x(n * kDim);
  for (float& v : x) v = static_cast<float>(data_rng.Normal());
  std::vector<float> got(n * 2 * kFeatures);
  (*encoder)->Encode(n, x.data(), got.data());
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(kFeatures)));
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> p(kFeatures), sines(kFeatures), cosines(kFeatures);
    for (int64_t j = 0; j < kFeatures; ++j) {
      float acc = 0.0f;  // ⟨ω_j, x⟩, fused multiply-adds with k ascending
      for (int64_t k = 0; k < kDim; ++k) {
        acc = std::fma(x[i * kDim + k], omega.data()[j * kDim + k], acc);
      }
      p[j] = acc;
    }
    FastSinCos(kFeatures, p.data(), sines.data(), cosines.data());
    for (int64_t j = 0; j < kFeatures; ++j) {
      EXPECT_EQ(got[i * 2 * kFeatures + j], cosines[j] * scale) << i << "," << j;
      EXPECT_EQ(got[i * 2 * kFeatures + kFeatures + j], sines[j] * scale) << i << "," << j;
      // and the library's cos/sin are the textbook ones to float accuracy
      EXPECT_NEAR(got[i * 2 * kFeatures + j], std::cos(static_cast<double>(p[j])) * scale, 2e-6);
    }
  }
}

TEST(PlainEncoderTest, TheIdentityGroupTakesOneElementOnly) {
  v1::EncoderSpec spec = PlainRandomFourier();
  spec.mutable_random_fourier()->set_num_group_elements(4);
  const EncoderKind* kind = *FindEncoderKind(spec, "encoder");
  EXPECT_THAT(std::string(kind->validate_config(spec).message()),
              ::testing::HasSubstr("encoder.random_fourier.num_group_elements must be in [1, 1]"));
}

}  // namespace
}  // namespace invariant
