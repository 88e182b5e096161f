#include "server/rest/rest_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/json.h"
#include "server/handlers/inference_handler.h"
#include "server/metrics/metrics.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The REST routes over the in-process serving stack, without a socket (the
// Python tests call the real server over HTTP).
class RestServiceTest : public ServingFixture {
 protected:
  RestServiceTest() : ServingFixture("rest_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    handler_ = std::make_unique<InferenceHandler>(registry_.get(), features_.get(), "1.2.3",
                                                  [this] { return ready_; });
    metrics_ = std::make_unique<ServerMetrics>("1.2.3");
    rest_ =
        std::make_unique<RestInferenceService>(handler_.get(), metrics_.get(), absl::Seconds(60));
  }

  HttpResponse Call(const std::string& method, const std::string& path,
                    const std::string& body = "") {
    HttpRequest request;
    request.method = method;
    request.path = path;
    request.body = body;
    return rest_->Handle(request);
  }

  // The error message of an {"error": ...} body ("" when it is not one).
  static std::string ErrorOf(const HttpResponse& response) {
    absl::StatusOr<JsonValue> json = ParseJson(response.body);
    if (!json.ok() || !json->is_object() || json->Find("error") == nullptr) return "";
    return json->Find("error")->text();
  }

  static std::string InferBody(int rows) {
    const std::vector<float> x = RandomRows(rows, 16, 5);
    std::vector<std::string> items;
    for (float v : x) items.push_back(JsonNumber(v));
    return absl::StrCat(R"({"inputs":[{"name":"input","datatype":"FP32","shape":[)", rows,
                        R"(,16],"data":[)", absl::StrJoin(items, ","), "]}]}");
  }

  bool ready_ = true;
  std::unique_ptr<InferenceHandler> handler_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<RestInferenceService> rest_;
};

TEST_F(RestServiceTest, HealthAndMetadataRoutes) {
  EXPECT_EQ(Call("GET", "/v2/health/live").body, R"({"live":true})");
  EXPECT_EQ(Call("GET", "/v2/health/ready").status, 200);
  EXPECT_EQ(Call("HEAD", "/v2/health/ready").status, 200);
  ready_ = false;
  const HttpResponse not_ready = Call("GET", "/v2/health/ready");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_THAT(ErrorOf(not_ready), StartsWith("the server is not ready"));
  EXPECT_EQ(not_ready.content_type, "application/json");

  EXPECT_EQ(Call("GET", "/v2").body,
            R"({"name":"invariant-server","version":"1.2.3","extensions":["binary_tensor_data"]})");
  const HttpResponse metadata = Call("GET", "/v2/models/clf/versions/1");
  EXPECT_EQ(metadata.status, 200);
  EXPECT_THAT(metadata.body,
              StartsWith(R"({"name":"clf","versions":["1"],"platform":"invariant")"));
  EXPECT_EQ(Call("GET", "/v2/models/clf/ready").body, R"({"name":"clf","ready":true})");
  EXPECT_EQ(Call("GET", "/v2/models/clf/versions/1/ready").status, 200);
}

TEST_F(RestServiceTest, ErrorsHaveTheirHttpStatus) {
  const HttpResponse unknown = Call("GET", "/v2/models/nope");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(ErrorOf(unknown), StartsWith("name: no model named 'nope'"));
  const HttpResponse not_ready = Call("GET", "/v2/models/clf/versions/7/ready");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_THAT(ErrorOf(not_ready), HasSubstr("version 7"));
  EXPECT_EQ(Call("GET", "/v2/models/nope/ready").status, 503);
  EXPECT_EQ(Call("GET", "/v2/models/clf/versions/-1/ready").status, 400);
  EXPECT_EQ(Call("POST", "/v2/models/clf/infer", "{").status, 400);

  const HttpResponse wrong_method = Call("GET", "/v2/models/clf/infer");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(ErrorOf(wrong_method), "method: expected POST for /v2/models/clf/infer, received GET");
  ASSERT_EQ(wrong_method.headers.size(), 1u);
  EXPECT_EQ(wrong_method.headers[0].first, "Allow");
  EXPECT_EQ(wrong_method.headers[0].second, "POST");
  EXPECT_EQ(Call("DELETE", "/v2/health/live").headers[0].second, "GET, HEAD");

  for (const char* path : {"/", "/v1/models", "/v2/health", "/v2/models", "/v2/models/clf/x",
                           "/v2/models/clf/versions/1/infer/x", "/v22"}) {
    const HttpResponse response = Call("GET", path);
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_THAT(ErrorOf(response), StartsWith("path: expected a route")) << path;
  }
}

TEST_F(RestServiceTest, InferAndItsMetrics) {
  const HttpResponse ok = Call("POST", "/v2/models/clf/versions/1/infer", InferBody(3));
  ASSERT_EQ(ok.status, 200) << ok.body;
  absl::StatusOr<JsonValue> json = ParseJson(ok.body);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->Find("model_version")->text(), "1");
  EXPECT_EQ(json->Find("outputs")->items().size(), 4u);

  const HttpResponse unknown = Call("POST", "/v2/models/nope/infer", InferBody(1));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(ErrorOf(unknown), StartsWith("model_name: no model named 'nope'"));

  const std::string text = metrics_->Serialize();
  EXPECT_THAT(text,
              HasSubstr(R"(grpc_server_handled_total{grpc_code="OK",grpc_method="ModelInfer",)"
                        R"(grpc_service="inference.REST",grpc_type="http"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(grpc_server_handled_total{grpc_code="NOT_FOUND",)"
                              R"(grpc_method="ModelInfer",grpc_service="inference.REST",)"
                              R"(grpc_type="http"} 1)"));
}

