// evhttp_echo: a minimal HTTP/1.1 server on libevent 2.1's evhttp, one of the
// candidates measured by research/http_frontends/compare.sh (a benchmark, not a
// test, and not part of invariant-server).
//
// Routes: GET /v2/health/live -> 200 {"live":true}; POST /echo -> 200
// {"bytes":N} with N the request body's length; anything else 404 (405 for a
// known path with another method). Keep-alive is evhttp's default for
// HTTP/1.1. One event loop thread runs everything (handlers included).
//
// Usage: invariant-bench-evhttp-echo [port [timeout_s]]
//   port 0 (default) picks a free port; the bound port is printed on stdout
//   as "port N" (flushed) before serving. timeout_s (default 10) is passed to
//   evhttp_set_timeout: a per-read/per-write inactivity timeout, not a total
//   deadline. Listens on 127.0.0.1 only. Runs until killed.
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void Reply(evhttp_request* req, int code, const char* reason, const char* json) {
  evkeyvalq* out = evhttp_request_get_output_headers(req);
  evhttp_add_header(out, "Content-Type", "application/json");
  evbuffer* body = evbuffer_new();
  evbuffer_add(body, json, std::strlen(json));
  evhttp_send_reply(req, code, reason, body);
  evbuffer_free(body);
}

void Live(evhttp_request* req, void*) {
  if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
    Reply(req, 405, "Method Not Allowed", "{\"error\":\"method\"}");
    return;
  }
  Reply(req, 200, "OK", "{\"live\":true}");
}

void Echo(evhttp_request* req, void*) {
  if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
    Reply(req, 405, "Method Not Allowed", "{\"error\":\"method\"}");
    return;
  }
  char json[64];
  std::snprintf(json, sizeof(json), "{\"bytes\":%zu}",
                evbuffer_get_length(evhttp_request_get_input_buffer(req)));
  Reply(req, 200, "OK", json);
}

void NotFound(evhttp_request* req, void*) {
  Reply(req, 404, "Not Found", "{\"error\":\"not found\"}");
}

}  // namespace

int main(int argc, char** argv) {
  const int port = argc > 1 ? std::atoi(argv[1]) : 0;
  const int timeout_s = argc > 2 ? std::atoi(argv[2]) : 10;
  event_base* base = event_base_new();
  evhttp* http = evhttp_new(base);
  if (base == nullptr || http == nullptr) {
    std::fprintf(stderr, "evhttp_echo: cannot create the event base\n");
    return 1;
  }
  evhttp_set_timeout(http, timeout_s);
  evhttp_set_max_body_size(http, 1 << 20);
  evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
  evhttp_set_cb(http, "/v2/health/live", Live, nullptr);
  evhttp_set_cb(http, "/echo", Echo, nullptr);
  evhttp_set_gencb(http, NotFound, nullptr);
  evhttp_bound_socket* bound = evhttp_bind_socket_with_handle(http, "127.0.0.1", port);
  if (bound == nullptr) {
    std::fprintf(stderr, "evhttp_echo: cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(evhttp_bound_socket_get_fd(bound), reinterpret_cast<sockaddr*>(&addr), &len);
  std::printf("port %d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  event_base_dispatch(base);
  evhttp_free(http);
  event_base_free(base);
  return 0;
}
