// http_server.h: the embedded HTTP/1.1 server of invariant-server (the REST
// front end and the metrics endpoint), event-driven on Boost.Beast / Asio.
//
// One network thread multiplexes every connection (epoll): an idle or slow
// connection costs a socket, a parser and a timer, never a thread. Handlers
// run on `threads` handler threads (default stacks), never on the network
// thread, except the cheap `admit` hooks (below). Handler threads run at a
// lower CPU priority (kHandlerNice) than the network thread, so a burst of
// busy handlers cannot hold the reading of requests and the probes back.
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
//     and close), `write_timeout_ms` for writing an answer (then a reset).
//   * Minimum rates (Apache's mod_reqtimeout MinRate, nginx's
//     client_body_timeout per read): from `rate_grace_ms` after a body's
//     reading (or an answer's writing) starts, every rate * `rate_window_ms`
//     bytes must move within `rate_window_ms` of the previous ones (or of
//     the grace's end): a body slower than `min_body_bytes_per_second` is
//     answered 408 and closed, a client reading its answer slower than
//     `min_write_bytes_per_second` is cut (reset). 0 turns a rate off.
//   * At most `max_connections` connections are open. At the cap, a new
//     connection takes the place of the one idle the longest (waiting for
//     a request's first byte: the server closes it cleanly, as a keep-alive
//     timeout would), so idle clients cannot keep out one with a request.
//     When none is idle, one more is not refused at once: it takes one of `probe_slots` reserved
//     slots, its headers are read within `probe_header_timeout_ms`, and it is answered by its
//     route's `admit` hook when the hook answers (a health probe), else 503 (also when its headers
//     are late); then it closes. When every reserved slot is taken, a new connection takes the
//     oldest one's (which is closed unanswered), so slow or idle clients past the cap cannot keep a
//     probe out. Kubernetes: point liveness and readiness probes at a route answered in `admit`
//     (the REST front end's /v2/health/live and /v2/health/ready); the kubelet opens a connection
//     per probe.
//   * Request bodies are charged as they arrive: admitting a body charges
//     its first read (`body_read_bytes`, or the Content-Length if smaller),
//     and each further read of at most `body_read_bytes` is charged before it
//     is made, so a connection holds at most its received bytes plus one
//     read (its share); a declared length reserves nothing more. Once read,
//     the charge is the body's size, released when the handler returns (the
//     string may hold up to twice a chunked body's bytes). At most
//     `max_inflight_body_bytes` are charged at once: a request whose first
//     read does not fit is answered 503 (Retry-After: 1) before its body is
//     read, one whose next read does not fit is answered 503 and closed.
//     With the defaults, 10,000 idle uploads hold 156 MiB of the 256 MiB,
//     so idle uploads alone never fill it.
//   * Handler answers are charged from when the handler returns until they
//     are written or the connection closes. While at least
//     `max_answer_bytes` are charged, a request that would run a handler is
//     answered 503 (Retry-After: 1) before its body is read, and a request
//     already read is answered 503 instead of running its handler when a
//     handler thread takes it; answers of `admit` hooks (health) and the
//     server's own are not charged nor refused. A handler's answer is
//     charged even past the budget, so the answers held are bounded by
//     max_answer_bytes plus `threads` answers plus the deferred answers
//     given meanwhile (bounded by whoever makes them: a REST infer leases
//     its answer from the server's memory budget until it is encoded).
//   * After the headers, before a byte of the body is read, framing first
//     (RFC 9112; each of these is 400 and closes, since the next request
//     could not be found): conflicting Content-Length headers, Content-Length
//     with Transfer-Encoding, a Transfer-Encoding that is not exactly one
//     "chunked" or is on HTTP/1.0, an HTTP/1.1 request without exactly one
//     Host; a path with a NUL or control byte (raw or %-encoded) or a bad
//     %-escape is 400 too, a chunk-size line or trailer longer than the read
//     buffer 400. The header section (request line, fields and the empty
//     line, every CRLF included) may be 16384 bytes; one byte more is 431,
//     however it is split into reads. Then the route is chosen (404 when
//     none claims the path), Content-Encoding other than identity is 415,
//     Content-Length over `max_body_bytes` 413, the route's `admit` hook
//     runs (a connection over the cap ends here, above), the answer budget
//     is checked and the body's first read is charged. "Expect:
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
//   * What was refused or cut is counted (HttpServer::stats()).
//
// Thread-safety: Route before Start; Start once. Handlers run concurrently on
// the handler threads and must be thread-safe; `admit` hooks run on the
// network thread and must not block. The destructor stops accepting, closes
// every connection, waits for running handlers and drops queued ones.
#ifndef INVARIANT_SERVER_HTTP_HTTP_SERVER_H_
#define INVARIANT_SERVER_HTTP_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
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

