// The event-driven HttpServer in process, under the clients that took the
// old front end down: keep-alive, pipelining, total deadlines, the
// connection cap, admission before the body, RFC 9112 framing, bodies in
// flight, a client that vanishes. (The real server with 3,000 slow and idle
// connections: tests/integration/slow_clients_test.cc.)
//
// No assertion is on a duration: deadlines are shown by a client that keeps
// the connection busy far longer than the deadline (a per-read timer would
// never fire), cancellation by a hook the handler waits on.
#include "server/http/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/raw_http.h"

namespace invariant {
namespace {

using server::HttpRequest;
using server::HttpResponse;
using server::HttpServer;
using server::HttpServerOptions;
using ::testing::HasSubstr;
using testing_server::RawHttpConnection;
using testing_server::RawHttpResponse;

class HttpFrontEndTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options) {
    options.host = "127.0.0.1";
    options.error_response = [](int status, const std::string& message) {
      HttpResponse response =
          HttpResponse::Text(status, absl::StrCat("{\"error\":\"", message, "\"}"));
      response.content_type = "application/json";
      return response;
    };
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("/echo", [](const HttpRequest& r) {
      return HttpResponse::Text(200, absl::StrCat(r.method, " ", r.path, " [", r.body, "]"));
    });
    server_->Route(
        "/private", [](const HttpRequest& r) { return HttpResponse::Text(200, "secret"); },
        [](const HttpRequest& r) -> std::optional<HttpResponse> {
          if (r.Header("X-Token") == "t") return std::nullopt;
          return HttpResponse::Text(401, "no token");
        });
    // Returns once the client goes away or release_ is notified.
    server_->Route("/wait", [this](const HttpRequest& r) {
      r.cancellation->OnCancel([this] {
        saw_cancel_ = true;
        Wake();
      });
      handler_started_.Notify();
      // Bounded so a broken server fails the test instead of hanging it.
      wake_mu_.LockWhenWithTimeout(absl::Condition(&woken_), absl::Seconds(60));
      wake_mu_.Unlock();
      handler_finished_.Notify();
      return HttpResponse::Text(200, "done");
    });
    ASSERT_TRUE(server_->Start().ok());
  }
  void Connect(RawHttpConnection* connection) {
    ASSERT_TRUE(connection->Connect(server_->port()).ok());
  }
  RawHttpResponse Exchange(RawHttpConnection* connection, const std::string& request) {
    EXPECT_TRUE(connection->Send(request).ok());
    absl::StatusOr<RawHttpResponse> response = connection->Read();
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : RawHttpResponse{};
  }
  RawHttpResponse OneShot(const std::string& request) {
    RawHttpConnection connection;
    Connect(&connection);
    return Exchange(&connection, request);
  }

  std::unique_ptr<HttpServer> server_;
  // Ends the /wait handler.
  void Wake() {
    absl::MutexLock lock(&wake_mu_);
    woken_ = true;
  }

  absl::Notification handler_started_;
  absl::Mutex wake_mu_;
  bool woken_ ABSL_GUARDED_BY(wake_mu_) = false;
  absl::Notification handler_finished_;
  std::atomic<bool> saw_cancel_{false};
};

TEST_F(HttpFrontEndTest, KeepAliveAnswersManyRequestsOnOneConnection) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  for (int i = 0; i < 50; ++i) {
    const std::string body = absl::StrCat("n", i);
    RawHttpResponse response = Exchange(
        &connection, absl::StrCat("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: ", body.size(),
                                  "\r\n\r\n", body));
    ASSERT_EQ(response.status, 200);
    EXPECT_EQ(response.body, absl::StrCat("POST /echo [", body, "]"));
    EXPECT_EQ(response.headers["connection"], "keep-alive");
  }
  EXPECT_EQ(server_->open_connections(), 1);
}

TEST_F(HttpFrontEndTest, PipelinedRequestsAreAnsweredInOrder) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  std::string pipeline;
  for (int i = 0; i < 10; ++i) {
    absl::StrAppend(&pipeline, "POST /echo/", i,
                    " HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n", i);
  }
  absl::StrAppend(&pipeline, "GET /echo/last HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(connection.Send(pipeline).ok());
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<RawHttpResponse> response = connection.Read();
    ASSERT_TRUE(response.ok()) << i << ": " << response.status();
    EXPECT_EQ(response->body, absl::StrCat("POST /echo/", i, " [", i, "]"));
  }
  absl::StatusOr<RawHttpResponse> last = connection.Read();
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->body, "GET /echo/last []");
  EXPECT_EQ(last->headers["connection"], "close");
  EXPECT_TRUE(connection.ClosedByServer());
}

