// loadgen_rest_client_test.cc: invariant-loadgen's REST client and REST load
// against a scripted HTTP/1.1 server on 127.0.0.1 (port 0) — keep-alive
// reuse, reconnection after the server closes, timeouts, error counting, and
// the binary tensor encoding end to end (invariant-server does not speak it
// yet, so the scripted server answers as Triton's extension specifies).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/loadgen/loadgen.h"
#include "client/loadgen/oip_codec.h"
#include "client/loadgen/rest_client.h"

namespace invariant::loadgen {
namespace {

using ::testing::HasSubstr;

struct SeenRequest {
  std::string request_line;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct ScriptedAnswer {
  std::string response;  // the raw bytes to write; empty = never answer
  bool close = false;    // close the connection after writing
};

// Serves each connection on its own thread: reads a request (headers, then
// Content-Length bytes), records it, writes the scripted answer.
class ScriptedHttpServer {
 public:
  explicit ScriptedHttpServer(std::function<ScriptedAnswer(const SeenRequest&)> script)
      : script_(std::move(script)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(listen_fd_, 64) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
      return;
    }
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~ScriptedHttpServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    accept_thread_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);  // wakes connections never answered
      threads.swap(connection_threads_);
    }
    for (std::thread& t : threads) t.join();
  }

  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  int connections() const { return connections_.load(); }
  std::vector<SeenRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void AcceptLoop() {
    while (true) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      ++connections_;
      std::lock_guard<std::mutex> lock(mu_);
      open_fds_.push_back(fd);
      connection_threads_.emplace_back([this, fd] {
        Serve(fd);
        std::lock_guard<std::mutex> lock(mu_);
        open_fds_.erase(std::find(open_fds_.begin(), open_fds_.end(), fd));
        close(fd);
      });
    }
  }

  void Serve(int fd) {
    std::string buffer;
    char chunk[4096];
    while (true) {
      size_t end;
      while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) return;
        buffer.append(chunk, static_cast<size_t>(n));
      }
      SeenRequest request;
      std::vector<std::string> lines = absl::StrSplit(buffer.substr(0, end), "\r\n");
      request.request_line = lines[0];
      size_t content_length = 0;
      for (size_t i = 1; i < lines.size(); ++i) {
        const size_t colon = lines[i].find(':');
        if (colon == std::string::npos) continue;
        const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
        request.headers[name] = std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
      }
      if (auto it = request.headers.find("content-length"); it != request.headers.end()) {
        EXPECT_TRUE(absl::SimpleAtoi(it->second, &content_length));
      }
      buffer.erase(0, end + 4);
      while (buffer.size() < content_length) {
        const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) return;
        buffer.append(chunk, static_cast<size_t>(n));
      }
      request.body = buffer.substr(0, content_length);
      buffer.erase(0, content_length);
      const ScriptedAnswer answer = script_(request);
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(request);
      }
      if (answer.response.empty()) {  // never answer: wait for the client to go away
        while (recv(fd, chunk, sizeof(chunk), 0) > 0) {
        }
        return;
      }
      size_t sent = 0;
      while (sent < answer.response.size()) {
        const ssize_t n =
            send(fd, answer.response.data() + sent, answer.response.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
      }
      if (answer.close) {
        shutdown(fd, SHUT_WR);
        while (recv(fd, chunk, sizeof(chunk), 0) > 0) {
        }
        return;
      }
    }
  }

  const std::function<ScriptedAnswer(const SeenRequest&)> script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<int> open_fds_;
  std::vector<std::thread> connection_threads_;
  std::vector<SeenRequest> requests_;
};

std::string Http(int status, const std::string& body, const std::string& extra_headers = "") {
  return absl::StrCat("HTTP/1.1 ", status, status == 200 ? " OK" : " Error",
                      "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(), "\r\n",
                      extra_headers, "\r\n", body);
}

