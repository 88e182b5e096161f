// Admission by cost on the REAL invariant-server (issue 32): clip decoding
// held on its own workers leaves gRPC and REST health answering; calls
// abandoned while their clips wait (REST clients that closed their
// connections; a cancelled gRPC call is shown in process by
// admission_handler_test.cc) are answered without decoding and counted; clips
// that would cost more seconds of audio than the decoding budget, answers
// larger than the REST limit and requests over the memory budget are refused
// before any work, saying how to ask for less; a client that never reads its
// answer holds no more than the answer budget, and gives it back when it
// goes. No timing: the server starts with its decoders and batcher held
// (--testonly_start_paused) until SIGUSR1, and the test waits for the metrics
// that show each state.
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "invariant/v1/feature_service.grpc.pb.h"
#include "tests/integration/integration_env.h"
#include "tests/integration/raw_http.h"
#include "tests/test_models/test_audio_model.h"
#include "tests/unit/server/testing/audio_test_util.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_server::HttpExchange;
using testing_server::HttpGet;
using testing_server::MetricValue;
using namespace server::audio_test;  // NOLINT

class AdmissionTest : public testing_server::ServerTestBase {
 protected:
  // Polls /metrics until the sample reaches `value` (at most ~30 s); the value seen.
  double WaitForMetric(const std::string& name, const std::vector<std::string>& labels,
                       double value) {
    double seen = -1;
    for (int i = 0; i < 3000 && seen != value; ++i) {
      auto metrics = HttpGet(server_->metrics_port(), "/metrics");
      seen = metrics.ok() ? MetricValue(*metrics, name, labels) : -1;
      if (seen != value) absl::SleepFor(absl::Milliseconds(10));
    }
    return seen;
  }
  double Metric(const std::string& name, const std::vector<std::string>& labels) {
    auto metrics = HttpGet(server_->metrics_port(), "/metrics");
    return metrics.ok() ? MetricValue(*metrics, name, labels) : -1;
  }

  // A REST infer of `n` INT16 clips of `samples` samples, as JSON, asking
  // for the scores only (one computation: asking for features too would
  // decode the clips twice today, issue 33).
  static std::string RestClips(int n, int samples) {
    std::vector<std::string> values;
    for (int i = 0; i < n * samples; ++i) values.push_back(absl::StrCat((i * 37) % 2000 - 1000));
    const std::string json = absl::StrCat(
        R"({"inputs":[{"name":"input","datatype":"INT16","shape":[)", n, ",", samples,
        R"(],"data":[)", absl::StrJoin(values, ","), R"(]}],"outputs":[{"name":"scores"}]})");
    return absl::StrCat(
        "POST /v2/models/sound/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n", "Connection: close\r\n",
        "Content-Type: application/json\r\nContent-Length: ", json.size(), "\r\n\r\n", json);
  }
};

TEST_F(AdmissionTest, HeldClipDecodingLeavesHealthAnsweringAndAbandonedCallsAreNotDecoded) {
  testing_models::TestAudioModelSpec spec;
  ASSERT_TRUE(testing_models::WriteTestAudioModel(models(), spec).ok());
  StartServer({"--testonly_start_paused", "--http_port=0", "--decode_threads=1"});
  const std::vector<std::string> audio = {"budget=\"audio\""};
  ASSERT_EQ(Metric("invariant_inflight", audio), 0);

  // Three gRPC calls of 4 clips of 1 s (+ the 0.25 s span each): 5 s each,
  // more than gRPC's completion-queue threads, all held in decoding.
  auto channel = grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials());
  auto stub = v1::FeatureService::NewStub(channel);
  const v1::FeaturizeRequest request = ClipsRequest(4, 8000);
  constexpr int kGrpcCalls = 3;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<v1::FeaturizeResponse> responses(kGrpcCalls);
  std::vector<std::promise<grpc::Status>> results(kGrpcCalls);
  for (int i = 0; i < kGrpcCalls; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stub->async()->Featurize(contexts[i].get(), &request, &responses[i],
                             [&results, i](grpc::Status status) { results[i].set_value(status); });
  }
  ASSERT_EQ(WaitForMetric("invariant_inflight", audio, 5 * kGrpcCalls), 5 * kGrpcCalls);

  // Health answers over gRPC and REST while the decoding is held.
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext health_context;
  grpc::health::v1::HealthCheckRequest check;
  grpc::health::v1::HealthCheckResponse serving;
  ASSERT_TRUE(health->Check(&health_context, check, &serving).ok());
  EXPECT_EQ(serving.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  absl::StatusOr<std::string> live = HttpGet(server_->http_port(), "/v2/health/live");
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_THAT(*live, HasSubstr("\"live\":true"));

  // Two REST calls of 2 clips of 0.5 s (1.5 s each) whose clients then leave.
  std::vector<std::unique_ptr<testing_server::RawHttpConnection>> rest_clients;
  for (int i = 0; i < 2; ++i) {
    rest_clients.push_back(std::make_unique<testing_server::RawHttpConnection>());
    ASSERT_TRUE(rest_clients.back()->Connect(server_->http_port()).ok());
    ASSERT_TRUE(rest_clients.back()->Send(RestClips(2, 4000)).ok());
  }
  ASSERT_EQ(WaitForMetric("invariant_inflight", audio, 5 * kGrpcCalls + 2 * 2),
            5 * kGrpcCalls + 2 * 2);
  for (auto& client : rest_clients) client->Close();
  // The server has noticed both departures (each cancelled its call) ...
  ASSERT_EQ(WaitForMetric("invariant_http_clients_gone_total", {}, 2), 2);

  // ... so once resumed, the abandoned calls leave without decoding and are
  // counted, while the live gRPC calls are decoded and answered.
  server_->Signal(SIGUSR1);
  for (int i = 0; i < kGrpcCalls; ++i) {
    const grpc::Status status = results[i].get_future().get();
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(responses[i].num_rows(), 4);
  }
  const std::vector<std::string> decode_cancelled = {"stage=\"decode\"", "reason=\"cancelled\""};
  EXPECT_EQ(WaitForMetric("invariant_abandoned_total", decode_cancelled, 2), 2);
  EXPECT_EQ(WaitForMetric("invariant_inflight", audio, 0), 0);
  EXPECT_EQ(WaitForMetric("invariant_inflight", {"budget=\"memory\""}, 0), 0);
  // And a call sent now is decoded and answered.
  grpc::ClientContext context;
  v1::FeaturizeResponse response;
  const grpc::Status ok = stub->Featurize(&context, ClipsRequest(1, 800), &response);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_EQ(response.num_rows(), 1);
}

