// loadgen_test.cc: the REAL invariant-loadgen binary against the REAL
// invariant-server (gRPC and, with --protocol=rest, its --http_port=0 REST
// port) with small, bounded loads. The JSON report's counts must equal what
// the server's Prometheus metrics recorded for the same calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/cli/cli_test_support.h"
#include "tests/integration/integration_env.h"

namespace invariant::cli_test {
namespace {

using ::testing::HasSubstr;

constexpr char kService[] = "grpc_service=\"invariant.v1.FeatureService\"";
constexpr char kRestService[] = "grpc_service=\"inference.REST\"";

class LoadgenTest : public testing_server::ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    testing_models::TestModelSpec rf;
    rf.name = "rf";
    WriteModel(rf);
    testing_models::TestModelSpec feat;
    feat.name = "feat";
    feat.num_classes = 0;
    WriteModel(feat);
    StartServer({"--http_port=0"});
    ASSERT_GT(server_->http_port(), 0);
  }

  ToolResult Loadgen(std::vector<std::string> args) {
    args.push_back("--target=" + server_->target());
    return RunTool(INVARIANT_LOADGEN_BINARY, args, dir_.string());
  }
  // --protocol=rest against the server's REST port.
  ToolResult RestLoadgen(std::vector<std::string> args) {
    args.push_back("--protocol=rest");
    args.push_back("--target=127.0.0.1:" + std::to_string(server_->http_port()));
    return RunTool(INVARIANT_LOADGEN_BINARY, args, dir_.string());
  }
  std::string JsonPath() const { return (dir_ / "report.json").string(); }

  google::protobuf::Struct Report() {
    google::protobuf::Struct json;
    const std::string text = ReadFile(JsonPath());
    EXPECT_TRUE(ParseJson(text, &json)) << text;
    return json;
  }
  static double Field(const google::protobuf::Struct& json, const std::string& object,
                      const std::string& key) {
    return json.fields().at(object).struct_value().fields().at(key).number_value();
  }

  std::string Metrics() {
    auto body = testing_server::HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_TRUE(body.ok()) << body.status();
    return body.ok() ? *body : "";
  }
  static double Handled(const std::string& metrics, const std::string& method,
                        const std::string& code) {
    return MetricValue(metrics, "grpc_server_handled_total",
                       {kService, "grpc_method=\"" + method + "\"", "grpc_code=\"" + code + "\""});
  }
  static double RestInfers(const std::string& metrics, const std::string& code) {
    return MetricValue(metrics, "grpc_server_handled_total",
                       {kRestService, "grpc_method=\"ModelInfer\"", "grpc_code=\"" + code + "\""});
  }
  static double Rows(const std::string& metrics, const std::string& model,
                     const std::string& method) {
    return MetricValue(metrics, "invariant_rows_total",
                       {"model=\"" + model + "\"", "method=\"" + method + "\""});
  }
};

TEST_F(LoadgenTest, ClosedLoopUnaryPredictCountsMatchServerMetrics) {
  const ToolResult r = Loadgen(
      {"--model=rf", "--requests=300", "--concurrency=3", "--batch=2", "--json_out=" + JsonPath()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("requests ok"));
  EXPECT_THAT(r.out, HasSubstr("latency p99 (us)"));
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Field(json, "requests", "ok"), 300);
  EXPECT_EQ(Field(json, "requests", "failed"), 0);
  EXPECT_EQ(json.fields().at("rows_ok").number_value(), 600);
  EXPECT_EQ(json.fields().at("errors").struct_value().fields_size(), 0);
  EXPECT_EQ(json.fields().at("method").string_value(), "predict");
  EXPECT_EQ(json.fields().at("mode").string_value(), "unary");
  EXPECT_GT(json.fields().at("qps").number_value(), 0);
  EXPECT_GT(json.fields().at("rows_per_second").number_value(), 0);
  const double p50 = Field(json, "latency_us", "p50"), p90 = Field(json, "latency_us", "p90"),
               p99 = Field(json, "latency_us", "p99"), max = Field(json, "latency_us", "max");
  EXPECT_GT(p50, 0);
  EXPECT_LE(p50, p90);
  EXPECT_LE(p90, p99);
  EXPECT_LE(p99, max);

  const std::string metrics = Metrics();
  EXPECT_EQ(Handled(metrics, "Predict", "OK"), 300) << metrics;
  EXPECT_EQ(Rows(metrics, "rf", "Predict"), 600) << metrics;
  EXPECT_EQ(Handled(metrics, "GetModelMetadata", "OK"), 1);  // input_dim lookup
}

