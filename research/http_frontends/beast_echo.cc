// beast_echo: the same two routes as evhttp_echo.cc on the project's own
// event-driven HTTP/1.1 server (invariant::server::HttpServer, Boost.Beast /
// Asio, server/http/http_server.h), for research/http_frontends/compare.sh (a
// benchmark, not a test).
//
// Routes: GET /v2/health/live -> 200 {"live":true}; POST /echo -> 200
// {"bytes":N} with N the request body's length; other methods 405, other
// paths 404 (the server's own answer). One network thread plus `threads`
// handler threads (default 2), keep-alive and the server's total deadlines.
//
// Usage: invariant-bench-beast-echo [port [threads [header_timeout_ms
//        [body_timeout_ms]]]]
//   port 0 (default) picks a free port, printed on stdout as "port N"
//   (flushed). The timeouts default to HttpServerOptions' (10 s / 30 s).
//   Listens on 127.0.0.1 only. Runs until killed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/http/http_server.h"

using invariant::server::HttpRequest;
using invariant::server::HttpResponse;
using invariant::server::HttpServer;
using invariant::server::HttpServerOptions;

namespace {

HttpResponse Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = argc > 1 ? std::atoi(argv[1]) : 0;
  options.threads = argc > 2 ? std::atoi(argv[2]) : 2;
  if (argc > 3) options.header_timeout_ms = std::atoi(argv[3]);
  if (argc > 4) options.body_timeout_ms = std::atoi(argv[4]);
  HttpServer server(options);
  server.Route(
      "/v2/health/live",
      [](const HttpRequest& req) {
        if (req.method != "GET") return Json(405, "{\"error\":\"method\"}");
        return Json(200, "{\"live\":true}");
      },
      nullptr, /*exact=*/true);
  server.Route(
      "/echo",
      [](const HttpRequest& req) {
        if (req.method != "POST") return Json(405, "{\"error\":\"method\"}");
        return Json(200, "{\"bytes\":" + std::to_string(req.body.size()) + "}");
      },
      nullptr, /*exact=*/true);
  if (absl::Status s = server.Start(); !s.ok()) {
    std::fprintf(stderr, "beast_echo: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("port %d\n", server.port());
  std::fflush(stdout);
  for (;;) pause();
}
