// The statistics extension in process: which versions a request names
// (statistics_handler.h), the handler's request observers
// (handler_observers.h), and the REST routes and JSON (rest_statistics.h).
#include "server/handlers/statistics_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>

#include "server/handlers/inference_handler.h"
#include "server/rest/rest_service.h"
#include "server/rest/rest_statistics.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;

class StatisticsHandlerTest : public ServingFixture {
 protected:
  StatisticsHandlerTest() : ServingFixture("statistics_models") {}

  // A source that marks each entry it fills (inference_count = 7).
  static void Mark(const std::string& name, int64_t version, inference::ModelStatistics* out) {
    out->set_name(name);
    out->set_version(std::to_string(version));
    out->set_inference_count(7);
  }

  absl::Status Ask(const std::string& name, const std::string& version,
                   inference::ModelStatisticsResponse* response) {
    inference::ModelStatisticsRequest request;
    request.set_name(name);
    request.set_version(version);
    return AnswerModelStatistics(*registry_, &Mark, request, response);
  }
};

TEST_F(StatisticsHandlerTest, NamesEveryModelOneModelOrOneVersion) {
  inference::ModelStatisticsResponse all;
  ASSERT_TRUE(Ask("", "", &all).ok());
  ASSERT_EQ(all.model_stats_size(), 2);  // by name
  EXPECT_EQ(all.model_stats(0).name(), "clf");
  EXPECT_EQ(all.model_stats(1).name(), "feat");
  EXPECT_EQ(all.model_stats(1).inference_count(), 7u);
  for (const char* version : {"", "1", "latest"}) {
    inference::ModelStatisticsResponse one;
    ASSERT_TRUE(Ask("clf", version, &one).ok()) << version;
    ASSERT_EQ(one.model_stats_size(), 1);
    EXPECT_EQ(one.model_stats(0).version(), "1");
  }
}

TEST_F(StatisticsHandlerTest, ErrorsNameTheField) {
  inference::ModelStatisticsResponse response;
  absl::Status s = Ask("nope", "", &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("name"));
  s = Ask("clf", "2", &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("version"));
  s = Ask("", "1", &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("version: expected \"\" when name is \"\""));
  s = Ask("clf", "0", &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("version"));
  EXPECT_EQ(response.model_stats_size(), 0);
}

TEST_F(StatisticsHandlerTest, InferenceHandlerServesItOnlyWithASource) {
  InferenceHandler without(registry_.get(), features_.get(), "v", nullptr);
  inference::ModelStatisticsResponse response;
  EXPECT_EQ(without.ModelStatistics({}, &response).code(), absl::StatusCode::kUnimplemented);
  inference::ServerMetadataResponse metadata;
  ASSERT_TRUE(without.ServerMetadata({}, &metadata).ok());
  EXPECT_EQ(metadata.extensions_size(), 0);
  InferenceHandler with(registry_.get(), features_.get(), "v", nullptr, 1 << 30, {}, &Mark);
  EXPECT_TRUE(with.ModelStatistics({}, &response).ok());
  ASSERT_TRUE(with.ServerMetadata({}, &metadata).ok());
  EXPECT_THAT(metadata.extensions(), ::testing::ElementsAre("statistics"));
}

TEST_F(StatisticsHandlerTest, ObserversSeeEveryRequestThatReachedAVersionOnce) {
  std::atomic<int> ok{0}, failed{0}, outputs{0};
  HandlerObservers observers;
  observers.on_request = [&](const std::string& model, int64_t version, bool good, double s) {
    EXPECT_EQ(model, "clf");
    EXPECT_EQ(version, 1);
    EXPECT_GE(s, 0);
    ++(good ? ok : failed);
  };
  observers.on_output = [&](const std::string&, int64_t, double) { ++outputs; };
  FeatureHandler handler(registry_.get(), batcher_.get(), 100, 1 << 30, InputLimits{30}, {},
                         observers);
  const auto predict = [&](const std::string& model, int width) {
    const std::vector<float> x = RandomRows(2, width, 3);
    v1::PredictRequest request;
    request.mutable_model()->set_name(model);
    *request.mutable_inputs()->mutable_values() = {x.begin(), x.end()};
    request.mutable_inputs()->set_num_rows(2);
    v1::PredictResponse response;
    std::promise<absl::Status> result;
    handler.Predict(request, &response, absl::InfiniteFuture(),
                    [&result](absl::Status s) { result.set_value(s); });
    return result.get_future().get();
  };
  EXPECT_TRUE(predict("clf", 16).ok());
  EXPECT_TRUE(predict("clf", 16).ok());
  EXPECT_FALSE(predict("clf", 15).ok());                               // after the lookup
  EXPECT_EQ(predict("nope", 16).code(), absl::StatusCode::kNotFound);  // no version reached
  EXPECT_EQ(ok.load(), 2);
  EXPECT_EQ(failed.load(), 1);
  EXPECT_EQ(outputs.load(), 2);
}

TEST_F(StatisticsHandlerTest, RestRoutesAnswerTritonsJson) {
  InferenceHandler handler(registry_.get(), features_.get(), "1.2.3", nullptr, 1 << 30, {}, &Mark);
  RestInferenceService rest(&handler, nullptr, absl::Seconds(60));
  const auto get = [&](const std::string& method, const std::string& path) {
    HttpRequest request;
    request.method = method;
    request.path = path;
    return rest.Handle(request);
  };
  const HttpResponse one = get("GET", "/v2/models/clf/versions/1/stats");
  EXPECT_EQ(one.status, 200);
  const std::string zero = R"({"count":0,"ns":0})";
  EXPECT_EQ(one.body, std::string(R"({"model_stats":[{"name":"clf","version":"1",)") +
                          R"("last_inference":0,"inference_count":7,"execution_count":0,)" +
                          R"("inference_stats":{"success":)" + zero + R"(,"fail":)" + zero +
                          R"(,"queue":)" + zero + R"(,"compute_input":)" + zero +
                          R"(,"compute_infer":)" + zero + R"(,"compute_output":)" + zero +
                          R"(,"cache_hit":)" + zero + R"(,"cache_miss":)" + zero +
                          R"(},"batch_stats":[]}]})");
  EXPECT_THAT(get("GET", "/v2/models/stats").body, HasSubstr(R"("name":"feat")"));
  EXPECT_THAT(get("HEAD", "/v2/models/clf/stats").status, 200);
  EXPECT_EQ(get("GET", "/v2/models/nope/stats").status, 404);
  EXPECT_EQ(get("POST", "/v2/models/stats").status, 405);
  EXPECT_THAT(get("GET", "/v2").body, HasSubstr(R"(["statistics","binary_tensor_data"])"));

  inference::ModelStatisticsResponse batches;
  auto* stats = batches.add_model_stats();
  auto* batch = stats->add_batch_stats();
  batch->set_batch_size(4);
  batch->mutable_compute_infer()->set_count(18446744073709551615u);  // uint64 written exactly
  EXPECT_THAT(ModelStatisticsToJson(batches),
              HasSubstr(R"("batch_stats":[{"batch_size":4,"compute_input":{"count":0,"ns":0},)"
                        R"("compute_infer":{"count":18446744073709551615,"ns":0},)"));
}

}  // namespace
}  // namespace invariant::server