std::string ScoresJson(int64_t rows) {
  std::string data;
  for (int64_t i = 0; i < 2 * rows; ++i) absl::StrAppend(&data, i ? "," : "", i);
  return absl::StrCat(
      "{\"model_name\":\"m\",\"model_version\":\"1\",\"outputs\":[{\"name\":"
      "\"scores\",\"datatype\":\"FP32\",\"shape\":[",
      rows, ",2],\"data\":[", data, "]}]}");
}

LoadOptions RestLoad(int64_t requests, int concurrency) {
  LoadOptions o;
  o.model = "m";
  o.protocol = Protocol::kRest;
  o.max_requests = requests;
  o.concurrency = concurrency;
  o.batch = 2;
  o.input_dim = 2;
  o.rows = {1, 2, 3, 4, 5, 6};
  return o;
}

TEST(RestConnectionTest, OneKeepAliveConnectionServesEveryCall) {
  RestInit();
  ScriptedHttpServer server([](const SeenRequest&) { return ScriptedAnswer{Http(200, "{}")}; });
  RestConnection connection(server.target(), "tok", absl::Seconds(10));
  RestCallResult result;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(connection.Post("/v2/models/m/infer", "{}", "application/json", -1, &result).ok());
    EXPECT_EQ(result.http_status, 200);
    EXPECT_EQ(result.body, "{}");
  }
  EXPECT_EQ(connection.connections_opened(), 1);
  EXPECT_EQ(server.connections(), 1);
  const std::vector<SeenRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].request_line, "POST /v2/models/m/infer HTTP/1.1");
  EXPECT_EQ(seen[0].headers.at("authorization"), "Bearer tok");
  EXPECT_EQ(seen[0].headers.at("content-type"), "application/json");
  EXPECT_EQ(seen[0].headers.count("expect"), 0u);
  EXPECT_EQ(seen[0].headers.count("inference-header-content-length"), 0u);
}

TEST(RestConnectionTest, ReconnectsWhenTheServerClosesTheConnection) {
  RestInit();
  ScriptedHttpServer server([](const SeenRequest&) {
    return ScriptedAnswer{Http(200, "{}", "Connection: close\r\n"), /*close=*/true};
  });
  RestConnection connection(server.target(), "", absl::Seconds(10));
  RestCallResult result;
  for (int i = 0; i < 4; ++i) {
    const absl::Status status = connection.Get("/v2/models/m", &result);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(result.http_status, 200);
  }
  EXPECT_EQ(connection.connections_opened(), 4);
  EXPECT_EQ(server.connections(), 4);
  EXPECT_EQ(server.requests()[0].headers.count("authorization"), 0u);
}

TEST(RestConnectionTest, ASilentServerTimesOut) {
  RestInit();
  ScriptedHttpServer server([](const SeenRequest&) { return ScriptedAnswer{}; });
  RestConnection connection(server.target(), "", absl::Milliseconds(200));
  RestCallResult result;
  const absl::Status status =
      connection.Post("/v2/models/m/infer", "{}", "application/json", -1, &result);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(TransportErrorName(status), "CURLE_OPERATION_TIMEDOUT");
}

TEST(RestLoadTest, JsonLoadCountsOkRowsAndConnections) {
  ScriptedHttpServer server([](const SeenRequest& r) {
    EXPECT_EQ(r.request_line, "POST /v2/models/m/versions/4/infer HTTP/1.1");
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    return ScriptedAnswer{Http(200, ScoresJson(2))};
  });
  LoadOptions o = RestLoad(30, 3);
  o.version = 4;
  RestTarget target;
  target.target = server.target();
  const auto report = RunRestLoad(target, o);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->requests_ok, 30);
  EXPECT_EQ(report->rows_ok, 60);
  EXPECT_EQ(report->requests_failed, 0);
  EXPECT_TRUE(report->errors.empty());
  EXPECT_EQ(report->connections, server.connections());
  EXPECT_GE(report->connections, 1);
  EXPECT_LE(report->connections, 3);  // keep-alive: at most one per worker
  EXPECT_EQ(server.requests().size(), 30u);
}

