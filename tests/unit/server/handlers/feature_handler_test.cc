#include "server/handlers/feature_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>

#include "server/grpc/admin_service.h"
#include "server/grpc/metrics_interceptor.h"
#include "tests/test_models/test_models.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_models::TestModelSpec;

class FeatureHandlerTest : public ServingFixture {
 protected:
  FeatureHandlerTest() : ServingFixture("feature_handler_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    handler_ = features_.get();
  }

  template <typename Request, typename Response, typename Method>
  absl::Status Call(Method method, const Request& request, Response* response) {
    std::promise<absl::Status> result;
    (handler_->*method)(
        request, response, absl::InfiniteFuture(),
        [&result](absl::Status s) { result.set_value(s); }, nullptr, CallContext{});
    return result.get_future().get();
  }

  FeatureHandler* handler_ = nullptr;
};

TEST_F(FeatureHandlerTest, FeaturizeMatchesModelBitForBitIncludingSplitRequests) {
  const std::vector<float> x = RandomRows(10, 16, 7);  // 10 rows > max_batch_rows=4: split
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("feat");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  v1::FeaturizeResponse response;
  ASSERT_TRUE(Call(&FeatureHandler::Featurize, request, &response).ok());
  auto model = registry_->Lookup("feat")->servable;
  std::vector<float> expected(static_cast<size_t>(10 * model->feature_dim()));
  model->Featurize(10, x.data(), expected.data());
  ASSERT_EQ(response.features_size(), static_cast<int>(expected.size()));
  EXPECT_EQ(
      std::memcmp(response.features().data(), expected.data(), expected.size() * sizeof(float)), 0);
  EXPECT_EQ(response.model_version(), 1);
  EXPECT_EQ(response.feature_dim(), model->feature_dim());
}

TEST_F(FeatureHandlerTest, CancellingTheCallTakesItOutOfTheQueueWithTheTokensStatus) {
  BatcherOptions options;
  options.start_paused = true;  // the request stays queued until cancelled
  Batcher paused(options);
  FeatureHandler handler(registry_.get(), &paused, 100);
  const std::vector<float> x = RandomRows(3, 16, 9);
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("feat");
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  v1::FeaturizeResponse response;
  auto token = std::make_shared<CancelToken>();
  std::promise<absl::Status> result;
  std::future<absl::Status> outcome = result.get_future();
  handler.Featurize(
      request, &response, absl::InfiniteFuture(),
      [&result](absl::Status s) { result.set_value(s); }, token);
  EXPECT_EQ(paused.QueuedRows("feat"), 3);
  token->Cancel(absl::CancelledError("the client went away"));
  ASSERT_EQ(outcome.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const absl::Status status = outcome.get();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(std::string(status.message()), HasSubstr("went away"));
  EXPECT_EQ(paused.QueuedRows("feat"), 0);
  EXPECT_EQ(paused.QueuedBytes(), 0);
  paused.Stop();
}

TEST_F(FeatureHandlerTest, PredictReturnsScoresAndArgmaxClassNames) {
  const std::vector<float> x = RandomRows(3, 16, 8);
  v1::PredictRequest request;
  request.mutable_model()->set_name("clf");
  request.mutable_inputs()->set_raw_values(
      std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float)));
  v1::PredictResponse response;
  ASSERT_TRUE(Call(&FeatureHandler::Predict, request, &response).ok());
  auto model = registry_->Lookup("clf")->servable;
  std::vector<float> expected(static_cast<size_t>(3 * model->output_dim()));
  model->Predict(3, x.data(), expected.data());
  ASSERT_EQ(response.scores_size(), static_cast<int>(expected.size()));
  EXPECT_EQ(std::memcmp(response.scores().data(), expected.data(), expected.size() * 4), 0);
  ASSERT_EQ(response.predicted_classes_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const float* row = expected.data() + i * 3;
    const int best = static_cast<int>(std::max_element(row, row + 3) - row);
    EXPECT_EQ(response.predicted_indices(i), best);
    EXPECT_EQ(response.predicted_classes(i), "class_" + std::to_string(best));
  }
  EXPECT_EQ(response.task(), v1::TASK_CLASSIFICATION);
}

TEST_F(FeatureHandlerTest, PredictedClassIsNeverANanScore) {
  // A classifier whose bias makes score column 0 NaN for every row (and
  // column 1 NaN too in a second model): column 0 must never be predicted,
  // and a row of only NaN scores predicts -1 with no class name.
  for (const int nan_columns : {1, 3}) {
    auto base = testing_models::MakeTestModel(TestModelSpec{});
    ASSERT_TRUE(base.ok()) << base.status();
    ModelTensors tensors = (*base)->tensors();
    FloatMatrix bias = FloatMatrix::Zeros(1, 3);
    for (int c = 0; c < 3; ++c) {
      bias.mutable_data()[c] = c < nan_columns ? std::numeric_limits<float>::quiet_NaN() : 0.f;
    }
    tensors.f32[kHeadBiasTensor] = bias;
    auto model = Model::Assemble((*base)->manifest(), tensors);
    ASSERT_TRUE(model.ok()) << model.status();
    const std::string name = "nan" + std::to_string(nan_columns);
    fs::create_directories(fs::path(root_) / name / "1");
    ASSERT_TRUE((*model)->Save((fs::path(root_) / name / "1" / kBundleFileName).string()).ok());
  }
  registry_->Rescan();
  const std::vector<float> x = RandomRows(5, 16, 9);
  for (const int nan_columns : {1, 3}) {
    v1::PredictRequest request;
    request.mutable_model()->set_name("nan" + std::to_string(nan_columns));
    *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
    v1::PredictResponse response;
    ASSERT_TRUE(Call(&FeatureHandler::Predict, request, &response).ok());
    ASSERT_EQ(response.predicted_indices_size(), 5);
    for (int i = 0; i < 5; ++i) {
      if (nan_columns == 3) {
        EXPECT_EQ(response.predicted_indices(i), -1);
        EXPECT_EQ(response.predicted_classes(i), "");
        continue;
      }
      const float* row = response.scores().data() + i * 3;
      const int best = row[1] >= row[2] ? 1 : 2;
      EXPECT_EQ(response.predicted_indices(i), best) << i;
      EXPECT_EQ(response.predicted_classes(i), "class_" + std::to_string(best));
    }
  }
}