TEST_F(HttpFrontEndTest, HeaderDeadlineIsForAllTheHeadersNotEachRead) {
  HttpServerOptions options;
  options.header_timeout_ms = 300;
  Start(options);
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(connection.Send("GET /echo HTTP/1.1\r\n").ok());
  // A header line every 20 ms: 2,000 of them (40 s) stay under the header
  // size limit, so only a deadline for the whole head can end this.
  for (int i = 0; i < 2000 && !connection.Readable(); ++i) {
    if (!connection.Send(absl::StrCat("X-", i, ": v\r\n")).ok()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::StatusOr<RawHttpResponse> response = connection.Read();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 408);
  EXPECT_THAT(response->body, HasSubstr("request headers: not complete within 300 ms"));
  EXPECT_TRUE(connection.ClosedByServer());
}

TEST_F(HttpFrontEndTest, BodyDeadlineIsForTheWholeBodyNotEachRead) {
  HttpServerOptions options;
  options.body_timeout_ms = 300;
  Start(options);
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(
      connection.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n").ok());
  for (int i = 0; i < 5000 && !connection.Readable(); ++i) {
    if (!connection.Send("x").ok()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::StatusOr<RawHttpResponse> response = connection.Read();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 408);
  EXPECT_THAT(response->body, HasSubstr("request body: not complete within 300 ms"));
}

TEST_F(HttpFrontEndTest, IdleKeepAliveConnectionsAreClosed) {
  HttpServerOptions options;
  options.idle_timeout_ms = 200;
  Start(options);
  RawHttpConnection connection;
  Connect(&connection);
  EXPECT_EQ(Exchange(&connection, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  EXPECT_TRUE(connection.ClosedByServer());
}

TEST_F(HttpFrontEndTest, ConnectionsPastTheCapAreRefusedWith503) {
  HttpServerOptions options;
  options.max_connections = 3;
  Start(options);
  std::vector<RawHttpConnection> held(3);
  for (RawHttpConnection& connection : held) {
    Connect(&connection);
    // Answered, so this connection is surely counted before the next one.
    EXPECT_EQ(Exchange(&connection, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  }
  RawHttpConnection extra;
  Connect(&extra);
  absl::StatusOr<RawHttpResponse> refused = extra.Read();
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("too many open connections (at most 3)"));
  EXPECT_TRUE(extra.ClosedByServer());
  held[0].Close();
  // Once one closes, a new connection is served (the server notices the
  // close asynchronously: retry until then, boundedly).
  bool served = false;
  for (int attempt = 0; attempt < 200 && !served; ++attempt) {
    RawHttpConnection next;
    Connect(&next);
    if (next.Send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").ok()) {
      absl::StatusOr<RawHttpResponse> response = next.Read();
      served = response.ok() && response->status == 200;
    }
    if (!served) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(served);
}

TEST_F(HttpFrontEndTest, AdmissionAnswersBeforeTheBodyIsRead) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  // The body is announced but never sent: only an answer from the headers
  // alone can come back (else the body deadline, 30 s, and a 408).
  ASSERT_TRUE(
      connection.Send("POST /private HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n").ok());
  absl::StatusOr<RawHttpResponse> response = connection.Read();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 401);
  EXPECT_EQ(response->headers["connection"], "close");
  EXPECT_TRUE(connection.ClosedByServer());
  EXPECT_EQ(
      OneShot("POST /private HTTP/1.1\r\nHost: h\r\nX-Token: t\r\nContent-Length: 1\r\n\r\nx").body,
      "secret");
}

TEST_F(HttpFrontEndTest, ExpectContinueIsAnsweredOnceAdmitted) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(connection
                  .Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
                        "Expect: 100-continue\r\n\r\n")
                  .ok());
  absl::StatusOr<RawHttpResponse> interim = connection.Read();
  ASSERT_TRUE(interim.ok()) << interim.status();
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(connection.Send("abc").ok());
  absl::StatusOr<RawHttpResponse> response = connection.Read();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "POST /echo [abc]");
  // Refused at admission: no 100, the refusal at once.
  EXPECT_EQ(OneShot("POST /private HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
                    "Expect: 100-continue\r\n\r\n")
                .status,
            401);
}

TEST_F(HttpFrontEndTest, FramingAndCodingsAreCheckedBeforeTheBody) {
  HttpServerOptions options;
  options.max_body_bytes = 64;
  Start(options);
  struct Case {
    std::string request;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400,
       "Content-Length"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
       "3\r\nabc\r\n0\r\n\r\n",
       400, "Transfer-Encoding"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
       "3\r\nabc\r\n0\r\n\r\n",
       400, "Content-Length"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 400,
       "only one \"chunked\""},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400,
       "only one \"chunked\""},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
       "3\r\nabc\r\n0\r\n\r\n",
       400, "only one \"chunked\""},
      {"POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400,
       "on HTTP/1.1"},
      {"GET /echo HTTP/1.1\r\n\r\n", 400, "Host: expected exactly one, received 0"},
      {"GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "received 2"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Encoding: identity\r\n"
       "Content-Encoding: gzip\r\nContent-Length: 2\r\n\r\n\x1f\x8b",
       415, "only identity"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;e=" +
           std::string(200000, 'a'),
       400, "too long"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n"
       "\x1f\x8b",
       415, "only identity"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n", 413, "at most 64 bytes"},
      {"GET /echo%00.x HTTP/1.1\r\nHost: h\r\n\r\n", 400, "control byte"},
      {"GET /echo%0a HTTP/1.1\r\nHost: h\r\n\r\n", 400, "control byte"},
      {"GET /echo%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400, "%-escape"},
      {"GET /nowhere HTTP/1.1\r\nHost: h\r\n\r\n", 404, "no such route"},
      {"GET /echo HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n", 431,
       "at most 16384 bytes"},
      {"POST /echo HTTP/1.1\r\nHost: h\r\nExpect: something\r\nContent-Length: 1\r\n\r\nx", 417,
       "100-continue"},
  };
  for (const Case& c : cases) {
    RawHttpResponse response = OneShot(c.request);
    EXPECT_EQ(response.status, c.status) << c.request.substr(0, 60);
    EXPECT_THAT(response.body, HasSubstr("{\"error\":")) << c.request.substr(0, 60);
    EXPECT_THAT(response.body, HasSubstr(c.message)) << c.request.substr(0, 60);
  }
}

TEST_F(HttpFrontEndTest, AnUnframedBodyCannotSmuggleARequest) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  // With a transfer coding the parser cannot frame, the "body" would be read
  // as the next request if the connection stayed open.
  ASSERT_TRUE(connection
                  .Send("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n"
                        "GET /echo/smuggled HTTP/1.1\r\nHost: h\r\n\r\n")
                  .ok());
  absl::StatusOr<RawHttpResponse> first = connection.Read();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->status, 400);
  EXPECT_EQ(first->headers["connection"], "close");
  EXPECT_TRUE(connection.ClosedByServer());
  EXPECT_FALSE(connection.Read(absl::Seconds(1)).ok()) << "the smuggled request was answered";
}

