// The HTTP endpoints answer anything a client sends without crashing:
// HttpServer in process (routing, methods, body limits), then the REAL
// invariant-server's metrics port fed hostile requests, after which the server
// must still answer gRPC and /metrics.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http/http_server.h"
#include "tests/integration/integration_env.h"
#include "tests/integration/server_process.h"

namespace invariant {
namespace {

using server::HttpRequest;
using server::HttpResponse;
using server::HttpServer;
using server::HttpServerOptions;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_server::HttpExchange;
using testing_server::HttpGet;

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

// Recurses `depth` times with 50 KiB frames; returns a value that depends on
// every frame, so the compiler cannot drop them.
int UseStack(int depth, int seed) {
  volatile char frame[50 * 1024];
  for (size_t i = 0; i < sizeof(frame); i += 4096) frame[i] = static_cast<char>(seed + i);
  const int here = frame[(static_cast<size_t>(seed) * 4096) % sizeof(frame)];
  return depth == 0 ? here : here + UseStack(depth - 1, seed + 1);
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.max_body_bytes = 64;
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("/a", [](const HttpRequest& r) {
      return HttpResponse::Text(
          200, absl::StrCat("a ", r.method, " ", r.path, " ", r.query, " [", r.body, "]"));
    });
    server_->Route("/a/b", [](const HttpRequest& r) { return HttpResponse::Text(201, "ab"); });
    // 1 MiB of stack: handlers must not run on small-stack threads.
    server_->Route("/deep", [](const HttpRequest&) {
      return HttpResponse::Text(200, std::to_string(UseStack(20, 0)));
    });
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
  }
  std::string Send(const std::string& raw) {
    absl::StatusOr<std::string> response = HttpExchange(server_->port(), raw);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : "";
  }
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, LongestPrefixWinsAndUnroutedPathsAre404) {
  EXPECT_THAT(Send("GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"), HasSubstr("a GET /a x=1 []"));
  EXPECT_THAT(Send("GET /a/b/c HTTP/1.1\r\nHost: h\r\n\r\n"), StartsWith("HTTP/1.1 201"));
  EXPECT_THAT(Send("GET /a/c HTTP/1.1\r\nHost: h\r\n\r\n"), HasSubstr("a GET /a/c"));
  // "/ab" is not under "/a": prefixes match whole path segments.
  EXPECT_EQ(StatusLine(Send("GET /ab HTTP/1.1\r\nHost: h\r\n\r\n")), "HTTP/1.1 404 Not Found");
  EXPECT_EQ(StatusLine(Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")), "HTTP/1.1 404 Not Found");
}

TEST_F(HttpServerTest, ReadsBodiesUpToTheLimitAndRefusesLarger) {
  EXPECT_THAT(Send("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"),
              HasSubstr("a POST /a  [hello]"));
  EXPECT_THAT(Send("POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"),
              HasSubstr("[abcde]"));
  const std::string big(65, 'x');
  EXPECT_THAT(Send(absl::StrCat("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n", big)),
              StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(Send(absl::StrCat("POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "41\r\n",
                                big, "\r\n0\r\n\r\n")),
              StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(Send("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\nshort"),
              StartsWith("HTTP/1.1 400"));
}

TEST_F(HttpServerTest, HandlersRunOnThreadsWithLargeStacks) {
  const std::string expected = std::to_string(UseStack(20, 0));
  for (int i = 0; i < 3; ++i) {
    const std::string response = Send("GET /deep HTTP/1.1\r\nHost: h\r\n\r\n");
    EXPECT_THAT(response, StartsWith("HTTP/1.1 200"));
    EXPECT_EQ(response.substr(response.find("\r\n\r\n") + 4), expected);
  }
}

TEST_F(HttpServerTest, HeadSendsNoBody) {
  const std::string response = Send("HEAD /a/b HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 201"));
  EXPECT_THAT(response, HasSubstr("Content-Length: 2\r\n"));
  EXPECT_EQ(response.substr(response.find("\r\n\r\n") + 4), "");
}

TEST(HttpServerStartTest, BusyPortIsUnavailableNamingTheAddress) {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  HttpServer first(options);
  ASSERT_TRUE(first.Start().ok());
  options.port = first.port();
  HttpServer second(options);
  const absl::Status status = second.Start();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("127.0.0.1:", first.port())));
}

// The requests an attacker or a curious operator sends to a metrics port.
std::vector<std::string> HostileRequests() {
  std::vector<std::string> requests = {
      "GET / HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /nope HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /favicon.ico HTTP/1.0\r\n\r\n",
      "GET /../../etc/passwd HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /%00%ff%zz HTTP/1.1\r\nHost: h\r\n\r\n",
      "POST /metrics HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
      "DELETE /metrics HTTP/1.1\r\nHost: h\r\n\r\n",
      "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
      "PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 100000000\r\n\r\n",
      "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: -5\r\n\r\n",
      "GET / HTTP/9.9\r\n\r\n",
      "GARBAGE\r\n\r\n",
      "\r\n\r\n",
      "",
      std::string(3000, 'A') + "\r\n\r\n",
      "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /metrics HTTP/1.1\r\n" + std::string(200, 'X') + ": y\r\n\r\n",
      "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11),  // a TLS ClientHello
  };
  std::string many_headers = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < 200; ++i) absl::StrAppend(&many_headers, "H", i, ": v\r\n");
  requests.push_back(many_headers + "\r\n");
  return requests;
}

class MetricsEndpointTest : public testing_server::ServerTestBase {};

TEST_F(MetricsEndpointTest, HostileRequestsNeverTakeTheServerDown) {
  WriteModel({});
  StartServer({});
  const int port = server_->metrics_port();
  for (const std::string& request : HostileRequests()) {
    absl::StatusOr<std::string> response = HttpExchange(port, request);
    ASSERT_TRUE(response.ok()) << "request " << request.substr(0, 40) << ": " << response.status();
  }
  EXPECT_EQ(StatusLine(*HttpExchange(port, "GET /nope HTTP/1.1\r\nHost: h\r\n\r\n")),
            "HTTP/1.1 404 Not Found");
  EXPECT_THAT(*HttpExchange(port, "POST /metrics HTTP/1.1\r\nHost: h\r\n\r\n"),
              StartsWith("HTTP/1.1 405"));
  // Exactly /metrics is served (README): "/", "/metrics/" and "/metricsx" are 404.
  for (const char* path : {"/", "/metrics/", "/metricsx", "/metrics/x"}) {
    EXPECT_EQ(
        StatusLine(*HttpExchange(port, absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: h\r\n\r\n"))),
        "HTTP/1.1 404 Not Found")
        << path;
  }

  // Still alive on both ports.
  absl::StatusOr<std::string> metrics = HttpGet(port, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(*metrics, HasSubstr("invariant_build_info"));
  bool serving = false;
  const grpc::Status health = client_->Health("", &serving);
  ASSERT_TRUE(health.ok()) << health.error_message();
  EXPECT_TRUE(serving);
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0);
}

TEST_F(MetricsEndpointTest, MetricsHostBindsItsOwnAddress) {
  WriteModel({});
  // gRPC on 127.0.0.1 (the harness's --host), metrics on another loopback address.
  StartServer({"--metrics_host=127.0.0.2"});
  EXPECT_FALSE(HttpGet(server_->metrics_port(), "/metrics").ok())
      << "metrics must not listen on 127.0.0.1";
  bool serving = false;
  EXPECT_TRUE(client_->Health("", &serving).ok());
}

}  // namespace
}  // namespace invariant