struct HttpResponse;
// Gives a deferred request its answer (HttpRequest::defer): call it once,
// from any thread; later calls do nothing.
using HttpReply = std::function<void(HttpResponse)>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // %-decoded path, without the query
  std::string query;   // text after '?', or empty
  std::string body;    // empty in an `admit` hook: the body is not read yet
  std::vector<std::pair<std::string, std::string>> headers;
  // The client's address, as gRPC writes a peer: "ipv4:127.0.0.1:50412",
  // "ipv6:[::1]:50412".
  std::string peer;
  // Never null in a handler; fires when the client disconnects.
  std::shared_ptr<HttpCancellation> cancellation;
  // When the request's first byte was read (for a pipelined request, when
  // the read that brought it ended): a front end's deadline counts from
  // here, not from when a handler thread took the request.
  std::chrono::steady_clock::time_point arrival;
  // For a handler that answers later without holding its handler thread
  // (work handed to threads of its own): calling it returns the HttpReply
  // that answers the request, and the handler's return value is ignored.
  // Until the reply comes, the connection waits (its disconnect still
  // cancels `cancellation`) and the answer counts as pending; one given
  // after the server stopped is dropped (the destructor waits for pending
  // answers as for any other). Set by the server for handlers only (empty in
  // `admit` hooks, and where a handler is called directly).
  std::function<HttpReply()> defer;

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
// request. Must be fast and must not block. Its answers are given past the
// connection cap and the budgets too: the place for health probes.
using HttpAdmit = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

// A route: which paths it claims and who answers them.
struct HttpRoute {
  std::string prefix;
  bool exact = false;
  HttpHandler handler;
  HttpAdmit admit;  // may be empty
};

class HttpServerImpl;

// How much lower the handler threads' CPU priority (nice value) is than the
// thread that starts the server's.
inline constexpr int kHandlerNice = 5;

// Defaults are sized for 2 cores and 24 GiB: at most 256 MiB of request
// bodies, 512 MiB (+ `threads` answers) of answers and 10,000 connections
// (+ 64 in probe slots), whose buffers take at most 80 KiB each.
struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;
  int threads = 4;  // handler threads
  size_t max_body_bytes = 1 << 20;
  int64_t max_inflight_body_bytes = 256 << 20;  // request bodies charged at once
  // A body is read, and charged, this much at a time (1..65536); a declared
  // length reserves no more than one read.
  int body_read_bytes = 16 << 10;
  int64_t max_answer_bytes = 512 << 20;  // handler answers held at once; 0 = no budget
  int max_connections = 10000;           // capped by the process's file limit
  // Connections past the cap read for a probe; 0 = closed unanswered.
  int probe_slots = 64;
  int probe_header_timeout_ms = 2000;  // a reserved slot's wait for the headers
  int idle_timeout_ms = 60000;
  int header_timeout_ms = 10000;
  int body_timeout_ms = 30000;
  int write_timeout_ms = 30000;
  int rate_grace_ms = 5000;                     // no minimum rate before this (bodies and answers)
  int rate_window_ms = 2000;                    // after it, rate * window bytes every window
  int64_t min_body_bytes_per_second = 8 << 10;  // 0 = off
  int64_t min_write_bytes_per_second = 32 << 10;  // 0 = off
  // Writes the answers the server gives itself from the status and a one-line
  // message; empty = plain text "message\n".
  std::function<HttpResponse(int status, const std::string& message)> error_response;
};

// What the server holds now and what it refused or cut since Start (each
// count only grows), for metrics.
struct HttpServerStats {
  int open_connections = 0;            // now, under the cap
  int reserved_connections = 0;        // now, past the cap in probe slots
  int64_t body_bytes_held = 0;         // now, request bodies charged
  int64_t answer_bytes_held = 0;       // now, handler answers not written yet
  int queued_requests = 0;             // now, read and waiting for a handler thread
  uint64_t over_cap_answered = 0;      // past the cap, answered by an admit hook (probes)
  uint64_t over_cap_refused = 0;       // past the cap, answered 503
  uint64_t over_cap_dropped = 0;       // past the cap, closed unanswered (slots full)
  uint64_t body_budget_refused = 0;    // 503: max_inflight_body_bytes reached
  uint64_t answer_budget_refused = 0;  // 503: max_answer_bytes reached
  uint64_t headers_too_large = 0;      // 431
  uint64_t header_timeouts = 0;        // 408: header_timeout_ms
  uint64_t body_timeouts = 0;          // 408: body_timeout_ms
  uint64_t body_rate_cuts = 0;         // 408: below min_body_bytes_per_second
  uint64_t write_timeouts = 0;         // reset: write_timeout_ms
  uint64_t write_rate_cuts = 0;        // reset: below min_write_bytes_per_second
  uint64_t clients_gone = 0;  // requests whose client left while handled (cancellation fired)
  uint64_t idle_closed_for_new = 0;  // idle connections closed at the cap to admit a new one
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
  // Counters for metrics (all 0 before Start). Thread-safe.
  HttpServerStats stats() const;

 private:
  HttpServerOptions options_;
  std::vector<HttpRoute> pending_routes_;  // until Start
  std::unique_ptr<HttpServerImpl> impl_;   // http_session.h
  int port_ = 0;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HTTP_HTTP_SERVER_H_
