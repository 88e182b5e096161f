// Clients choose method paths, model names and REST paths freely: none of it
// may create a series in /metrics of the REAL invariant-server (issue 21: 20,000
// calls to random unknown methods grew /metrics to 284 MB). The set of series
// after such traffic is the set before it; only counts change.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/client_unary_call.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using testing_models::TestModelSpec;

constexpr int kUnknownCalls = 20000;
constexpr int kInFlight = 256;  // concurrent generic calls on the one channel

TestModelSpec Classifier() {
  TestModelSpec spec;
  spec.name = "clf";
  spec.input_dim = 32;
  spec.num_features = 16;
  spec.num_group_elements = 8;
  spec.num_classes = 4;
  spec.seed = 1;
  return spec;
}

// The identity (name and labels, without the value) of every sample in a
// Prometheus text exposition.
std::set<std::string> SeriesOf(const std::string& text) {
  std::set<std::string> series;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (line.front() == '#') continue;
    series.insert(std::string(line.substr(0, line.rfind(' '))));
  }
  return series;
}

// A random identifier of 1..40 letters and digits.
std::string RandomName(Rng& rng) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string name(1 + rng.UniformInt(40), ' ');
  for (char& c : name) c = kChars[rng.UniformInt(sizeof(kChars) - 1)];
  return name;
}

// A path no server serves: a random service, or a random method of a served
// service (both reach the server's interceptors).
std::string RandomUnknownPath(Rng& rng) {
  if (rng.UniformInt(4) == 0) return absl::StrCat("/invariant.v1.FeatureService/", RandomName(rng));
  return absl::StrCat("/", RandomName(rng), ".", RandomName(rng), "/", RandomName(rng));
}

class MetricsCardinalityTest : public ServerTestBase {
 protected:
  std::string Metrics() {
    absl::StatusOr<std::string> text = HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }
};

// One unary call to `method` with an empty request, by path.
struct GenericCall {
  std::string path;
  grpc::ClientContext context;
  grpc::ByteBuffer response;
  grpc::Status status;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader;
};

