// The bytes a model states (core/model/model_footprint.h), from its manifest
// before the bundle is read, and Model::Load's admit hook.
#include "core/model/model_footprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/model/model.h"
#include "tests/test_models/test_models.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;

std::string Root() {
  return ::testing::TempDir() + "/model_footprint_test." + std::to_string(::getpid());
}

TEST(ModelFootprintTest, StatesTheBundlePagesThePackedBankAndAWorkspace) {
  testing_models::TestModelSpec spec;
  spec.num_features = 50;  // s: a bank of s · r = 200 rows of 16, features 100
  spec.num_group_elements = 4;
  const std::string path = *testing_models::WriteTestModel(Root(), spec);
  const std::shared_ptr<const Model> model = *Model::Load(path);
  const ModelFootprint& f = model->footprint();
  const auto file_bytes = static_cast<uint64_t>(std::filesystem::file_size(path));
  EXPECT_EQ(f.bundle % 4096, 0u);
  EXPECT_GE(f.bundle, file_bytes);
  EXPECT_LT(f.bundle, file_bytes + 4096);
  EXPECT_EQ(f.packed, 208u * 16 * 4);  // 200 rows in panels of 16, float32
  EXPECT_EQ(f.workspace, 4u * (256 * model->feature_dim() + 96 * 512));
  EXPECT_EQ(f.held(), f.bundle + f.packed);
  EXPECT_EQ(f.total(3), f.held() + 3 * f.workspace);
}

TEST(ModelFootprintTest, ABf16BankIsPackedAtHalfTheBytesBesideItsRoundedCopy) {
  v1::Manifest manifest;
  manifest.set_feature_dim(10);
  manifest.mutable_encoder()->set_bank_dtype(v1::BANK_DTYPE_BF16);
  v1::TensorEntry* bank = manifest.add_tensors();
  bank->set_name("encoder/bank");
  bank->set_dtype(v1::DTYPE_FLOAT32);
  bank->add_shape(17);
  bank->add_shape(8);
  v1::TensorEntry* head = manifest.add_tensors();  // not packed
  head->set_name("head/weights");
  head->set_dtype(v1::DTYPE_FLOAT32);
  head->add_shape(10);
  head->add_shape(3);
  const ModelFootprint f = EstimateModelFootprint(manifest, 5000);
  EXPECT_EQ(f.bundle, 8192u);
  EXPECT_EQ(f.packed, 32u * 8 * 2 + 17u * 8 * 2);
}

TEST(ModelFootprintTest, ARefusalOfTheAdmitHookIsLoadsErrorBeforeTheBundleIsRead) {
  const std::string path = *testing_models::WriteTestModel(Root(), testing_models::TestModelSpec());
  ModelFootprint seen;
  ModelLoadOptions options;
  options.admit = [&seen](const ModelFootprint& f) {
    seen = f;
    return absl::ResourceExhaustedError("max_model_bytes: no room");
  };
  const absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(path, options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(model.status().message(), HasSubstr("no room"));
  EXPECT_GT(seen.bundle, 0u);
}

}  // namespace
}  // namespace invariant
