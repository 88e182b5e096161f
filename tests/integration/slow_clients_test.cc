// The REAL invariant-server's REST port with 1,000 slow-body, 1,000
// slow-header and 1,000 idle connections open at once: probes of
// /v2/health/live and an infer call are still answered (their latency is
// printed, not asserted), and a server with a data token refuses an
// unauthenticated body without reading it; idle uploads declaring the
// largest body do not keep an infer out, and health probes are answered with
// the connection cap reached (issue 32); an infer waiting for its batch holds
// no handler thread (issue 50). (HttpServer's own behaviour in
// process: tests/unit/server/http/http_server_test.cc.)
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/integration_env.h"
#include "tests/integration/raw_http.h"
#include "tests/integration/server_process.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;
using testing_server::RawHttpConnection;
using testing_server::RawHttpResponse;

// The real server, 3,000 hostile connections open at once.
class SlowClientsTest : public testing_server::ServerTestBase {
 protected:
  // The REST ModelInfer calls' series of `name` (-1 when /metrics fails).
  double InferMetric(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> labels = {"grpc_service=\"inference.REST\"",
                                       "grpc_method=\"ModelInfer\""};
    labels.insert(labels.end(), extra.begin(), extra.end());
    absl::StatusOr<std::string> text = testing_server::HttpGet(server_->metrics_port(), "/metrics");
    return text.ok() ? testing_server::MetricValue(*text, name, labels) : -1;
  }
};

TEST_F(SlowClientsTest, SlowAndIdleConnectionsDoNotStallTheServer) {
  testing_server::RaiseOpenFileLimit();
  WriteModel({});
  // Deadlines far beyond the test, so every hostile connection stays open
  // while the probes run.
  StartServer({"--http_port=0", "--http_idle_timeout_seconds=600",
               "--http_header_timeout_seconds=600", "--http_body_timeout_seconds=600"});
  const int port = server_->http_port();
  ASSERT_GT(port, 0);
  constexpr int kEach = 1000;
  std::vector<std::unique_ptr<RawHttpConnection>> hostile;
  for (int i = 0; i < 3 * kEach; ++i) {
    auto connection = std::make_unique<RawHttpConnection>();
    ASSERT_TRUE(connection->Connect(port).ok()) << "connection " << i;
    if (i % 3 == 0) {  // slow body: 10 of 1,000 bytes
      ASSERT_TRUE(connection
                      ->Send("POST /v2/models/rf/infer HTTP/1.1\r\nHost: h\r\n"
                             "Content-Length: 1000\r\n\r\n{\"inputs\":")
                      .ok());
    } else if (i % 3 == 1) {  // slow headers
      ASSERT_TRUE(connection->Send("GET /v2/health/live HTTP/1.1\r\nHost: h\r\nX-Slow: ").ok());
    }  // else idle
    hostile.push_back(std::move(connection));
  }
  std::vector<double> probe_ms;
  RawHttpConnection kept;
  ASSERT_TRUE(kept.Connect(port).ok());
  for (int i = 0; i < 200; ++i) {
    const absl::Time start = absl::Now();
    RawHttpConnection fresh;
    RawHttpConnection* connection = &kept;
    if (i % 2 == 0) {
      ASSERT_TRUE(fresh.Connect(port).ok());
      connection = &fresh;
    }
    ASSERT_TRUE(connection->Send("GET /v2/health/live HTTP/1.1\r\nHost: h\r\n\r\n").ok());
    absl::StatusOr<RawHttpResponse> live = connection->Read();
    ASSERT_TRUE(live.ok()) << "probe " << i << ": " << live.status();
    EXPECT_EQ(live->status, 200);
    EXPECT_EQ(live->body, "{\"live\":true}");
    probe_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  std::sort(probe_ms.begin(), probe_ms.end());
  // Reported, not asserted (CI machines are loaded); bench/serving/ has the figure.
  std::cout << "[slow clients] 3000 hostile connections open; /v2/health/live p50 "
            << probe_ms[probe_ms.size() / 2] << " ms, p99 " << probe_ms[probe_ms.size() * 99 / 100]
            << " ms\n";

  std::string data;
  for (int i = 0; i < 16; ++i) absl::StrAppend(&data, i == 0 ? "" : ",", 0.25 * i);
  const std::string body = absl::StrCat(
      "{\"inputs\":[{\"name\":\"input\",\"shape\":[1,16],\"datatype\":\"FP32\",\"data\":[", data,
      "]}]}");
  ASSERT_TRUE(kept.Send(absl::StrCat("POST /v2/models/rf/infer HTTP/1.1\r\nHost: h\r\n"
                                     "Content-Length: ",
                                     body.size(), "\r\n\r\n", body))
                  .ok());
  absl::StatusOr<RawHttpResponse> infer = kept.Read();
  ASSERT_TRUE(infer.ok()) << infer.status();
  EXPECT_EQ(infer->status, 200) << infer->body;
  EXPECT_THAT(infer->body, HasSubstr("\"name\":\"scores\""));
  bool serving = false;
  ASSERT_TRUE(client_->Health("", &serving).ok());
  EXPECT_TRUE(serving);
  // The hostile connections were held open all along, not dropped to cope.
  for (int i = 0; i < 3 * kEach; i += 97) EXPECT_FALSE(hostile[i]->Readable()) << i;
}

TEST_F(SlowClientsTest, WithATokenAnUnauthenticatedBodyIsNeverRead) {
  WriteModel({});
  const std::string token_file = (dir_ / "data-token").string();
  {
    std::ofstream out(token_file);
    out << "s3cret-token-of-enough-length\n";
  }
  StartServer({"--http_port=0", "--data_token_file=" + token_file});
  RawHttpConnection connection;
  ASSERT_TRUE(connection.Connect(server_->http_port()).ok());
  ASSERT_TRUE(connection
                  .Send("POST /v2/models/rf/infer HTTP/1.1\r\nHost: h\r\n"
                        "Content-Length: 1000000\r\n\r\n")
                  .ok());
  absl::StatusOr<RawHttpResponse> response = connection.Read();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 401);
  EXPECT_EQ(response->headers["www-authenticate"], "Bearer");
  EXPECT_TRUE(connection.ClosedByServer());
}