TEST_F(HttpFrontEndTest, AnswersInFlightAtShutdownAreStillWritten) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(connection.Send("GET /wait HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  handler_started_.WaitForNotification();
  // The server stops while the handler holds the request; whichever comes
  // first, the stop or the handler's end, the client gets its answer.
  std::thread stop([this] { server_.reset(); });
  Wake();
  absl::StatusOr<RawHttpResponse> response = connection.Read();
  stop.join();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "done");
}

TEST_F(HttpFrontEndTest, AClientThatGoesAwayCancelsItsRequest) {
  Start({});
  {
    RawHttpConnection connection;
    Connect(&connection);
    ASSERT_TRUE(connection.Send("GET /wait HTTP/1.1\r\nHost: h\r\n\r\n").ok());
    handler_started_.WaitForNotification();
  }  // closed
  handler_finished_.WaitForNotification();
  EXPECT_TRUE(saw_cancel_.load());
  // The server goes on serving.
  EXPECT_EQ(OneShot("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
}

TEST_F(HttpFrontEndTest, BodiesInFlightAreBounded) {
  HttpServerOptions options;
  options.max_body_bytes = 100;
  options.max_inflight_body_bytes = 150;
  Start(options);
  RawHttpConnection first;
  Connect(&first);
  // "100 Continue" is written once the first body is admitted (reserved).
  ASSERT_TRUE(first
                  .Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n"
                        "Expect: 100-continue\r\n\r\n")
                  .ok());
  absl::StatusOr<RawHttpResponse> interim = first.Read();
  ASSERT_TRUE(interim.ok()) << interim.status();
  ASSERT_EQ(interim->status, 100);
  RawHttpResponse busy = OneShot("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 60\r\n\r\n" +
                                 std::string(60, 'y'));
  EXPECT_EQ(busy.status, 503);
  EXPECT_EQ(busy.headers["retry-after"], "1");
  EXPECT_EQ(
      OneShot("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 50\r\n\r\n" + std::string(50, 'z'))
          .status,
      200);
  ASSERT_TRUE(first.Send(std::string(100, 'x')).ok());
  absl::StatusOr<RawHttpResponse> done = first.Read();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status, 200);
  // Released: the 60-byte body fits now.
  EXPECT_EQ(
      OneShot("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 60\r\n\r\n" + std::string(60, 'y'))
          .status,
      200);
}

}  // namespace
}  // namespace invariant
