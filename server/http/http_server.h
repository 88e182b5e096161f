// http_server.h: the embedded HTTP/1.1 server of invariant-server (the REST
// front end and the metrics endpoint), event-driven on Boost.Beast / Asio.
//
// One network thread multiplexes every connection (epoll): an idle or slow
// connection costs a socket, a parser and a timer, never a thread. Handlers
// run on `threads` handler threads (default stacks), never on the network
// thread, except the cheap `admit` hooks (below).
//
// Per connection, in order (RFC 9112):
//   * Keep-alive and pipelining: requests on one connection are answered one
//     at a time, in order; the next request is read after the previous
//     answer is written. HTTP/1.0 and "Connection: close" close after the
//     answer.
//   * Deadlines, each a total for its phase, not per read: `idle_timeout_ms`
//     waiting for the first byte of a request on an open connection (then the
//     connection closes silently), `header_timeout_ms` from that byte to the
//     end of the headers and `body_timeout_ms` for the whole body (then 408
//     and close), `write_timeout_ms` for writing an answer (then close).
//   * At most `max_connections` connections are open; one more is answered
//     503 and closed at once. At most `max_inflight_body_bytes` of request
//     bodies are held (being read, queued or handled) at once; a request
//     that would pass it is answered 503 before its body is read.
//   * After the headers, before a byte of the body is read, framing first
//     (RFC 9112; each of these is 400 and closes, since the next request
//     could not be found): conflicting Content-Length headers, Content-Length
//     with Transfer-Encoding, a Transfer-Encoding that is not exactly one
//     "chunked" or is on HTTP/1.0, an HTTP/1.1 request without exactly one
//     Host; a path with a NUL or control byte (raw or %-encoded) or a bad
//     %-escape is 400 too, headers over 16 KiB 431, a chunk-size line or
//     trailer longer than the read buffer 400. Then the route is chosen (404
//     when none claims the path), Content-Encoding other than identity is
//     415, Content-Length over `max_body_bytes` 413, the route's `admit`
//     hook runs, and the bytes in flight are reserved. "Expect:
//     100-continue" is answered "100 Continue" only once admitted (and never
//     to HTTP/1.0).
//     An answer given before the body is read closes the connection
//     (after a short bounded drain, so the client reads the answer).
//   * A client that closes its connection while its request is handled
//     cancels it: HttpRequest::cancellation fires (the handler may stop
//     early); the answer is still written if the socket takes it. A client
//     that only half-closes (shutdown of its write side) counts as gone, as
//     in nginx; a disconnect after a pipelined byte arrived is noticed only
//     when the next read fails.
//   * Stopping (the destructor): new requests get 503 and close; requests
//     being handled or queued are answered and their answers written (for
//     at most 2 s after the handlers end), then every connection closes.
//   * Every answer the server gives itself (404, 408, 413, 503, parse
//     errors...) is written by `error_response`, so a front end can make
//     them all JSON. Messages quote no client bytes.
//
// Thread-safety: Route before Start; Start once. Handlers run concurrently on
// the handler threads and must be thread-safe; `admit` hooks run on the
// network thread and must not block. The destructor stops accepting, closes
// every connection, waits for running handlers and drops queued ones.
#ifndef INVARIANT_SERVER_HTTP_HTTP_SERVER_H_
#define INVARIANT_SERVER_HTTP_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace invariant::server {

// Fires once when the client of a request goes away before its answer.
// Thread-safe.
class HttpCancellation {
 public:
  // Runs `callback` when (or now, if) the request is cancelled; at most once.
  void OnCancel(std::function<void()> callback);
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Called by the server (and by tests).
  void Cancel();

 private:
  std::mutex mu_;
  std::atomic<bool> cancelled_{false};
  std::vector<std::function<void()>> callbacks_;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // %-decoded path, without the query
  std::string query;   // text after '?', or empty
  std::string body;    // empty in an `admit` hook: the body is not read yet
  std::vector<std::pair<std::string, std::string>> headers;
  // Never null in a handler; fires when the client disconnects.
  std::shared_ptr<HttpCancellation> cancellation;

  // The value of header `name` (case-insensitive), or empty.
  std::string Header(const std::string& name) const;
  // Whether header `name` is present (case-insensitive).
  bool HasHeader(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  static HttpResponse Text(int status, std::string body);
};

// The standard reason phrase of `status` ("Not Found"), or "Error".
const char* HttpReasonPhrase(int status);

// The handler owns the request for the call and may move out of it (e.g. free
// the body once it is parsed, so a large request is not held twice).
using HttpHandler = std::function<HttpResponse(HttpRequest&)>;
// Runs on the network thread after the headers: an answer here is sent
// without reading the body (or running the handler); nullopt admits the
// request. Must be fast and must not block.
using HttpAdmit = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

// A route: which paths it claims and who answers them.
struct HttpRoute {
  std::string prefix;
  bool exact = false;
  HttpHandler handler;
  HttpAdmit admit;  // may be empty
};

class HttpServerImpl;

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;
  int threads = 4;  // handler threads
  size_t max_body_bytes = 1 << 20;
  int64_t max_inflight_body_bytes = 256 << 20;
  int max_connections = 10000;  // capped by the process's file limit
  int idle_timeout_ms = 60000;
  int header_timeout_ms = 10000;
  int body_timeout_ms = 30000;
  int write_timeout_ms = 30000;
  // Writes the answers the server gives itself from the status and a one-line
  // message; empty = plain text "message\n".
  std::function<HttpResponse(int status, const std::string& message)> error_response;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Requests whose path equals `prefix` or, unless `exact`, starts with
  // `prefix` + "/" go to `handler` (the longest matching prefix wins; "/"
  // claims every path unless exact). Call before Start().
  void Route(std::string prefix, HttpHandler handler, HttpAdmit admit = nullptr,
             bool exact = false);

  // Binds `host:port` (port 0 = pick; port() tells which) and starts the
  // threads; UNAVAILABLE naming the address when it cannot listen. Raises
  // the process's soft limit of open files to its hard limit, and caps
  // max_connections below it.
  absl::Status Start();
  // The bound port, or 0 before Start().
  int port() const { return port_; }
  // Open connections now (for tests and metrics).
  int open_connections() const;

 private:
  HttpServerOptions options_;
  std::vector<HttpRoute> pending_routes_;  // until Start
  std::unique_ptr<HttpServerImpl> impl_;   // http_session.h
  int port_ = 0;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HTTP_HTTP_SERVER_H_