TEST_F(SlowClientsTest, AnInferWhoseClientLeavesIsCancelledInTheBatcher) {
  WriteModel({});
  // The batcher holds every batch, and the call's deadline is far away: the
  // call can only end by the client's leaving.
  StartServer({"--http_port=0", "--testonly_start_paused", "--http_timeout_seconds=600"});
  {
    RawHttpConnection connection;
    ASSERT_TRUE(connection.Connect(server_->http_port()).ok());
    const std::string body =
        "{\"inputs\":[{\"name\":\"input\",\"shape\":[1,16],\"datatype\":\"FP32\",\"data\":"
        "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}]}";
    ASSERT_TRUE(connection
                    .Send(absl::StrCat("POST /v2/models/rf/infer HTTP/1.1\r\nHost: h\r\n"
                                       "Content-Length: ",
                                       body.size(), "\r\n\r\n", body))
                    .ok());
    // The call has started (it is counted before it is parsed and queued).
    bool started = false;
    for (int i = 0; i < 600 && !started; ++i) {
      started = InferMetric("grpc_server_started_total") == 1;
      if (!started) absl::SleepFor(absl::Milliseconds(50));
    }
    ASSERT_TRUE(started);
  }  // the client leaves
  bool counted = false;
  for (int i = 0; i < 600 && !counted; ++i) {
    counted = InferMetric("grpc_server_handled_total", {"grpc_code=\"CANCELLED\""}) == 1;
    if (!counted) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(counted) << "the call was not cancelled when its client left";
  server_->Signal(SIGUSR1);  // the batcher runs again; the server still answers
  RawHttpConnection after;
  ASSERT_TRUE(after.Connect(server_->http_port()).ok());
  ASSERT_TRUE(after.Send("GET /v2/health/ready HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  absl::StatusOr<RawHttpResponse> ready = after.Read();
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200);
}

// The 300-byte infer body of these tests, framed.
std::string SmallInfer() {
  std::string data;
  for (int i = 0; i < 16; ++i) absl::StrAppend(&data, i == 0 ? "" : ",", 0.25 * i);
  const std::string body = absl::StrCat(
      "{\"inputs\":[{\"name\":\"input\",\"shape\":[1,16],\"datatype\":\"FP32\",\"data\":[", data,
      "]}]}");
  return absl::StrCat("POST /v2/models/rf/infer HTTP/1.1\r\nHost: h\r\nContent-Length: ",
                      body.size(), "\r\n\r\n", body);
}

// Issue 50 (2a): an infer call waiting for its batch (or its clips' decoding)
// holds no HTTP handler thread. With one handler thread and the batcher
// held, three infers are all taken and queued, and a route answered on a
// handler thread (server metadata) is answered while they wait; before, the
// first infer kept the thread until its batch ran.
TEST_F(SlowClientsTest, InferCallsWaitingForTheirBatchHoldNoHandlerThread) {
  WriteModel({});
  StartServer({"--http_port=0", "--http_threads=1", "--testonly_start_paused",
               "--http_timeout_seconds=600"});
  auto started = [&] { return InferMetric("grpc_server_started_total"); };
  std::vector<std::unique_ptr<RawHttpConnection>> calls;
  for (int i = 0; i < 3; ++i) {
    calls.push_back(std::make_unique<RawHttpConnection>());
    ASSERT_TRUE(calls.back()->Connect(server_->http_port()).ok());
    ASSERT_TRUE(calls.back()->Send(SmallInfer()).ok());
  }
  // Each call is counted when the handler thread takes it.
  bool all_taken = false;
  for (int i = 0; i < 600 && !all_taken; ++i) {
    all_taken = started() == 3;
    if (!all_taken) absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(all_taken) << "the one handler thread took " << started() << " of 3 held infers";
  RawHttpConnection metadata;
  ASSERT_TRUE(metadata.Connect(server_->http_port()).ok());
  ASSERT_TRUE(metadata.Send("GET /v2 HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  absl::StatusOr<RawHttpResponse> answer = metadata.Read();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  for (const auto& call : calls) EXPECT_FALSE(call->Readable()) << "an infer was answered held";
  server_->Signal(SIGUSR1);  // the batches run: every infer is answered
  for (const auto& call : calls) {
    absl::StatusOr<RawHttpResponse> inferred = call->Read();
    ASSERT_TRUE(inferred.ok()) << inferred.status();
    EXPECT_EQ(inferred->status, 200) << inferred->body;
    EXPECT_THAT(inferred->body, HasSubstr("\"outputs\""));
  }
}

// Issue 32 (3): 16 uploads declaring the largest body (16 MiB each, the
// whole 256 MiB budget before) and 4 chunked ones, all admitted and silent:
// a small infer is still answered.
TEST_F(SlowClientsTest, IdleUploadsDoNotKeepAnInferOut) {
  WriteModel({});
  // No minimum body rate: the uploads stay however slow the machine, so the
  // test shows that they hold no more than what they sent.
  StartServer(
      {"--http_port=0", "--http_body_timeout_seconds=600", "--http_min_body_bytes_per_second=0"});
  const int port = server_->http_port();
  std::vector<std::unique_ptr<RawHttpConnection>> idle;
  for (int i = 0; i < 20; ++i) {
    auto connection = std::make_unique<RawHttpConnection>();
    ASSERT_TRUE(connection->Connect(port).ok());
    const std::string framing =
        i < 16 ? "Content-Length: 16777216\r\n" : "Transfer-Encoding: chunked\r\n";
    ASSERT_TRUE(connection
                    ->Send("POST /v2/models/rf/infer HTTP/1.1\r\nHost: h\r\n" + framing +
                           "Expect: 100-continue\r\n\r\n")
                    .ok());
    // Admitted (and charged) before the 100 is written.
    absl::StatusOr<RawHttpResponse> interim = connection->Read();
    ASSERT_TRUE(interim.ok()) << i << ": " << interim.status();
    ASSERT_EQ(interim->status, 100) << i << ": " << interim->body;
    idle.push_back(std::move(connection));
  }
  RawHttpConnection infer;
  ASSERT_TRUE(infer.Connect(port).ok());
  ASSERT_TRUE(infer.Send(SmallInfer()).ok());
  absl::StatusOr<RawHttpResponse> response = infer.Read();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200) << response->body;
  EXPECT_THAT(response->body, HasSubstr("\"name\":\"scores\""));
}

// Issue 32 (7): with every connection of --http_max_connections open (and
// more, silent, past it), the health routes are still answered; other
// requests past the cap get 503.
TEST_F(SlowClientsTest, HealthProbesAreAnsweredWithTheConnectionCapReached) {
  WriteModel({});
  StartServer({"--http_port=0", "--http_max_connections=20", "--http_idle_timeout_seconds=600",
               "--http_header_timeout_seconds=600"});
  const int port = server_->http_port();
  std::vector<std::unique_ptr<RawHttpConnection>> held;
  for (int i = 0; i < 20; ++i) {
    auto connection = std::make_unique<RawHttpConnection>();
    ASSERT_TRUE(connection->Connect(port).ok());
    // Mid-request (headers begun, never ended): not idle, so none of them is
    // closed to make room (an idle one would be, issue 50).
    ASSERT_TRUE(connection->Send("GET /v2/health/live HTTP/1.1\r\nHost: h\r\n").ok());
    held.push_back(std::move(connection));
  }
  bool counted = false;  // every one is under the cap before the next are made
  for (int i = 0; i < 3000 && !counted; ++i) {
    auto metrics = testing_server::HttpGet(server_->metrics_port(), "/metrics");
    counted = metrics.ok() && testing_server::MetricValue(*metrics, "invariant_http_connections",
                                                          {"kind=\"open\""}) == 20;
    if (!counted) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(counted);
  for (int i = 0; i < 5; ++i) {  // past the cap, silent
    auto connection = std::make_unique<RawHttpConnection>();
    ASSERT_TRUE(connection->Connect(port).ok());
    held.push_back(std::move(connection));
  }
  for (const char* path : {"/v2/health/live", "/v2/health/ready"}) {
    RawHttpConnection probe;
    ASSERT_TRUE(probe.Connect(port).ok());
    ASSERT_TRUE(probe.Send(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: h\r\n\r\n")).ok());
    absl::StatusOr<RawHttpResponse> answer = probe.Read();
    ASSERT_TRUE(answer.ok()) << path << ": " << answer.status();
    EXPECT_EQ(answer->status, 200) << path << ": " << answer->body;
  }
  RawHttpConnection infer;
  ASSERT_TRUE(infer.Connect(port).ok());
  ASSERT_TRUE(infer.Send(SmallInfer()).ok());
  absl::StatusOr<RawHttpResponse> refused = infer.Read();
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("too many open connections"));
}

}  // namespace
}  // namespace invariant