TEST_F(LoadgenTest, OpenLoopStreamingFeaturizeCountsMatchServerMetrics) {
  const ToolResult r =
      Loadgen({"--model=rf", "--method=featurize", "--mode=stream", "--rate=400", "--requests=80",
               "--concurrency=2", "--batch=3", "--json_out=" + JsonPath()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Field(json, "requests", "ok"), 80);
  EXPECT_EQ(json.fields().at("streams").number_value(), 2);
  EXPECT_EQ(json.fields().at("rate").number_value(), 400);

  const std::string metrics = Metrics();
  // One RPC per stream; every streamed request's rows are computed.
  EXPECT_EQ(Handled(metrics, "StreamFeaturize", "OK"), 2) << metrics;
  EXPECT_EQ(Rows(metrics, "rf", "Featurize"), 240) << metrics;
  EXPECT_EQ(Handled(metrics, "Featurize", "OK"), 0);
}

TEST_F(LoadgenTest, ErrorsAreCountedByCodeLikeTheServer) {
  // "feat" has no head: every Predict fails with FAILED_PRECONDITION.
  const ToolResult r =
      Loadgen({"--model=feat", "--requests=40", "--concurrency=2", "--json_out=" + JsonPath()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("every request failed"));
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Field(json, "requests", "ok"), 0);
  EXPECT_EQ(Field(json, "requests", "failed"), 40);
  EXPECT_EQ(Field(json, "errors", "FAILED_PRECONDITION"), 40);
  EXPECT_EQ(Handled(Metrics(), "Predict", "FAILED_PRECONDITION"), 40);
}

TEST_F(LoadgenTest, DurationBoundedRunMatchesServerMetrics) {
  const ToolResult r =
      Loadgen({"--model=rf", "--duration=0.5", "--concurrency=2", "--json_out=" + JsonPath()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const google::protobuf::Struct json = Report();
  const double ok = Field(json, "requests", "ok");
  EXPECT_GT(ok, 0);
  EXPECT_EQ(Field(json, "requests", "failed"), 0);
  EXPECT_EQ(Handled(Metrics(), "Predict", "OK"), ok);
}

TEST_F(LoadgenTest, UnknownModelExitsThree) {
  const ToolResult r = Loadgen({"--model=nope", "--requests=5"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
}

TEST_F(LoadgenTest, UnboundedOrOutOfRangeOptionsAreUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"--requests=5"},  // no model
      {"--model=rf", "--concurrency=0"},
      {"--model=rf", "--concurrency=100000"},
      {"--model=rf", "--duration=7200"},
      {"--model=rf", "--requests=1000000000"},
      {"--model=rf", "--requests=-1"},
      {"--model=rf", "--batch=0"},
      {"--model=rf", "--rate=-5"},
      {"--model=rf", "--mode=burst"},
      {"--model=rf", "--method=train"},
      {"--model=rf", "--bogus"},
      {"--model=rf", "positional"},
  };
  for (const auto& args : cases) {
    const ToolResult r = Loadgen(args);
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(args, " ") << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("invariant-loadgen: ")) << absl::StrJoin(args, " ");
  }
  // Nothing was sent.
  EXPECT_EQ(Handled(Metrics(), "Predict", "OK"), 0);
}

TEST_F(LoadgenTest, ClosedLoopRestJsonPredictCountsMatchServerMetrics) {
  const ToolResult r = RestLoadgen(
      {"--model=rf", "--requests=60", "--concurrency=3", "--batch=2", "--json_out=" + JsonPath()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("protocol=rest encoding=json"));
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(json.fields().at("protocol").string_value(), "rest");
  EXPECT_EQ(json.fields().at("encoding").string_value(), "json");
  EXPECT_EQ(Field(json, "requests", "ok"), 60);
  EXPECT_EQ(Field(json, "requests", "failed"), 0);
  EXPECT_EQ(json.fields().at("rows_ok").number_value(), 120);
  EXPECT_EQ(json.fields().at("errors").struct_value().fields_size(), 0);
  // At least one connection, at most one per request.
  EXPECT_GE(json.fields().at("connections").number_value(), 1);
  EXPECT_LE(json.fields().at("connections").number_value(), 60);
  EXPECT_LE(Field(json, "latency_us", "p50"), Field(json, "latency_us", "p99"));

  const std::string metrics = Metrics();
  EXPECT_EQ(RestInfers(metrics, "OK"), 60) << metrics;
  EXPECT_EQ(Rows(metrics, "rf", "Predict"), 120) << metrics;
  EXPECT_EQ(Handled(metrics, "Predict", "OK"), 0);  // nothing went over gRPC
}

TEST_F(LoadgenTest, OpenLoopRestFeaturizeCountsMatchServerMetrics) {
  const ToolResult r =
      RestLoadgen({"--model=rf", "--method=featurize", "--rate=400", "--requests=40",
                   "--concurrency=2", "--batch=3", "--json_out=" + JsonPath()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Field(json, "requests", "ok"), 40);
  EXPECT_EQ(Field(json, "requests", "failed"), 0);
  EXPECT_EQ(json.fields().at("rate").number_value(), 400);
  const std::string metrics = Metrics();
  EXPECT_EQ(RestInfers(metrics, "OK"), 40) << metrics;
  EXPECT_EQ(Rows(metrics, "rf", "Featurize"), 120) << metrics;
  EXPECT_EQ(Rows(metrics, "rf", "Predict"), 0) << metrics;
}

TEST_F(LoadgenTest, RestErrorsAreCountedByHttpStatus) {
  // "feat" has no head, so it has no "scores" output: every request is a 400.
  const ToolResult r =
      RestLoadgen({"--model=feat", "--requests=20", "--concurrency=2", "--json_out=" + JsonPath()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("every request failed"));
  const google::protobuf::Struct json = Report();
  EXPECT_EQ(Field(json, "requests", "ok"), 0);
  EXPECT_EQ(Field(json, "errors", "HTTP_400"), 20);
  EXPECT_THAT(
      json.fields().at("error_messages").struct_value().fields().at("HTTP_400").string_value(),
      HasSubstr("scores"));
  EXPECT_EQ(RestInfers(Metrics(), "INVALID_ARGUMENT"), 20);
}

TEST_F(LoadgenTest, RestUnknownModelExitsThree) {
  const ToolResult r = RestLoadgen({"--model=nope", "--requests=5"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("metadata: HTTP_404"));
}

TEST_F(LoadgenTest, RestUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"--model=rf", "--requests=5", "--mode=stream"},
      {"--model=rf", "--requests=5", "--rest_encoding=xml"},
      {"--model=rf", "--requests=5", "--tls"},
      {"--model=rf", "--requests=5", "--version=1", "--version_label=blue"},
  };
  for (const auto& args : cases) {
    const ToolResult r = RestLoadgen(args);
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(args, " ") << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("invariant-loadgen: ")) << absl::StrJoin(args, " ");
  }
  EXPECT_THAT(RestLoadgen({"--model=rf", "--requests=5", "--mode=stream"}).err,
              HasSubstr("gRPC-only"));
  EXPECT_EQ(Loadgen({"--model=rf", "--requests=5", "--protocol=http"}).exit_code, 2);
  EXPECT_EQ(Loadgen({"--model=rf", "--requests=5", "--rest_encoding=binary"}).exit_code, 2);
  EXPECT_EQ(RestInfers(Metrics(), "OK"), 0);
}

// A server with a data token: REST calls need "Authorization: Bearer".
class LoadgenRestTokenTest : public LoadgenTest {
 protected:
  void SetUp() override {
    testing_server::ServerTestBase::SetUp();
    testing_models::TestModelSpec rf;
    rf.name = "rf";
    WriteModel(rf);
    token_path_ = (dir_ / "token").string();
    WriteFile(token_path_, "s3cret\n");
    StartServer({"--http_port=0", "--data_token_file=" + token_path_});
    ASSERT_GT(server_->http_port(), 0);
  }
  std::string token_path_;
};

TEST_F(LoadgenRestTokenTest, TheTokenFileIsSentAsBearer) {
  const ToolResult without = RestLoadgen({"--model=rf", "--requests=5"});
  EXPECT_EQ(without.exit_code, 3);
  EXPECT_THAT(without.err, HasSubstr("HTTP_401"));

  const ToolResult with = RestLoadgen({"--model=rf", "--requests=12", "--concurrency=2",
                                       "--token_file=" + token_path_, "--json_out=" + JsonPath()});
  ASSERT_EQ(with.exit_code, 0) << with.err << with.out;
  EXPECT_EQ(Field(Report(), "requests", "ok"), 12);
  EXPECT_EQ(RestInfers(Metrics(), "OK"), 12);
}

}  // namespace
}  // namespace invariant::cli_test