TEST_F(AdmissionTest, ClipsCostingMoreThanTheDecodingBudgetAreRefusedBeforeDecoding) {
  testing_models::TestAudioModelSpec spec;
  ASSERT_TRUE(testing_models::WriteTestAudioModel(models(), spec).ok());
  StartServer({"--http_port=0", "--max_decode_audio_seconds=100"});
  // 401 one-sample clips: each is padded to the model's 0.25 s, so 100.25 s.
  grpc::ClientContext context;
  v1::FeaturizeResponse response;
  auto stub = v1::FeatureService::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  const grpc::Status refused = stub->Featurize(&context, ClipsRequest(401, 1), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), StartsWith("inputs.clips: the request costs 101 seconds"));
  EXPECT_THAT(refused.error_message(), HasSubstr("max_decode_audio_seconds=100"));
  // The same over REST: a small JSON body of one-sample INT16 clips.
  absl::StatusOr<std::string> rest =
      HttpExchange(server_->http_port(), RestClips(401, 1), absl::Seconds(30), false);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_THAT(*rest, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(*rest, HasSubstr("max_decode_audio_seconds=100"));
  EXPECT_EQ(
      Metric("invariant_admission_refused_total", {"budget=\"audio\"", "reason=\"too_large\""}), 2);
  // Within the budget it is served.
  grpc::ClientContext fits_context;
  EXPECT_TRUE(stub->Featurize(&fits_context, ClipsRequest(300, 1), &response).ok());
  EXPECT_EQ(response.num_rows(), 300);
}