TEST(RestLoadTest, BinaryLoadSendsAndReadsBinaryTensors) {
  const std::vector<float> scores = {0.5f, -1.0f, 2.0f, 4.0f};
  std::string raw;
  for (float v : scores) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    for (int b = 0; b < 4; ++b) raw.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
  }
  const std::string json =
      "{\"model_name\":\"m\",\"model_version\":\"1\",\"outputs\":[{\"name\":\"features\","
      "\"datatype\":\"FP32\",\"shape\":[2,2],\"parameters\":{\"binary_data_size\":16}}]}";
  ScriptedHttpServer server([&](const SeenRequest& r) {
    int64_t header = -1;
    EXPECT_TRUE(absl::SimpleAtoi(r.headers.at("inference-header-content-length"), &header));
    EXPECT_EQ(r.headers.at("content-type"), "application/octet-stream");
    EXPECT_EQ(r.headers.at("authorization"), "Bearer t0k");
    // The JSON, then 2 rows × 2 floats.
    EXPECT_EQ(static_cast<int64_t>(r.body.size()), header + 16);
    EXPECT_THAT(r.body.substr(0, static_cast<size_t>(header)),
                HasSubstr("\"parameters\":{\"binary_data_size\":16}"));
    EXPECT_THAT(r.body.substr(0, static_cast<size_t>(header)),
                HasSubstr("{\"name\":\"features\",\"parameters\":{\"binary_data\":true}}"));
    return ScriptedAnswer{Http(
        200, json + raw, absl::StrCat("Inference-Header-Content-Length: ", json.size(), "\r\n"))};
  });
  LoadOptions o = RestLoad(20, 2);
  o.method = Method::kFeaturize;
  o.rest_encoding = RestEncoding::kBinary;
  RestTarget target;
  target.target = server.target();
  target.bearer_token = "t0k";
  const auto report = RunRestLoad(target, o);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->requests_ok, 20);
  EXPECT_EQ(report->requests_failed, 0);
  EXPECT_TRUE(report->errors.empty()) << report->error_messages.begin()->second;
}

TEST(RestLoadTest, ErrorsAreCountedByStatusTransportOrMalformedBody) {
  std::atomic<int> calls{0};
  ScriptedHttpServer server([&](const SeenRequest&) {
    switch (calls++ % 3) {
      case 0:
        return ScriptedAnswer{Http(503, "{\"error\":\"queue full\"}")};
      case 1:
        return ScriptedAnswer{Http(200, ScoresJson(3))};  // 3 rows for a batch of 2
      default:
        return ScriptedAnswer{Http(200, ScoresJson(2))};
    }
  });
  const auto report =
      RunRestLoad(RestTarget{server.target(), "", absl::Seconds(10)}, RestLoad(9, 1));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->requests_ok, 3);
  EXPECT_EQ(report->requests_failed, 6);
  EXPECT_EQ(report->errors.at("HTTP_503"), 3);
  EXPECT_EQ(report->errors.at("MALFORMED_RESPONSE"), 3);
  EXPECT_EQ(report->error_messages.at("HTTP_503"), "queue full");
  EXPECT_THAT(report->error_messages.at("MALFORMED_RESPONSE"),
              HasSubstr("outputs[0].shape: expected [2, n], received [3, 2]"));

  // Nobody listening: transport errors by libcurl code name.
  int closed_port;
  {
    ScriptedHttpServer gone([](const SeenRequest&) { return ScriptedAnswer{}; });
    closed_port = std::stoi(gone.target().substr(gone.target().find(':') + 1));
  }
  const auto refused = RunRestLoad(
      RestTarget{absl::StrCat("127.0.0.1:", closed_port), "", absl::Seconds(10)}, RestLoad(2, 1));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->requests_failed, 2);
  EXPECT_EQ(refused->errors.at("CURLE_COULDNT_CONNECT"), 2);
}

}  // namespace
}  // namespace invariant::loadgen
