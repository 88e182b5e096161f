// The encoder-kind table covers the EncoderSpec oneof, and the featurizer
// factory's errors name what is wrong.
#include "core/model/encoder_kinds.h"

#include <set>

#include "core/model/featurizer_factory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;

TEST(EncoderKindsTest, EveryOneofFieldHasExactlyOneDescriptor) {
  const google::protobuf::OneofDescriptor* oneof =
      v1::EncoderSpec::descriptor()->FindOneofByName("params");
  ASSERT_NE(oneof, nullptr);
  ASSERT_EQ(static_cast<int>(EncoderKinds().size()), oneof->field_count());
  std::set<std::string> names;
  for (int i = 0; i < oneof->field_count(); ++i) {
    v1::EncoderSpec spec;
    spec.GetReflection()->MutableMessage(&spec, oneof->field(i));
    auto kind = FindEncoderKind(spec, "encoder");
    ASSERT_TRUE(kind.ok()) << kind.status();
    EXPECT_EQ((*kind)->name, oneof->field(i)->name());
    EXPECT_EQ(EncoderKindName(spec), oneof->field(i)->name());
    names.insert((*kind)->name);
  }
  EXPECT_EQ(names.size(), EncoderKinds().size());
}

TEST(EncoderKindsTest, NoKindIsAnErrorNamingTheFieldAndTheChoices) {
  const absl::Status s = FindEncoderKind(v1::EncoderSpec(), "manifest.encoder").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      s.message(),
      "manifest.encoder must set one of cdf, random_fourier, nystrom, spectral, patch; got none");
  EXPECT_EQ(EncoderKindName(v1::EncoderSpec()), "none");
}

TEST(EncoderKindsTest, ConfigValidationFillsDefaultsAndNamesBadFields) {
  v1::EncoderSpec spec;
  spec.mutable_cdf()->set_num_templates(3);
  spec.mutable_cdf()->set_num_group_elements(2);
  spec.mutable_cdf()->set_num_bins(4);
  const EncoderKind* kind = *FindEncoderKind(spec, "encoder");
  ASSERT_TRUE(kind->validate_config(spec).ok());
  EXPECT_EQ(spec.cdf().pooling(), v1::POOLING_CDF);
  EXPECT_EQ(spec.cdf().range(), 1.0);
  EXPECT_EQ(spec.cdf().template_kind(), v1::TEMPLATE_GAUSSIAN_REJECTION);
  spec.mutable_cdf()->set_num_templates(0);
  EXPECT_THAT(std::string(kind->validate_config(spec).message()),
              HasSubstr("encoder.cdf.num_templates"));
}

TEST(FeaturizerFactoryTest, MissingOrMisshapenTensorsAreNamed) {
  v1::Manifest manifest;
  manifest.set_input_dim(4);
  v1::RandomFourierParams* rf = manifest.mutable_encoder()->mutable_random_fourier();
  rf->set_num_features(2);
  rf->set_num_group_elements(1);
  rf->set_sigma(1.0);
  manifest.mutable_encoder()->mutable_group()->mutable_cyclic_shift()->set_length(4);
  ModelTensors tensors;
  absl::Status missing = MakeFeaturizer(manifest, tensors).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("missing tensor 'encoder/bank'"));
  tensors.f32["encoder/bank"] = FloatMatrix::Zeros(2, 3);
  absl::Status shape = MakeFeaturizer(manifest, tensors).status();
  EXPECT_THAT(std::string(shape.message()), HasSubstr("tensor 'encoder/bank' must be 2 × 4"));
  tensors.f32["encoder/bank"] = FloatMatrix::Zeros(2, 4);
  auto ok = MakeFeaturizer(manifest, tensors);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->d_in(), 4);
  manifest.set_input_dim(0);
  EXPECT_THAT(std::string(MakeFeaturizer(manifest, tensors).status().message()),
              HasSubstr("manifest.input_dim must be > 0"));
}

}  // namespace
}  // namespace invariant