TEST_F(MetricsCardinalityTest, UnknownMethodsAndModelsCreateNoSeries) {
  WriteModel(Classifier());
  StartServer({"--poll_seconds=0", "--http_port=0"});
  const int http_port = server_->http_port();
  // Every series, the REST routes' included, exists from startup.
  const std::string before_text = Metrics();
  const std::set<std::string> before = SeriesOf(before_text);
  ASSERT_FALSE(before.empty());

  // 20,000 unary calls to random unknown paths, kInFlight at a time.
  Rng rng(21);
  grpc::GenericStub stub(client_->channel());
  grpc::CompletionQueue cq;
  grpc::Slice empty("", 0);
  const grpc::ByteBuffer request(&empty, 1);
  int started = 0;
  int finished = 0;
  int unimplemented = 0;
  int echoed = 0;
  std::vector<std::unique_ptr<GenericCall>> calls(kInFlight);
  auto start = [&](size_t slot) {
    calls[slot] = std::make_unique<GenericCall>();
    GenericCall& call = *calls[slot];
    call.path = RandomUnknownPath(rng);
    call.reader = stub.PrepareUnaryCall(&call.context, call.path, request, &cq);
    call.reader->StartCall();
    call.reader->Finish(&call.response, &call.status, reinterpret_cast<void*>(slot));
    ++started;
  };
  for (size_t slot = 0; slot < calls.size() && started < kUnknownCalls; ++slot) start(slot);
  void* tag = nullptr;
  bool ok = false;
  while (finished < kUnknownCalls && cq.Next(&tag, &ok)) {
    const size_t slot = reinterpret_cast<size_t>(tag);
    ++finished;
    if (calls[slot]->status.error_code() == grpc::StatusCode::UNIMPLEMENTED) ++unimplemented;
    // The reply does not quote the path the client chose.
    if (absl::StrContains(calls[slot]->status.error_message(), calls[slot]->path)) ++echoed;
    if (started < kUnknownCalls) start(slot);
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  EXPECT_EQ(unimplemented, kUnknownCalls);
  EXPECT_EQ(echoed, 0);

  // Data calls and REST calls naming models that do not exist.
  for (int i = 0; i < 200; ++i) {
    const std::string model = RandomName(rng);
    std::vector<float> scores;
    EXPECT_EQ(client_->Predict(model, 1, RandomRows(1, 32, i), &scores).error_code(),
              grpc::StatusCode::NOT_FOUND);
    v1::GetModelMetadataResponse metadata;
    EXPECT_EQ(client_->GetModelMetadata(model, 0, &metadata).error_code(),
              grpc::StatusCode::NOT_FOUND);
    const std::string path = i % 2 == 0 ? absl::StrCat("/v2/models/", model, "/ready")
                                        : absl::StrCat("/", RandomName(rng), "/", model);
    EXPECT_TRUE(HttpExchange(http_port, absl::StrCat("GET ", path,
                                                     " HTTP/1.1\r\nHost: h\r\nConnection: "
                                                     "close\r\n\r\n"))
                    .ok());
  }

  // One health check: a served service, so counted under its own name.
  grpc::ClientContext health_context;
  grpc::ByteBuffer health_response;
  const grpc::Status health = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
      client_->channel().get(),
      grpc::internal::RpcMethod("/grpc.health.v1.Health/Check",
                                grpc::internal::RpcMethod::NORMAL_RPC),
      &health_context, request, &health_response);
  EXPECT_TRUE(health.ok()) << health.error_message();

  const std::string after_text = Metrics();
  const std::set<std::string> after = SeriesOf(after_text);
  EXPECT_EQ(after.size(), before.size());
  std::vector<std::string> added, removed;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                      std::back_inserter(removed));
  EXPECT_THAT(added, ::testing::IsEmpty());
  EXPECT_THAT(removed, ::testing::IsEmpty());
  const std::vector<std::string> unknown = {"grpc_service=\"unknown\"", "grpc_method=\"unknown\"",
                                            "grpc_type=\"unknown\""};
  EXPECT_EQ(MetricValue(after_text, "grpc_server_started_total", unknown), kUnknownCalls);
  std::vector<std::string> unimplemented_labels = unknown;
  unimplemented_labels.push_back("grpc_code=\"UNIMPLEMENTED\"");
  EXPECT_EQ(MetricValue(after_text, "grpc_server_handled_total", unimplemented_labels),
            kUnknownCalls);
  EXPECT_EQ(MetricValue(after_text, "grpc_server_handled_total",
                        {"grpc_service=\"invariant.v1.FeatureService\"", "grpc_method=\"Predict\"",
                         "grpc_code=\"NOT_FOUND\""}),
            200);
  EXPECT_EQ(MetricValue(after_text, "grpc_server_started_total",
                        {"grpc_service=\"grpc.health.v1.Health\"", "grpc_method=\"Check\""}),
            1);
  // Reflection (both versions) is served and labelled by name, at 0 here.
  EXPECT_EQ(MetricValue(after_text, "grpc_server_started_total",
                        {"grpc_service=\"grpc.reflection.v1alpha.ServerReflection\""}),
            0);
  EXPECT_EQ(MetricValue(after_text, "grpc_server_started_total",
                        {"grpc_service=\"grpc.reflection.v1.ServerReflection\""}),
            0);
  // Counts take a few more digits; the exposition does not grow with the calls.
  EXPECT_LT(after_text.size(), before_text.size() + 4096);
  RecordProperty("metrics_bytes_before", static_cast<int>(before_text.size()));
  RecordProperty("metrics_bytes_after", static_cast<int>(after_text.size()));
  RecordProperty("series", static_cast<int>(after.size()));
}

}  // namespace
}  // namespace invariant::testing_server