TEST_F(FeatureHandlerTest, PredictWithoutHeadIsFailedPrecondition) {
  v1::PredictRequest request;
  request.mutable_model()->set_name("feat");
  for (int i = 0; i < 16; ++i) request.mutable_inputs()->add_values(0.5f);
  v1::PredictResponse response;
  const absl::Status status = Call(&FeatureHandler::Predict, request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("has no linear head"));
}

TEST_F(FeatureHandlerTest, BadRequestsGetCodesAndMessages) {
  v1::FeaturizeRequest request;
  v1::FeaturizeResponse response;
  request.mutable_model()->set_name("nope");
  request.mutable_inputs()->add_values(1);
  absl::Status status = Call(&FeatureHandler::Featurize, request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  request.mutable_model()->set_name("feat");
  request.mutable_model()->set_version(9);
  status = Call(&FeatureHandler::Featurize, request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("version 9"));
  request.mutable_model()->set_version(0);
  status = Call(&FeatureHandler::Featurize, request, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("input_dim=16 floats, received 1"));
}

TEST_F(FeatureHandlerTest, MetadataDescribesTheModel) {
  v1::GetModelMetadataRequest request;
  request.mutable_model()->set_name("clf");
  v1::GetModelMetadataResponse response;
  ASSERT_TRUE(handler_->GetModelMetadata(request, &response).ok());
  EXPECT_EQ(response.input_dim(), 16);
  EXPECT_EQ(response.feature_dim(), 16);
  EXPECT_EQ(response.output_dim(), 3);
  EXPECT_EQ(response.encoder_kind(), "random_fourier");
  EXPECT_EQ(response.encoder().random_fourier().num_group_elements(), 4);
  EXPECT_TRUE(response.encoder().group().has_cyclic_shift());
  EXPECT_EQ(response.head().class_names_size(), 3);
  EXPECT_DOUBLE_EQ(response.metrics().at("test_accuracy"), 0.875);
  EXPECT_EQ(response.certificate().num_points(), 32);
  EXPECT_GT(response.model_bytes(), 0u);
  v1::ListModelsResponse list;
  ASSERT_TRUE(handler_->ListModels(&list).ok());
  ASSERT_EQ(list.models_size(), 2);
  EXPECT_EQ(list.models(0).name(), "clf");
  EXPECT_TRUE(list.models(0).versions(0).has_head());
  EXPECT_FALSE(list.models(1).versions(0).has_head());
}

TEST_F(FeatureHandlerTest, ResponseLargerThanTheMessageLimitIsRefusedBeforeAllocation) {
  // 3 KiB responses at most: the featurizer's 16 features take 64 bytes per row.
  FeatureHandler small(registry_.get(), batcher_.get(), 100, 3072);
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("feat");
  const std::vector<float> x = RandomRows(40, 16, 3);
  *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
  v1::FeaturizeResponse response;
  std::promise<absl::Status> result;
  small.Featurize(request, &response, absl::InfiniteFuture(),
                  [&result](absl::Status s) { result.set_value(s); });
  const absl::Status status = result.get_future().get();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("inputs: expected at most 32 rows"));
  EXPECT_THAT(status.message(), HasSubstr("max_message_bytes=3072, received 40"));
  EXPECT_EQ(response.features_size(), 0);  // nothing allocated
  // 32 rows fit.
  request.mutable_inputs()->mutable_values()->Truncate(32 * 16);
  std::promise<absl::Status> ok;
  small.Featurize(request, &response, absl::InfiniteFuture(),
                  [&ok](absl::Status s) { ok.set_value(s); });
  EXPECT_TRUE(ok.get_future().get().ok());
  EXPECT_EQ(response.features_size(), 32 * 16);
}

TEST(AdminTokenTest, BearerTokenIsRequiredWhenConfigured) {
  EXPECT_TRUE(CheckBearerToken("", nullptr).ok());
  EXPECT_EQ(CheckBearerToken("s3cret", nullptr).code(), absl::StatusCode::kUnauthenticated);
  const std::string wrong = "Bearer nope";
  const absl::Status status = CheckBearerToken("s3cret", &wrong);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("s3cret")));
  const std::string right = "Bearer s3cret";
  EXPECT_TRUE(CheckBearerToken("s3cret", &right).ok());
}

}  // namespace
}  // namespace invariant::server
