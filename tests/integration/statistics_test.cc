// The statistics extension against the REAL invariant-server: after a known
// number of calls (invariant.v1 Predict, the protocol's ModelInfer, one
// failing call and one for an unknown model), ModelStatistics over gRPC and
// GET /v2/models[/{name}[/versions/{v}]]/stats over REST agree with each other
// and with the Prometheus series scraped from /metrics. Counts only (and
// ns > 0): no sleeps, no timing assertions.
#include <gmock/gmock.h>

#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"
#include "inference/grpc_service.grpc.pb.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using ::testing::HasSubstr;

constexpr char kToken[] = "stats-secret";

class StatisticsTest : public ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    testing_models::TestModelSpec spec;
    spec.name = "clf";
    spec.input_dim = 16;
    WriteModel(spec);
    const std::string token_file = (dir_ / "data_token").string();
    std::ofstream(token_file) << kToken << "\n";
    ClientOptions options;
    options.bearer_token = kToken;
    StartServer({"--http_port=0", "--data_token_file=" + token_file}, options);
    stub_ = inference::GRPCInferenceService::NewStub(client_->channel());
  }

  grpc::Status Infer(int64_t rows, int64_t width) {
    inference::ModelInferRequest request;
    request.set_model_name("clf");
    auto* input = request.add_inputs();
    input->set_name("input");
    input->set_datatype("FP32");
    input->add_shape(rows);
    input->add_shape(width);
    const std::vector<float> x = RandomRows(rows, width, 3);
    input->mutable_contents()->mutable_fp32_contents()->Add(x.begin(), x.end());
    inference::ModelInferResponse response;
    auto context = client_->NewContext();
    return stub_->ModelInfer(context.get(), request, &response);
  }

  grpc::Status Statistics(const std::string& name, const std::string& version,
                          inference::ModelStatisticsResponse* response) {
    inference::ModelStatisticsRequest request;
    request.set_name(name);
    request.set_version(version);
    auto context = client_->NewContext();
    return stub_->ModelStatistics(context.get(), request, response);
  }

  // GET `path` on the REST port with (or without) the data token: the whole answer.
  std::string RestGet(const std::string& path, bool token = true) {
    std::string request = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\n");
    if (token) absl::StrAppend(&request, "Authorization: Bearer ", kToken, "\r\n");
    request += "Connection: close\r\n\r\n";
    absl::StatusOr<std::string> answer = HttpExchange(server_->http_port(), request);
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? *answer : "";
  }

  // The sum over the methods of `name`{model="clf", method=...}.
  static double SumOverMethods(const std::string& text, const std::string& name) {
    double sum = 0;
    for (const char* method : {"Featurize", "Predict", "FeaturizePredict"}) {
      const double v =
          MetricValue(text, name, {"model=\"clf\"", absl::StrCat("method=\"", method, "\"")});
      if (v > 0) sum += v;
    }
    return sum;
  }

  std::unique_ptr<inference::GRPCInferenceService::Stub> stub_;
};

// `"key":{"count":C,"ns":N}` of a REST body, as "C/N" ("" when absent).
std::string JsonDuration(const std::string& body, const std::string& key) {
  const std::regex pattern("\"" + key + R"re(":\{"count":([0-9]+),"ns":([0-9]+)\})re");
  std::smatch match;
  if (!std::regex_search(body, match, pattern)) return "";
  return match[1].str() + "/" + match[2].str();
}

std::string JsonNumber(const std::string& body, const std::string& key) {
  const std::regex pattern("\"" + key + "\":([0-9]+)");
  std::smatch match;
  return std::regex_search(body, match, pattern) ? match[1].str() : "";
}

std::string Pair(const inference::StatisticDuration& d) {
  return absl::StrCat(d.count(), "/", d.ns());
}

