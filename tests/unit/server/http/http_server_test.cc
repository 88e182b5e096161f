// The event-driven HttpServer in process, under the clients that took the
// old front end down: keep-alive, pipelining, total deadlines, minimum
// rates, the connection cap and its probe slots, admission before the body,
// RFC 9112 framing, the exact header limit, the body and answer budgets, a
// client that vanishes or never reads. (The real server with 3,000 slow and idle
// connections: tests/integration/slow_clients_test.cc.)
//
// No assertion is on a duration: deadlines are shown by a client that keeps
// the connection busy far longer than the deadline (a per-read timer would
// never fire), minimum rates by a client far slower than the rate (or
// silent), cancellation by a hook the handler waits on, budgets by the
// server's counters (HttpServer::stats), waited for with a bound.
#include "server/http/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "core/base/thread_priority.h"
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
    // An answer far larger than the sockets' buffers.
    server_->Route("/big", [](const HttpRequest&) {
      return HttpResponse::Text(200, std::string(kBigAnswer, 'b'));
    });
    // Answered in its admit hook, as a front end answers health probes.
    server_->Route(
        "/live", [](const HttpRequest&) { return HttpResponse::Text(500, "not here"); },
        [](const HttpRequest&) -> std::optional<HttpResponse> {
          return HttpResponse::Text(200, "live");
        });
    // Whether the request's arrival was set, and before the handler ran.
    server_->Route("/arrival", [](const HttpRequest& r) {
      const auto now = std::chrono::steady_clock::now();
      const bool set = r.arrival != std::chrono::steady_clock::time_point();
      return HttpResponse::Text(200, set && r.arrival <= now ? "before" : "unset or after");
    });
    server_->Route(
        "/private", [](const HttpRequest& r) { return HttpResponse::Text(200, "secret"); },
        [](const HttpRequest& r) -> std::optional<HttpResponse> {
          if (r.Header("X-Token") == "t") return std::nullopt;
          return HttpResponse::Text(401, "no token");
        });
    // The handler thread's nice value.
    server_->Route("/nice", [](const HttpRequest&) {
      return HttpResponse::Text(200, absl::StrCat(ThisThreadsNice()));
    });
    // Defers its answer: the reply is kept for the test to give.
    server_->Route("/later", [this](const HttpRequest& r) {
      server::HttpReply reply = r.defer();
      absl::MutexLock lock(&later_mu_);
      later_ = std::move(reply);
      return HttpResponse::Text(500, "ignored: the reply answers");
    });
    // Gives its deferred answer at once, then returns when the test says:
    // the answer waits for the handler (which may still read its request).
    server_->Route("/early", [this](const HttpRequest& r) {
      r.defer()(HttpResponse::Text(200, "early"));
      early_answered_.Notify();
      early_release_.WaitForNotificationWithTimeout(absl::Seconds(60));
      return HttpResponse::Text(500, "ignored: the reply answers");
    });
    // Its admit hook holds the network thread until the test releases it.
    server_->Route(
        "/hold", [](const HttpRequest&) { return HttpResponse::Text(500, "not here"); },
        [this](const HttpRequest&) -> std::optional<HttpResponse> {
          network_held_.Notify();
          network_release_.WaitForNotificationWithTimeout(absl::Seconds(60));
          return HttpResponse::Text(200, "released");
        });
    // Notes the size of each body it is given, in the order given.
    server_->Route("/order", [this](const HttpRequest& r) {
      absl::MutexLock lock(&later_mu_);
      order_.push_back(r.body.size());
      return HttpResponse::Text(200, "noted");
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

  // Waits (bounded: 60 s) until `done` holds of the server's counters.
  bool WaitForStats(const std::function<bool(const server::HttpServerStats&)>& done) {
    for (int i = 0; i < 12000; ++i) {
      if (done(server_->stats())) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  static constexpr size_t kBigAnswer = 64 << 20;
  std::unique_ptr<HttpServer> server_;
  // Ends the /wait handler.
  void Wake() {
    absl::MutexLock lock(&wake_mu_);
    woken_ = true;
  }

  absl::Mutex later_mu_;
  server::HttpReply later_ ABSL_GUARDED_BY(later_mu_);
  absl::Notification early_answered_, early_release_;
  absl::Notification network_held_, network_release_;
  std::vector<size_t> order_ ABSL_GUARDED_BY(later_mu_);
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

// Connections mid-request (headers begun, not ended): busy, never closed
// to make room. Each is counted before the next is made.
void HoldBusy(HttpServer* server, std::vector<RawHttpConnection>& held, int port) {
  for (size_t i = 0; i < held.size(); ++i) {
    ASSERT_TRUE(held[i].Connect(port).ok());
    ASSERT_TRUE(held[i].Send("GET /echo HTTP/1.1\r\nHost: h\r\n").ok());
    bool counted = false;
    for (int attempt = 0; attempt < 3000 && !counted; ++attempt) {
      counted = server->open_connections() == static_cast<int>(i + 1);
      if (!counted) absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_TRUE(counted) << i;
  }
}

TEST_F(HttpFrontEndTest, ConnectionsPastTheCapAreRefusedWith503WhenNoneIsIdle) {
  HttpServerOptions options;
  options.max_connections = 3;
  options.header_timeout_ms = 600000;
  Start(options);
  std::vector<RawHttpConnection> held(3);
  HoldBusy(server_.get(), held, server_->port());
  RawHttpConnection extra;
  Connect(&extra);
  ASSERT_TRUE(extra.Send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").ok());
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

// Issue 50: with the cap reached by idle keep-alive connections, every new
// client was refused. The one idle the longest makes room, closed cleanly.
TEST_F(HttpFrontEndTest, AtTheCapTheLongestIdleConnectionIsClosedForANewOne) {
  HttpServerOptions options;
  options.max_connections = 3;
  Start(options);
  std::vector<RawHttpConnection> idle(3);
  for (RawHttpConnection& connection : idle) {
    Connect(&connection);
    // Answered, so this connection is surely counted (and idle) before the next one.
    EXPECT_EQ(Exchange(&connection, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  }
  RawHttpConnection newcomer;
  Connect(&newcomer);
  EXPECT_EQ(Exchange(&newcomer, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  EXPECT_TRUE(idle[0].ClosedByServer()) << "the longest idle connection was not closed";
  // The others stay, and serve.
  EXPECT_EQ(Exchange(&idle[1], "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  EXPECT_EQ(Exchange(&idle[2], "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  const server::HttpServerStats stats = server_->stats();
  EXPECT_EQ(stats.idle_closed_for_new, 1u);
  EXPECT_EQ(stats.over_cap_refused, 0u);
  EXPECT_EQ(stats.open_connections, 3);
}

// Issue 50: REST unloads held every handler thread while they drained. A
// deferred answer frees its handler thread and is written when given.
TEST_F(HttpFrontEndTest, ADeferredAnswerHoldsNoHandlerThread) {
  HttpServerOptions options;
  options.threads = 1;
  Start(options);
  RawHttpConnection waiting;
  Connect(&waiting);
  ASSERT_TRUE(waiting.Send("GET /later HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  bool deferred = false;
  for (int i = 0; i < 3000 && !deferred; ++i) {
    {
      absl::MutexLock lock(&later_mu_);
      deferred = static_cast<bool>(later_);
    }
    if (!deferred) absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(deferred);
  // The one handler thread serves another request meanwhile.
  EXPECT_EQ(OneShot("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  server::HttpReply reply;
  {
    absl::MutexLock lock(&later_mu_);
    reply = later_;
  }
  std::thread([reply] { reply(HttpResponse::Text(200, "later")); }).join();
  reply(HttpResponse::Text(200, "twice"));  // a second answer does nothing
  absl::StatusOr<RawHttpResponse> answer = waiting.Read();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, "later");
  // The connection stays usable (keep-alive) after a deferred answer.
  EXPECT_EQ(Exchange(&waiting, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
}

// Issue 50: an answer deferred and given before its handler returned (a
// REST infer whose call ends on another thread at once) was written while the
// handler still used the session's request; the calls after it hung. It is
// written once the handler returns, and the connection goes on.
TEST_F(HttpFrontEndTest, ADeferredAnswerGivenBeforeTheHandlerReturnsWaitsForIt) {
  HttpServerOptions options;
  options.threads = 1;
  Start(options);
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(connection.Send("GET /early HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  ASSERT_TRUE(early_answered_.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_FALSE(connection.Readable()) << "written while its handler ran";
  early_release_.Notify();
  absl::StatusOr<RawHttpResponse> answer = connection.Read();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, "early");
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Exchange(&connection, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
    EXPECT_EQ(OneShot("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
  }
}

// Issue 50 (2a): a burst of large bodies queued a small call behind their
// parsing. Queued together, a small body is given to a handler thread before
// a large one that came first; and large ones are not starved: one in every
// five picks is large while both wait.
TEST_F(HttpFrontEndTest, SmallBodiesAreHandledBeforeLargerOnesQueuedEarlier) {
  HttpServerOptions options;
  options.threads = 1;
  Start(options);
  RawHttpConnection busy;
  Connect(&busy);
  ASSERT_TRUE(busy.Send("GET /wait HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  ASSERT_TRUE(handler_started_.WaitForNotificationWithTimeout(absl::Seconds(60)));
  auto post = [](size_t bytes) {
    return absl::StrCat("POST /order HTTP/1.1\r\nHost: h\r\nContent-Length: ", bytes, "\r\n\r\n",
                        std::string(bytes, 'x'));
  };
  // Six large bodies, then five small ones, all queued behind /wait.
  std::vector<size_t> sent;
  for (size_t i = 0; i < 6; ++i) sent.push_back((100 << 10) + i);
  for (size_t i = 0; i < 5; ++i) sent.push_back(10 + i);
  std::vector<std::unique_ptr<RawHttpConnection>> calls;
  for (size_t i = 0; i < sent.size(); ++i) {
    calls.push_back(std::make_unique<RawHttpConnection>());
    Connect(calls.back().get());
    ASSERT_TRUE(calls.back()->Send(post(sent[i])).ok());
    // Queued in this order: each is read before the next is sent.
    bool queued = false;
    for (int k = 0; k < 60000 && !queued; ++k) {
      queued = server_->stats().queued_requests == static_cast<int>(i + 1);
      if (!queued) absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_TRUE(queued) << "request " << i << " was not queued";
  }
  Wake();
  for (const auto& call : calls) {
    absl::StatusOr<RawHttpResponse> answer = call->Read();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->status, 200);
  }
  absl::MutexLock lock(&later_mu_);
  // Small, small, small, small, large (the fifth pick), small, then the rest
  // of the large ones in their order.
  const std::vector<size_t> expected = {sent[6], sent[7], sent[8], sent[9], sent[0], sent[10],
                                        sent[1], sent[2], sent[3], sent[4], sent[5]};
  EXPECT_EQ(order_, expected);
}

// Issue 50, attack 2a: 200 connections opened at once, each sending a large
// body. Taken one a turn, the last waited for a turn of every session before
// it, per connection queued before it (110-220 ms before its first byte was
// read). Connections queued while the network thread is held are taken in one
// turn: the small request queued last is read whole, and handled, while the
// large bodies queued before it still need a dozen reads each.
TEST_F(HttpFrontEndTest, ConnectionsQueuedTogetherAreAcceptedTogether) {
  HttpServerOptions options;
  options.body_read_bytes = 1024;
  Start(options);
  RawHttpConnection holder;
  Connect(&holder);
  ASSERT_TRUE(holder.Send("GET /hold HTTP/1.1\r\nHost: h\r\n\r\n").ok());
  ASSERT_TRUE(network_held_.WaitForNotificationWithTimeout(absl::Seconds(60)));
  auto post = [](size_t bytes) {
    return absl::StrCat("POST /order HTTP/1.1\r\nHost: h\r\nContent-Length: ", bytes, "\r\n\r\n",
                        std::string(bytes, 'x'));
  };
  constexpr int kLarge = 20;
  constexpr size_t kLargeBytes = 16 << 10;
  std::vector<std::unique_ptr<RawHttpConnection>> calls;
  for (int i = 0; i <= kLarge; ++i) {  // in the listen queue once connected
    calls.push_back(std::make_unique<RawHttpConnection>());
    Connect(calls.back().get());
    ASSERT_TRUE(calls.back()->Send(post(i < kLarge ? kLargeBytes : 1)).ok());
  }
  network_release_.Notify();
  absl::StatusOr<RawHttpResponse> held = holder.Read();
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(held->status, 200);
  for (const auto& call : calls) {
    absl::StatusOr<RawHttpResponse> answer = call->Read();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->status, 200);
  }
  absl::MutexLock lock(&later_mu_);
  ASSERT_EQ(order_.size(), kLarge + 1u);
  EXPECT_EQ(order_.front(), 1u) << "the small request was handled after "
                                << std::find(order_.begin(), order_.end(), 1u) - order_.begin()
                                << " large ones";
}

// Issue 50: during a burst of large REST bodies the network thread (which
// answers the probes) waited ~200 ms behind busy handlers for the CPU.
TEST_F(HttpFrontEndTest, HandlersRunAtALowerPriorityThanTheServersThreads) {
  Start({});
  const int here = ThisThreadsNice();
  const RawHttpResponse answer = OneShot("GET /nice HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, absl::StrCat(std::min(here + server::kHandlerNice, 19)));
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

// Issue 32 (8a): Beast's header_limit counts what one parse step sees, so
// headers split over reads passed it; the limit is on the whole section.
TEST_F(HttpFrontEndTest, TheHeaderLimitIsExactForTheWholeSection) {
  Start({});
  // The section: request line, fields, the empty line, every CRLF included.
  auto section = [](size_t size) {
    const std::string start = "GET /echo HTTP/1.1\r\nHost: h\r\nX-Pad: ";
    return start + std::string(size - start.size() - 4, 'p') + "\r\n\r\n";
  };
  ASSERT_EQ(section(16384).size(), 16384u);
  EXPECT_EQ(OneShot(section(16384)).status, 200);
  RawHttpResponse over = OneShot(section(16385));
  EXPECT_EQ(over.status, 431);
  EXPECT_THAT(over.body, HasSubstr("at most 16384 bytes"));
  // 2,000 short fields (about 19 KB), sent in many pieces.
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(connection.Send("GET /echo HTTP/1.1\r\nHost: h\r\n").ok());
  for (int i = 0; i < 2000 && !connection.Readable(); i += 50) {
    std::string lines;
    for (int j = i; j < i + 50; ++j) absl::StrAppend(&lines, "X-", j, ": v\r\n");
    if (!connection.Send(lines).ok()) break;
  }
  (void)connection.Send("\r\n");
  absl::StatusOr<RawHttpResponse> many = connection.Read();
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(many->status, 431);
  EXPECT_EQ(server_->stats().headers_too_large, 2u);
}

// Issue 32 (3): a declared length (or chunked) reserves one read, not the
// body, so idle uploads cannot starve a small request.
TEST_F(HttpFrontEndTest, IdleUploadsCannotBlockASmallRequest) {
  HttpServerOptions options;
  options.max_body_bytes = 1 << 20;
  options.max_inflight_body_bytes = 2 << 20;  // two declared bodies, before
  options.body_read_bytes = 16384;
  options.min_body_bytes_per_second = 0;  // the uploads stay, however slow the machine
  Start(options);
  std::vector<RawHttpConnection> idle(16);
  for (size_t i = 0; i < idle.size(); ++i) {
    Connect(&idle[i]);
    const std::string framing =
        i % 2 == 0 ? "Content-Length: 1048576\r\n" : "Transfer-Encoding: chunked\r\n";
    // "100 Continue" is written once the upload is admitted and charged.
    ASSERT_TRUE(
        idle[i]
            .Send("POST /echo HTTP/1.1\r\nHost: h\r\n" + framing + "Expect: 100-continue\r\n\r\n")
            .ok());
    absl::StatusOr<RawHttpResponse> interim = idle[i].Read();
    ASSERT_TRUE(interim.ok()) << i << ": " << interim.status();
    EXPECT_EQ(interim->status, 100) << i;
  }
  const std::string body(300, 's');
  RawHttpResponse small = OneShot(absl::StrCat(
      "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: ", body.size(), "\r\n\r\n", body));
  EXPECT_EQ(small.status, 200) << small.body;
  // Each idle upload holds one read; the small body was released when its
  // handler returned.
  EXPECT_EQ(server_->stats().body_bytes_held, 16 * 16384);
  EXPECT_EQ(server_->stats().body_budget_refused, 0u);
}

// Issue 32 (3): from the grace on, a body must keep a minimum rate; a
// trickle and a silent chunked upload are cut long before body_timeout_ms.
TEST_F(HttpFrontEndTest, TheMinimumBodyRateCutsTricklingAndSilentUploads) {
  HttpServerOptions options;
  options.body_timeout_ms = 600000;
  options.rate_grace_ms = 0;
  options.rate_window_ms = 100;
  options.min_body_bytes_per_second = 10000;  // 1,000 bytes per 100 ms
  Start(options);
  RawHttpConnection trickle;
  Connect(&trickle);
  ASSERT_TRUE(trickle.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n").ok());
  // A byte every 20 ms: 50 bytes/s at most, however the machine is loaded.
  for (int i = 0; i < 5000 && !trickle.Readable(); ++i) {
    if (!trickle.Send("x").ok()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::StatusOr<RawHttpResponse> cut = trickle.Read();
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(cut->status, 408);
  EXPECT_THAT(cut->body, HasSubstr("request body: slower than 10000 bytes/s"));
  EXPECT_TRUE(trickle.ClosedByServer());

  RawHttpConnection silent;
  Connect(&silent);
  ASSERT_TRUE(
      silent.Send("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n").ok());
  absl::StatusOr<RawHttpResponse> silent_cut = silent.Read();
  ASSERT_TRUE(silent_cut.ok()) << silent_cut.status();
  EXPECT_EQ(silent_cut->status, 408);
  EXPECT_EQ(server_->stats().body_rate_cuts, 2u);
  EXPECT_EQ(server_->stats().body_timeouts, 0u);
  EXPECT_EQ(server_->stats().body_bytes_held, 0);
  EXPECT_EQ(OneShot("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc").body,
            "POST /echo [abc]");
}

// Issue 32 (1): answers waiting for a client that does not read are
// charged; past the budget, requests that would run a handler get 503 before
// their body, admit answers (probes) do not; the charge ends with the
// connection.
TEST_F(HttpFrontEndTest, ANonReadingClientCannotHoldMoreThanTheAnswerBudget) {
  HttpServerOptions options;
  options.max_answer_bytes = kBigAnswer / 2;
  options.min_write_bytes_per_second = 0;  // only the budget here
  options.write_timeout_ms = 600000;
  Start(options);
  auto stalled = std::make_unique<RawHttpConnection>();
  Connect(stalled.get());
  ASSERT_TRUE(stalled->Send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n").ok());  // never read
  ASSERT_TRUE(WaitForStats([](const server::HttpServerStats& s) {
    return s.answer_bytes_held == static_cast<int64_t>(kBigAnswer);
  }));
  RawHttpConnection refused;
  Connect(&refused);
  ASSERT_TRUE(
      refused.Send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n").ok());
  absl::StatusOr<RawHttpResponse> busy = refused.Read();  // the body is never sent
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(busy->headers["retry-after"], "1");
  EXPECT_THAT(busy->body, HasSubstr("bytes of answers or more wait to be written"));
  EXPECT_EQ(OneShot("GET /live HTTP/1.1\r\nHost: h\r\n\r\n").body, "live");
  EXPECT_EQ(server_->stats().answer_budget_refused, 1u);
  stalled.reset();  // the client leaves: its answer is dropped
  ASSERT_TRUE(
      WaitForStats([](const server::HttpServerStats& s) { return s.answer_bytes_held == 0; }));
  EXPECT_EQ(OneShot("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
}

// Issue 32 (1): a client that stops reading its answer is cut by the
// minimum write rate, long before write_timeout_ms, and its charge ends.
TEST_F(HttpFrontEndTest, TheMinimumWriteRateCutsANonReadingClient) {
  HttpServerOptions options;
  options.write_timeout_ms = 600000;
  options.rate_grace_ms = 0;
  options.rate_window_ms = 100;
  options.min_write_bytes_per_second = 1 << 20;
  Start(options);
  RawHttpConnection stalled;
  Connect(&stalled);
  ASSERT_TRUE(stalled.Send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n").ok());  // never read
  ASSERT_TRUE(WaitForStats([](const server::HttpServerStats& s) {
    return s.write_rate_cuts == 1 && s.answer_bytes_held == 0;
  }));
  EXPECT_EQ(server_->stats().write_timeouts, 0u);
  EXPECT_EQ(OneShot("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n").status, 200);
}

// Issue 32 (7): past the connection cap, a probe (a route answered in its
// admit hook) is still answered, in a reserved slot that idle connections
// past the cap cannot keep: the oldest gives its slot up.
TEST_F(HttpFrontEndTest, AProbeIsAnsweredWithTheConnectionCapReached) {
  HttpServerOptions options;
  options.max_connections = 2;
  options.probe_slots = 2;
  options.probe_header_timeout_ms = 600000;
  options.header_timeout_ms = 600000;
  Start(options);
  std::vector<RawHttpConnection> held(2);
  HoldBusy(server_.get(), held, server_->port());
  // Past the cap and silent: they take both reserved slots (connections are
  // accepted in the order they were made).
  std::vector<RawHttpConnection> silent(2);
  for (RawHttpConnection& connection : silent) Connect(&connection);
  RawHttpConnection probe;
  Connect(&probe);
  RawHttpResponse live = Exchange(&probe, "GET /live HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(live.status, 200);
  EXPECT_EQ(live.body, "live");
  EXPECT_EQ(live.headers["connection"], "close");
  EXPECT_TRUE(probe.ClosedByServer());
  EXPECT_TRUE(silent[0].ClosedByServer()) << "the oldest reserved slot was not given up";
  // A request a handler would answer is refused past the cap.
  RawHttpConnection extra;
  Connect(&extra);
  RawHttpResponse refused = Exchange(&extra, "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(refused.status, 503);
  EXPECT_THAT(refused.body, HasSubstr("too many open connections (at most 2)"));
  const server::HttpServerStats stats = server_->stats();
  EXPECT_EQ(stats.over_cap_answered, 1u);
  EXPECT_EQ(stats.over_cap_refused, 1u);
  EXPECT_GE(stats.over_cap_dropped, 1u);
  EXPECT_EQ(stats.open_connections, 2);
}

// Issue 32 (2): a request knows when its first byte came, for deadlines
// counted from arrival.
TEST_F(HttpFrontEndTest, ARequestCarriesItsArrival) {
  Start({});
  RawHttpConnection connection;
  Connect(&connection);
  ASSERT_TRUE(connection
                  .Send("GET /arrival HTTP/1.1\r\nHost: h\r\n\r\n"
                        "GET /arrival HTTP/1.1\r\nHost: h\r\n\r\n")
                  .ok());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<RawHttpResponse> response = connection.Read();
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->body, "before") << i;
  }
}

}  // namespace
}  // namespace invariant
