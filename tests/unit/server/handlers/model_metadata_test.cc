// The wire API's model description (model_info.proto) against the bundle
// manifest it is converted from: every mirrored field keeps its name, number
// and type (so the bytes on the wire are those of the manifest messages the
// API returned before), the conversion copies every mirrored field, and a
// manifest-only field never reaches the API.
#include "server/handlers/model_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "invariant/v1/bundle.pb.h"
#include "invariant/v1/model_info.pb.h"

namespace invariant::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// (API message, manifest message) pairs.
std::vector<std::pair<const Descriptor*, const Descriptor*>> Mirrors() {
  return {{v1::EncoderInfo::descriptor(), v1::EncoderSpec::descriptor()},
          {v1::CdfInfo::descriptor(), v1::CdfParams::descriptor()},
          {v1::RandomFourierInfo::descriptor(), v1::RandomFourierParams::descriptor()},
          {v1::NystromInfo::descriptor(), v1::NystromParams::descriptor()},
          {v1::SpectralInfo::descriptor(), v1::SpectralParams::descriptor()},
          {v1::PatchInfo::descriptor(), v1::PatchParams::descriptor()},
          {v1::HeadInfo::descriptor(), v1::LinearHead::descriptor()},
          {v1::CertificateInfo::descriptor(), v1::InvarianceCertificate::descriptor()}};
}

TEST(ModelMetadataTest, EveryApiFieldMirrorsAManifestFieldWithTheSameNumberAndType) {
  const auto mirrors = Mirrors();
  std::set<std::pair<const Descriptor*, const Descriptor*>> pairs(mirrors.begin(), mirrors.end());
  for (const auto& [api, manifest] : mirrors) {
    for (int i = 0; i < api->field_count(); ++i) {
      const FieldDescriptor* a = api->field(i);
      const FieldDescriptor* m = manifest->FindFieldByNumber(a->number());
      ASSERT_NE(m, nullptr) << a->full_name() << ": no manifest field " << a->number();
      EXPECT_EQ(a->name(), m->name()) << a->full_name();
      EXPECT_EQ(a->type(), m->type()) << a->full_name();
      EXPECT_EQ(a->is_repeated(), m->is_repeated()) << a->full_name();
      if (a->type() == FieldDescriptor::TYPE_ENUM && a->enum_type() != m->enum_type()) {
        // A shared model_types enum, or a nested copy (PatchInfo.Response)
        // with the same names and numbers.
        const google::protobuf::EnumDescriptor* ae = a->enum_type();
        const google::protobuf::EnumDescriptor* me = m->enum_type();
        ASSERT_EQ(ae->value_count(), me->value_count()) << a->full_name();
        for (int v = 0; v < ae->value_count(); ++v) {
          EXPECT_EQ(ae->value(v)->name(), me->value(v)->name()) << a->full_name();
          EXPECT_EQ(ae->value(v)->number(), me->value(v)->number()) << a->full_name();
        }
      }
      if (a->type() == FieldDescriptor::TYPE_MESSAGE && a->message_type() != m->message_type()) {
        EXPECT_EQ(pairs.count({a->message_type(), m->message_type()}), 1u)
            << a->full_name() << ": " << a->message_type()->full_name() << " does not mirror "
            << m->message_type()->full_name();
      }
    }
  }
}

TEST(ModelMetadataTest, ApiMessagesDoNotDependOnTheManifestFile) {
  const google::protobuf::FileDescriptor* api = v1::EncoderInfo::descriptor()->file();
  const google::protobuf::FileDescriptor* service =
      v1::GetModelMetadataResponse::descriptor()->file();
  for (const auto* file : {api, service}) {
    for (int i = 0; i < file->dependency_count(); ++i) {
      EXPECT_NE(file->dependency(i)->name(), "invariant/v1/bundle.proto") << file->name();
    }
  }
}

v1::Manifest FullManifest() {
  v1::Manifest m;
  v1::EncoderSpec* e = m.mutable_encoder();
  v1::CdfParams* cdf = e->mutable_cdf();
  cdf->set_num_templates(3);
  cdf->set_num_group_elements(4);
  cdf->set_num_bins(5);
  cdf->set_range(1.5);
  cdf->set_pooling(v1::POOLING_MAX);
  cdf->set_template_kind(v1::TEMPLATE_SPHERE);
  cdf->set_epsilon(0.25);
  e->mutable_group()->mutable_cyclic_shift()->set_length(6);
  e->set_seed(77);
  e->add_input_shape(2);
  e->add_input_shape(3);
  v1::LinearHead* h = m.mutable_head();
  h->set_task(v1::TASK_CLASSIFICATION);
  h->add_class_names("a");
  h->add_class_names("b");
  h->set_lambda(1e-3);
  v1::InvarianceCertificate* c = m.mutable_certificate();
  c->set_max_discrepancy(1e-6);
  c->set_mean_discrepancy(1e-7);
  c->set_relative_max_discrepancy(1e-5);
  c->set_num_points(10);
  c->set_num_group_elements(6);
  c->set_exhaustive(true);
  c->set_method("enumerated");
  c->set_generator_residual(1e-9);
  c->mutable_group()->mutable_image()->set_height(28);  // the group it was checked against
  c->set_mean_pairwise_difference(0.4);
  c->set_relative_mean_discrepancy(2.5e-7);
  (*m.mutable_metrics())["test_accuracy"] = 0.5;
  m.add_input_columns("x0");
  m.set_input_scaling(v1::INPUT_SCALING_UNIT_BYTE);
  return m;
}

