// WarmUp: a good model answers its warmup rows; a model whose numbers are
// not finite (checksums cannot tell) is refused naming the path.
#include "server/handlers/model_warmup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/test_models/test_models.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const Model> TestModel(int num_classes) {
  testing_models::TestModelSpec spec;
  spec.num_classes = num_classes;
  auto model = testing_models::MakeTestModel(spec);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// `model` with one head weight replaced by NaN.
std::shared_ptr<const Model> WithNanHeadWeight(const Model& model) {
  ModelTensors tensors = model.tensors();
  auto it = tensors.f32.find(kHeadWeightsTensor);
  EXPECT_NE(it, tensors.f32.end());
  FloatMatrix weights = FloatMatrix::Zeros(it->second.rows(), it->second.cols());
  std::copy(it->second.data(), it->second.data() + it->second.size(), weights.mutable_data());
  weights.mutable_data()[0] = std::numeric_limits<float>::quiet_NaN();
  it->second = std::move(weights);
  auto broken = Model::Assemble(model.manifest(), std::move(tensors));
  EXPECT_TRUE(broken.ok()) << broken.status();
  return broken.ok() ? *broken : nullptr;
}

TEST(ModelWarmupTest, GoodModelsWarmUpWithOrWithoutAHead) {
  for (int classes : {0, 3}) {
    const auto model = TestModel(classes);
    ASSERT_NE(model, nullptr);
    EXPECT_TRUE(WarmUp("m.bundle", *model, 8).ok()) << classes;
    EXPECT_TRUE(WarmUp("m.bundle", *model, 0).ok()) << classes;
  }
}

TEST(ModelWarmupTest, NonFiniteAnswersRefuseTheModelNamingThePath) {
  const auto model = TestModel(3);
  ASSERT_NE(model, nullptr);
  const auto broken = WithNanHeadWeight(*model);
  ASSERT_NE(broken, nullptr);
  const absl::Status status = WarmUp("models/m/2/model.bundle", *broken, 8);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("models/m/2/model.bundle: warmup: "));
  EXPECT_THAT(status.message(), HasSubstr("NaN or infinite"));
  // Warmup off: nothing is computed, nothing refused.
  EXPECT_TRUE(WarmUp("models/m/2/model.bundle", *broken, 0).ok());
}

}  // namespace
}  // namespace invariant::server