TEST_F(StatisticsTest, AgreeOverGrpcRestAndPrometheusAfterKnownCalls) {
  constexpr int kPredicts = 5, kPredictRows = 3, kInfers = 4, kInferRows = 2;
  const std::vector<float> x = RandomRows(kPredictRows, 16, 2);
  std::vector<float> scores;
  for (int i = 0; i < kPredicts; ++i) {
    ASSERT_TRUE(client_->Predict("clf", kPredictRows, x, &scores).ok());
  }
  for (int i = 0; i < kInfers; ++i) ASSERT_TRUE(Infer(kInferRows, 16).ok());
  // Fails after the lookup (a shape that does not fit): counted as fail.
  EXPECT_EQ(Infer(2, 15).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // An unknown model reaches no version: counted nowhere.
  EXPECT_EQ(client_->Predict("missing", 1, x, &scores).error_code(), grpc::StatusCode::NOT_FOUND);

  // Every call has completed: the numbers are final.
  inference::ModelStatisticsResponse all;
  const grpc::Status status = Statistics("", "", &all);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(all.model_stats_size(), 1);
  const inference::ModelStatistics& m = all.model_stats(0);
  EXPECT_EQ(m.name(), "clf");
  EXPECT_EQ(m.version(), "1");
  const int calls = kPredicts + kInfers;
  EXPECT_EQ(m.inference_count(), uint64_t{kPredicts * kPredictRows + kInfers * kInferRows});
  EXPECT_EQ(m.execution_count(), uint64_t(calls));  // one call at a time: one batch each
  EXPECT_GT(m.last_inference(), 0u);
  const inference::InferStatistics& s = m.inference_stats();
  EXPECT_EQ(s.success().count(), uint64_t(calls));
  EXPECT_GT(s.success().ns(), 0u);
  EXPECT_EQ(s.fail().count(), 1u);
  EXPECT_EQ(s.queue().count(), uint64_t(calls));
  EXPECT_EQ(s.compute_infer().count(), m.execution_count());
  EXPECT_GT(s.compute_infer().ns(), 0u);
  EXPECT_EQ(s.compute_input().count(), 0u);  // rows, no clips
  EXPECT_EQ(s.compute_output().count(), uint64_t(calls));
  EXPECT_EQ(s.cache_hit().count(), 0u);
  EXPECT_EQ(s.cache_miss().count(), 0u);
  ASSERT_EQ(m.batch_stats_size(), 2);
  EXPECT_EQ(m.batch_stats(0).batch_size(), uint64_t{kInferRows});
  EXPECT_EQ(m.batch_stats(0).compute_infer().count(), uint64_t{kInfers});
  EXPECT_EQ(m.batch_stats(1).batch_size(), uint64_t{kPredictRows});
  EXPECT_EQ(m.batch_stats(1).compute_infer().count(), uint64_t{kPredicts});

  // The same numbers from Prometheus, kept by the same calls.
  absl::StatusOr<std::string> text = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(SumOverMethods(*text, "invariant_rows_total"), double(m.inference_count()));
  EXPECT_EQ(SumOverMethods(*text, "invariant_batch_rows_count"), double(m.execution_count()));
  EXPECT_EQ(SumOverMethods(*text, "invariant_compute_seconds_count"),
            double(s.compute_infer().count()));
  EXPECT_EQ(MetricValue(*text, "invariant_queue_seconds_count", {"model=\"clf\""}),
            double(s.queue().count()));

  // The narrower requests answer the same entry.
  for (const auto& [name, version] : std::vector<std::pair<std::string, std::string>>{
           {"clf", ""}, {"clf", "1"}, {"clf", "latest"}}) {
    inference::ModelStatisticsResponse one;
    ASSERT_TRUE(Statistics(name, version, &one).ok()) << name << "/" << version;
    ASSERT_EQ(one.model_stats_size(), 1);
    EXPECT_EQ(one.model_stats(0).SerializeAsString(), m.SerializeAsString()) << version;
  }

  // REST: the same numbers, on every route.
  for (const char* path :
       {"/v2/models/stats", "/v2/models/clf/stats", "/v2/models/clf/versions/1/stats"}) {
    const std::string body = RestGet(path);
    EXPECT_THAT(body, HasSubstr("200 OK")) << path;
    EXPECT_THAT(body, HasSubstr(R"("name":"clf","version":"1")")) << path;
    EXPECT_EQ(JsonNumber(body, "inference_count"), absl::StrCat(m.inference_count())) << path;
    EXPECT_EQ(JsonNumber(body, "execution_count"), absl::StrCat(m.execution_count())) << path;
    EXPECT_EQ(JsonNumber(body, "last_inference"), absl::StrCat(m.last_inference())) << path;
    EXPECT_EQ(JsonDuration(body, "success"), Pair(s.success())) << path;
    EXPECT_EQ(JsonDuration(body, "fail"), Pair(s.fail())) << path;
    EXPECT_EQ(JsonDuration(body, "queue"), Pair(s.queue())) << path;
    EXPECT_EQ(JsonDuration(body, "compute_infer"), Pair(s.compute_infer())) << path;
    EXPECT_EQ(JsonDuration(body, "compute_output"), Pair(s.compute_output())) << path;
    EXPECT_THAT(body, HasSubstr(absl::StrCat(R"("batch_stats":[{"batch_size":2,)")));
  }
}

TEST_F(StatisticsTest, ErrorsNameTheFieldAndTheTokenIsRequired) {
  inference::ModelStatisticsResponse response;
  grpc::Status status = Statistics("missing", "", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("name"));
  status = Statistics("clf", "7", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("version"));
  status = Statistics("", "1", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("version: expected \"\" when name is \"\""));
  status = Statistics("clf", "-1", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("version"));

  EXPECT_THAT(RestGet("/v2/models/missing/stats"), HasSubstr("404"));
  EXPECT_THAT(RestGet("/v2/models/stats", /*token=*/false), HasSubstr("401"));
  grpc::ClientContext no_token;
  inference::ModelStatisticsRequest request;
  EXPECT_EQ(stub_->ModelStatistics(&no_token, request, &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // A loaded model no one called: listed, with zeros.
  ASSERT_TRUE(Statistics("", "", &response).ok());
  ASSERT_EQ(response.model_stats_size(), 1);
  EXPECT_EQ(response.model_stats(0).inference_count(), 0u);
  EXPECT_EQ(response.model_stats(0).inference_stats().success().count(), 0u);
  EXPECT_EQ(response.model_stats(0).batch_stats_size(), 0);
}

TEST_F(StatisticsTest, ServerMetadataListsTheExtension) {
  inference::ServerMetadataResponse metadata;
  auto context = client_->NewContext();
  ASSERT_TRUE(stub_->ServerMetadata(context.get(), {}, &metadata).ok());
  EXPECT_THAT(metadata.extensions(), ::testing::Contains("statistics"));
  EXPECT_THAT(RestGet("/v2"), HasSubstr("\"statistics\""));
}

}  // namespace
}  // namespace invariant::testing_server