TEST_F(RestServiceTest, DataTokenGuardsEveryRouteButHealth) {
  rest_ = std::make_unique<RestInferenceService>(handler_.get(), metrics_.get(), absl::Seconds(60),
                                                 "s3cret");
  auto call = [this](const std::string& method, const std::string& path, const std::string& body,
                     const std::string& authorization) {
    HttpRequest request;
    request.method = method;
    request.path = path;
    request.body = body;
    if (!authorization.empty()) request.headers.emplace_back("authorization", authorization);
    return rest_->Handle(request);
  };
  // Probes send no credentials: health stays open.
  EXPECT_EQ(call("GET", "/v2/health/live", "", "").status, 200);
  EXPECT_EQ(call("GET", "/v2/health/ready", "", "").status, 200);
  const std::vector<std::pair<std::string, std::string>> guarded = {
      {"GET", "/v2"},
      {"GET", "/v2/models/clf"},
      {"GET", "/v2/models/clf/ready"},
      {"POST", "/v2/models/clf/infer"}};
  for (const auto& [method, path] : guarded) {
    for (const std::string& credential : {std::string(), std::string("Bearer wrong")}) {
      const HttpResponse refused = call(method, path, InferBody(1), credential);
      EXPECT_EQ(refused.status, 401) << path << " with '" << credential << "'";
      EXPECT_THAT(ErrorOf(refused), StartsWith("authorization: expected")) << path;
      EXPECT_THAT(ErrorOf(refused), Not(HasSubstr("s3cret")));
      ASSERT_EQ(refused.headers.size(), 1u);
      EXPECT_EQ(refused.headers[0].first, "WWW-Authenticate");
    }
    EXPECT_EQ(call(method, path, InferBody(1), "Bearer s3cret").status, 200) << path;
  }
  EXPECT_THAT(metrics_->Serialize(),
              HasSubstr(R"(grpc_server_handled_total{grpc_code="UNAUTHENTICATED",)"
                        R"(grpc_method="ModelInfer",grpc_service="inference.REST",)"
                        R"(grpc_type="http"} 2)"));
}

}  // namespace
}  // namespace invariant::server

namespace invariant::server {
namespace {

TEST_F(RestServiceTest, TheTimeoutCountsFromArrivalSoACallThatWaitedItOutIsNotComputed) {
  HttpRequest request;
  request.method = "POST";
  request.path = "/v2/models/clf/infer";
  request.body = InferBody(2);
  request.arrival = std::chrono::steady_clock::now() - std::chrono::seconds(61);  // timeout 60 s
  const HttpResponse late = rest_->Handle(request);
  EXPECT_EQ(late.status, 504);
  EXPECT_THAT(ErrorOf(late), StartsWith("deadline: the request waited longer than"));
  EXPECT_THAT(
      metrics_->Serialize(),
      HasSubstr(R"(invariant_abandoned_total{reason="deadline_exceeded",stage="http_queue"} 1)"));
  request.body = InferBody(2);
  request.arrival = std::chrono::steady_clock::now();
  EXPECT_EQ(rest_->Handle(request).status, 200);
}

TEST_F(RestServiceTest, AnAnswerOverTheLimitIsRefusedBeforeAnyWorkSayingHowToAskForLess) {
  // 10 rows of clf: 16 features + 3 scores + an index + a name per row; JSON
  // numbers are priced at 16 bytes (+4 for the protocol's copy), binary at 4 (+4).
  rest_ = std::make_unique<RestInferenceService>(handler_.get(), metrics_.get(), absl::Seconds(60),
                                                 "", 10 * 16 * 20);
  const HttpResponse json = Call("POST", "/v2/models/clf/infer", InferBody(10));
  EXPECT_EQ(json.status, 400);
  EXPECT_THAT(ErrorOf(json), StartsWith("outputs: the answer would take up to "));
  EXPECT_THAT(ErrorOf(json), HasSubstr("over http_max_response_bytes=3200"));
  EXPECT_THAT(ErrorOf(json), HasSubstr("binary_data_output"));
  std::string binary = InferBody(10);
  binary.insert(binary.size() - 1, R"(,"parameters":{"binary_data_output":true})");
  const HttpResponse ok = Call("POST", "/v2/models/clf/infer", binary);
  EXPECT_EQ(ok.status, 200) << ok.body.substr(0, 300);
}

}  // namespace
}  // namespace invariant::server

namespace invariant::server {
namespace {

TEST_F(RestServiceTest, OutputsAskedInBinaryOneByOneArePricedAsBinary) {
  rest_ = std::make_unique<RestInferenceService>(handler_.get(), metrics_.get(), absl::Seconds(60),
                                                 "", 10 * 16 * 8);
  // 10 rows of clf's 16 features: 2,560 bytes in JSON, 640 in binary.
  std::string per_output = InferBody(10);
  per_output.insert(per_output.size() - 1,
                    R"(,"outputs":[{"name":"features","parameters":{"binary_data":true}}])");
  EXPECT_EQ(Call("POST", "/v2/models/clf/infer", per_output).status, 200);
  std::string json = InferBody(10);
  json.insert(json.size() - 1, R"(,"outputs":[{"name":"features"}])");
  EXPECT_EQ(Call("POST", "/v2/models/clf/infer", json).status, 400);
}

}  // namespace
}  // namespace invariant::server
