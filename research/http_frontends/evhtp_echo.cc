// evhtp_echo: a minimal HTTP/1.1 server on libevhtp 1.2.18 (Debian 12's
// libevhtp-dev, Triton's choice), one of the candidates measured by
// research/http_frontends/compare.sh (a benchmark, not a test).
//
// Routes: GET /v2/health/live -> 200 {"live":true}; POST /echo -> 200
// {"bytes":N} with N the request body's length; anything else 404 (405 for a
// known path with another method). Keep-alive is libevhtp's default for
// HTTP/1.1. One event loop thread runs everything (no evhtp_use_threads), as
// in evhttp_echo.cc.
//
// Usage: invariant-bench-evhtp-echo [port [timeout_s]]
//   port 0 (default) picks a free port, printed on stdout as "port N"
//   (flushed). timeout_s (default 10) goes to evhtp_set_timeouts (read and
//   write): per-read/per-write inactivity timeouts, not total deadlines.
//   Listens on 127.0.0.1 only. Runs until killed.
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <evhtp/evhtp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void Reply(evhtp_request_t* req, evhtp_res code, const char* json) {
  evhtp_headers_add_header(req->headers_out,
                           evhtp_header_new("Content-Type", "application/json", 0, 0));
  evbuffer_add(req->buffer_out, json, std::strlen(json));
  evhtp_send_reply(req, code);
}

void Live(evhtp_request_t* req, void*) {
  if (evhtp_request_get_method(req) != htp_method_GET) {
    Reply(req, EVHTP_RES_METHNALLOWED, "{\"error\":\"method\"}");
    return;
  }
  Reply(req, EVHTP_RES_OK, "{\"live\":true}");
}

void Echo(evhtp_request_t* req, void*) {
  if (evhtp_request_get_method(req) != htp_method_POST) {
    Reply(req, EVHTP_RES_METHNALLOWED, "{\"error\":\"method\"}");
    return;
  }
  char json[64];
  std::snprintf(json, sizeof(json), "{\"bytes\":%zu}", evbuffer_get_length(req->buffer_in));
  Reply(req, EVHTP_RES_OK, json);
}

void NotFound(evhtp_request_t* req, void*) {
  Reply(req, EVHTP_RES_NOTFOUND, "{\"error\":\"not found\"}");
}

}  // namespace

int main(int argc, char** argv) {
  const int port = argc > 1 ? std::atoi(argv[1]) : 0;
  const int timeout_s = argc > 2 ? std::atoi(argv[2]) : 10;
  event_base* base = event_base_new();
  evhtp_t* htp = evhtp_new(base, nullptr);
  if (base == nullptr || htp == nullptr) {
    std::fprintf(stderr, "evhtp_echo: cannot create the event base\n");
    return 1;
  }
  const timeval tv{timeout_s, 0};
  evhtp_set_timeouts(htp, &tv, &tv);
  evhtp_set_max_body_size(htp, 1 << 20);
  evhtp_set_cb(htp, "/v2/health/live", Live, nullptr);
  evhtp_set_cb(htp, "/echo", Echo, nullptr);
  evhtp_set_gencb(htp, NotFound, nullptr);
  if (evhtp_bind_socket(htp, "ipv4:127.0.0.1", static_cast<uint16_t>(port), 1024) != 0) {
    std::fprintf(stderr, "evhtp_echo: cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(evconnlistener_get_fd(htp->server), reinterpret_cast<sockaddr*>(&addr), &len);
  std::printf("port %d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  event_base_loop(base, 0);
  evhtp_unbind_socket(htp);
  evhtp_free(htp);
  event_base_free(base);
  return 0;
}