TEST_F(AdmissionTest, LargeAnswersAndRequestsOverTheMemoryBudgetAreRefusedBeforeAnyWork) {
  testing_models::TestModelSpec spec;
  spec.name = "feat";
  spec.num_classes = 0;
  spec.num_features = 64;  // 128 features a row
  WriteModel(spec);
  // 1,000 rows of 128 features: 2 MB in JSON (16 bytes a number), 1 MB binary.
  StartServer(
      {"--http_port=0", "--http_max_response_bytes=1500000", "--max_inflight_bytes=3000000"});
  const std::vector<float> x = RandomRows(1000, 16, 2);
  std::vector<std::string> values;
  for (float v : x) values.push_back(absl::StrCat(v));
  auto infer = [&](const std::string& parameters) {
    const std::string json =
        absl::StrCat(R"({"inputs":[{"name":"input","datatype":"FP32","shape":[1000,16],"data":[)",
                     absl::StrJoin(values, ","), "]}]", parameters, "}");
    return HttpExchange(server_->http_port(),
                        absl::StrCat("POST /v2/models/feat/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                     "Connection: close\r\nContent-Type: application/json\r\n"
                                     "Content-Length: ",
                                     json.size(), "\r\n\r\n", json),
                        absl::Seconds(30), false);
  };
  absl::StatusOr<std::string> json_answer = infer("");
  ASSERT_TRUE(json_answer.ok()) << json_answer.status();
  EXPECT_THAT(*json_answer, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(*json_answer, HasSubstr("over http_max_response_bytes=1500000"));
  EXPECT_THAT(*json_answer, HasSubstr("binary_data_output"));
  absl::StatusOr<std::string> binary = infer(R"(,"parameters":{"binary_data_output":true})");
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_THAT(*binary, StartsWith("HTTP/1.1 200"));

  // Over gRPC, 3,000 rows hold 3000 · (64 + 128 · 8) bytes, over the 3 MB budget.
  grpc::ClientContext context;
  auto stub = v1::FeatureService::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("feat");
  for (float v : RandomRows(3000, 16, 3)) request.mutable_inputs()->add_values(v);
  v1::FeaturizeResponse response;
  const grpc::Status refused = stub->Featurize(&context, request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("over max_inflight_bytes=3000000"));
  EXPECT_THAT(refused.error_message(), HasSubstr("send fewer rows per request"));
  EXPECT_EQ(
      Metric("invariant_admission_refused_total", {"budget=\"memory\"", "reason=\"too_large\""}),
      1);
}

TEST_F(AdmissionTest, ANonReadingClientHoldsNoMoreThanTheAnswerBudgetAndFreesItWhenItLeaves) {
  testing_models::TestModelSpec spec;
  spec.name = "feat";
  spec.num_classes = 0;
  spec.num_features = 64;  // 128 features a row: 512 bytes a row in binary
  WriteModel(spec);
  // No minimum write rate and a long write deadline: the reader that never
  // reads stays until the test lets it go, however slow the machine.
  StartServer({"--http_port=0", "--http_max_inflight_answer_bytes=1048576",
               "--http_min_write_bytes_per_second=0", "--http_body_timeout_seconds=600"});
  auto infer = [](int rows) {
    const std::vector<float> x = RandomRows(rows, 16, 9);
    const std::string binary(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
    const std::string json =
        absl::StrCat(R"({"inputs":[{"name":"input","datatype":"FP32","shape":[)", rows,
                     R"(,16],"parameters":{"binary_data_size":)", binary.size(),
                     R"(}}],"outputs":[{"name":"features","parameters":{"binary_data":true}}]})");
    return absl::StrCat("POST /v2/models/feat/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                        "Content-Type: application/octet-stream\r\n",
                        "Inference-Header-Content-Length: ", json.size(),
                        "\r\nContent-Length: ", json.size() + binary.size(), "\r\n\r\n", json,
                        binary);
  };
  // A 32 MiB answer (65,536 rows), far more than the kernel's socket buffers
  // take, to a client that never reads it.
  testing_server::RawHttpConnection reader_that_never_reads;
  ASSERT_TRUE(reader_that_never_reads.Connect(server_->http_port()).ok());
  ASSERT_TRUE(reader_that_never_reads.Send(infer(65536)).ok());
  const std::vector<std::string> answer = {"kind=\"answer\""};
  double held = -1;
  for (int i = 0; i < 3000 && !(held > 0); ++i) {  // bounded wait for the answer to be held
    held = Metric("invariant_http_held_bytes", answer);
    if (!(held > 0)) absl::SleepFor(absl::Milliseconds(10));
  }
  if (!(held > 0)) {  // say what the server answered instead
    absl::StatusOr<testing_server::RawHttpResponse> answered = reader_that_never_reads.Read();
    FAIL() << "no answer bytes held; the server answered "
           << (answered.ok() ? absl::StrCat(answered->status, " ", answered->body.substr(0, 300))
                             : answered.status().ToString());
  }
  // The budget is spent: a new call is refused before its body is read.
  testing_server::RawHttpConnection other;
  ASSERT_TRUE(other.Connect(server_->http_port()).ok());
  ASSERT_TRUE(other.Send(infer(1)).ok());
  absl::StatusOr<testing_server::RawHttpResponse> busy = other.Read();
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(busy->headers["retry-after"], "1");
  EXPECT_THAT(busy->body, HasSubstr("bytes of answers or more wait to be written"));
  EXPECT_GE(Metric("invariant_http_refused_total", {"reason=\"answer_budget\""}), 1);
  // The reader leaves: what it held is given back, and calls are served again.
  reader_that_never_reads.Close();
  EXPECT_EQ(WaitForMetric("invariant_http_held_bytes", answer, 0), 0);
  testing_server::RawHttpConnection again;
  ASSERT_TRUE(again.Connect(server_->http_port()).ok());
  ASSERT_TRUE(again.Send(infer(1)).ok());
  absl::StatusOr<testing_server::RawHttpResponse> ok = again.Read();
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status, 200);
}

}  // namespace
}  // namespace invariant