TEST(ModelMetadataTest, ConversionKeepsTheWireBytesOfEveryMirroredField) {
  const v1::Manifest m = FullManifest();
  v1::GetModelMetadataResponse out;
  ManifestToApi(m, &out);
  // The same bytes as the manifest messages the API used to return.
  EXPECT_EQ(out.encoder().SerializeAsString(), m.encoder().SerializeAsString());
  EXPECT_EQ(out.head().SerializeAsString(), m.head().SerializeAsString());
  EXPECT_EQ(out.certificate().SerializeAsString(), m.certificate().SerializeAsString());
  EXPECT_EQ(out.certificate().group().image().height(), 28);
  EXPECT_EQ(out.certificate().mean_pairwise_difference(), 0.4);
  EXPECT_EQ(out.certificate().relative_mean_discrepancy(), 2.5e-7);
  EXPECT_EQ(out.encoder().cdf().pooling(), v1::POOLING_MAX);
  EXPECT_THAT(out.input_columns(), ::testing::ElementsAre("x0"));
  EXPECT_EQ(out.input_scaling(), v1::INPUT_SCALING_UNIT_BYTE);
  EXPECT_EQ(out.metrics().at("test_accuracy"), 0.5);

  v1::Manifest spectral;
  v1::SpectralParams* s = spectral.mutable_encoder()->mutable_spectral();
  s->set_dim(2);
  s->add_generators()->set_kind(v1::TorusGenerator::SIGN_FLIP);
  s->mutable_generators(0)->add_coords(1);
  v1::GetModelMetadataResponse spectral_out;
  ManifestToApi(spectral, &spectral_out);
  EXPECT_EQ(spectral_out.encoder().SerializeAsString(), spectral.encoder().SerializeAsString());
  EXPECT_FALSE(spectral_out.has_head());
  EXPECT_FALSE(spectral_out.has_certificate());

  v1::Manifest patch;
  v1::EncoderSpec* pe = patch.mutable_encoder();
  v1::PatchParams* pp = pe->mutable_patch();
  pp->set_patch_size(6);
  pp->set_stride(1);
  pp->set_num_templates(1600);
  pp->set_num_group_elements(2);
  pp->set_response(v1::PatchParams::RESPONSE_CDF);
  pp->set_sigma(0.5);
  pp->set_num_bins(8);
  pp->set_range(1.5);
  pp->set_threshold(0.25);
  pp->set_pool_grid(2);
  pp->set_template_kind(v1::TEMPLATE_DATA);
  pp->set_kmeans_iterations(10);
  pp->set_normalize_patches(true);
  pp->set_contrast_epsilon(1e-3);
  pp->set_whiten(true);
  pp->set_whitening_epsilon(0.1);
  pp->set_statistics_patches(100000);
  pp->mutable_image_group()->mutable_dihedral()->set_height(32);
  pp->mutable_image_group()->mutable_dihedral()->set_width(32);
  pp->mutable_image_group()->mutable_dihedral()->set_channels(3);
  pp->mutable_image_group()->mutable_dihedral()->set_flips(true);
  pp->mutable_image_group()->set_enumerate(true);
  pe->mutable_group()->mutable_dihedral()->set_height(6);
  pe->mutable_group()->mutable_dihedral()->set_width(6);
  pe->mutable_group()->mutable_dihedral()->set_channels(3);
  pe->mutable_group()->mutable_dihedral()->set_flips(true);
  pe->mutable_group()->set_enumerate(true);
  for (int64_t side : {32, 32, 3}) pe->add_input_shape(side);
  v1::GetModelMetadataResponse patch_out;
  ManifestToApi(patch, &patch_out);
  EXPECT_EQ(patch_out.encoder().SerializeAsString(), patch.encoder().SerializeAsString());
  EXPECT_EQ(patch_out.encoder().patch().response(), v1::PatchInfo::RESPONSE_CDF);
  EXPECT_EQ(patch_out.encoder().patch().num_templates(), 1600);
  EXPECT_TRUE(patch_out.encoder().group().dihedral().flips());
}

TEST(ModelMetadataTest, AManifestOnlyFieldNeverReachesTheApi) {
  v1::Manifest m = FullManifest();
  // Stand-ins for fields the manifest may gain: unknown to the API messages.
  m.mutable_encoder()->GetReflection()->MutableUnknownFields(m.mutable_encoder())->AddVarint(99, 1);
  m.mutable_encoder()
      ->mutable_cdf()
      ->GetReflection()
      ->MutableUnknownFields(m.mutable_encoder()->mutable_cdf())
      ->AddVarint(98, 2);
  v1::GetModelMetadataResponse out;
  ManifestToApi(m, &out);
  EXPECT_EQ(out.encoder().GetReflection()->GetUnknownFields(out.encoder()).field_count(), 0);
  EXPECT_EQ(
      out.encoder().cdf().GetReflection()->GetUnknownFields(out.encoder().cdf()).field_count(), 0);
  EXPECT_EQ(out.encoder().cdf().num_bins(), 5);
}

}  // namespace
}  // namespace invariant::server
