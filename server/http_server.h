// http_server.h: a small embedded HTTP/1.1 server (Debian's civetweb) for the
// metrics endpoint and other plain-HTTP surfaces of invariant-server.
//
// Every request, whatever its path and method, is answered by OUR code:
// civetweb sees one catch-all handler on "/", and HttpServer dispatches by the
// longest registered path prefix; a path no route claims gets a 404 written
// here. (Debian's civetweb 1.15, as wrapped by prometheus-cpp's Exposer,
// crashes in mg_send_http_error when it answers a path without a handler;
// with the catch-all handler civetweb never has to.) Requests civetweb cannot
// parse at all are answered by civetweb itself (400/411/505) before any
// handler runs, which is safe: the crash needs a parsed request with no
// handler.
//
// Contract:
//   * Routes are added before Start(); handlers run concurrently, so they
//     must be thread-safe. They run on HttpServer's own `threads` handler
//     threads, with the default (large) stacks: civetweb's worker threads
//     have 100 KiB stacks (Debian builds it with USE_STACK_SIZE), too small
//     for a JSON parser or an encoder running inline, so a worker only reads
//     the request, hands it over and writes the answer.
//   * A request body larger than max_body_bytes is refused with 413 before it
//     is read; a body shorter than its Content-Length is 400.
//   * Start() binds `host:port` (port 0 = pick; port() tells which) and fails
//     with UNAVAILABLE naming the address when it cannot listen.
//   * The destructor stops the server and waits for running handlers.
#ifndef INVARIANT_SERVER_HTTP_SERVER_H_
#define INVARIANT_SERVER_HTTP_SERVER_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"

struct mg_context;
struct mg_connection;

namespace invariant::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // URL-decoded path, without the query
  std::string query;   // text after '?', or empty
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of header `name` (case-insensitive), or empty.
  std::string Header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  static HttpResponse Text(int status, std::string body);
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;
  int threads = 4;
  size_t max_body_bytes = 1 << 20;
  // A connection that does not complete its request in this time is closed
  // (slow clients cannot hold the worker threads).
  int request_timeout_ms = 10000;
  // Writes the answers the server gives itself (404 for a path no route
  // claims, 413 for a body too large, 400 for a short body) from the status
  // and a one-line message; empty = plain text "message\n".
  std::function<HttpResponse(int status, const std::string& message)> error_response;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Requests whose path equals `prefix` or starts with `prefix` + "/" go to
  // `handler` (the longest matching prefix wins). Call before Start().
  void Route(std::string prefix, HttpHandler handler);

  absl::Status Start();
  // The bound port, or 0 before Start().
  int port() const { return port_; }

 private:
  static int Dispatch(mg_connection* connection, void* self);
  HttpResponse Handle(mg_connection* connection) const;
  HttpResponse Error(int status, const std::string& message) const;
  // Runs `handler` on a handler thread and waits for its response.
  HttpResponse RunOnHandlerThread(const HttpHandler& handler, const HttpRequest& request) const;
  void HandlerLoop();

  struct Call;
  mutable std::mutex mu_;
  mutable std::condition_variable work_ready_;
  mutable std::condition_variable work_done_;
  mutable std::deque<Call*> calls_;
  bool stopping_ = false;
  std::vector<std::thread> handler_threads_;

  HttpServerOptions options_;
  std::vector<std::pair<std::string, HttpHandler>> routes_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HTTP_SERVER_H_
