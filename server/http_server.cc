#include "server/http_server.h"

#include <civetweb.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

std::string ListeningAddress(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return ipv6 ? absl::StrCat("[", host, "]:", port) : absl::StrCat(host, ":", port);
}

bool PathHasPrefix(const std::string& path, const std::string& prefix) {
  if (prefix == "/") return true;
  if (!absl::StartsWith(path, prefix)) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

}  // namespace

std::string HttpRequest::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)) {}

struct HttpServer::Call {
  const HttpHandler* handler;
  const HttpRequest* request;
  HttpResponse response;
  bool done = false;
};

HttpServer::~HttpServer() {
  // Civetweb's workers wait for their calls; the handler threads end after.
  if (context_ != nullptr) mg_stop(context_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : handler_threads_) thread.join();
}

void HttpServer::HandlerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_ready_.wait(lock, [this] { return stopping_ || !calls_.empty(); });
    if (calls_.empty()) return;  // stopping, nothing left
    Call* call = calls_.front();
    calls_.pop_front();
    lock.unlock();
    HttpResponse response = (*call->handler)(*call->request);
    lock.lock();
    call->response = std::move(response);
    call->done = true;
    work_done_.notify_all();
  }
}

HttpResponse HttpServer::RunOnHandlerThread(const HttpHandler& handler,
                                            const HttpRequest& request) const {
  Call call{&handler, &request, {}, false};
  std::unique_lock<std::mutex> lock(mu_);
  calls_.push_back(&call);
  work_ready_.notify_one();
  work_done_.wait(lock, [&call] { return call.done; });
  return std::move(call.response);
}

void HttpServer::Route(std::string prefix, HttpHandler handler) {
  routes_.emplace_back(std::move(prefix), std::move(handler));
}

absl::Status HttpServer::Start() {
  static std::once_flag init_once;
  std::call_once(init_once, [] { mg_init_library(0); });

  const std::string address = ListeningAddress(options_.host, options_.port);
  const std::string threads = std::to_string(std::max(1, options_.threads));
  const std::string timeout = std::to_string(std::max(1, options_.request_timeout_ms));
  const char* config[] = {"listening_ports",
                          address.c_str(),
                          "num_threads",
                          threads.c_str(),
                          "request_timeout_ms",
                          timeout.c_str(),
                          "enable_keep_alive",
                          "no",
                          "enable_directory_listing",
                          "no",
                          nullptr};
  mg_callbacks callbacks{};
  mg_init_data init{};
  init.callbacks = &callbacks;
  init.user_data = this;
  init.configuration_options = config;
  char error_text[256] = {0};
  unsigned error_code = 0;
  mg_error_data error{};
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);
  context_ = mg_start2(&init, &error);
  if (context_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("http: cannot listen on '", address, "': ", error_text));
  }
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    handler_threads_.emplace_back([this] { HandlerLoop(); });
  }
  mg_set_request_handler(context_, "/", &HttpServer::Dispatch, this);
  mg_server_port ports[1];
  port_ = mg_get_server_ports(context_, 1, ports) >= 1 ? ports[0].port : 0;
  return absl::OkStatus();
}

int HttpServer::Dispatch(mg_connection* connection, void* self) {
  const HttpResponse response = static_cast<const HttpServer*>(self)->Handle(connection);
  std::string head =
      absl::StrCat("HTTP/1.1 ", response.status, " ", ReasonPhrase(response.status),
                   "\r\nContent-Type: ", response.content_type,
                   "\r\nContent-Length: ", response.body.size(), "\r\nConnection: close\r\n");
  for (const auto& [name, value] : response.headers)
    absl::StrAppend(&head, name, ": ", value, "\r\n");
  head += "\r\n";
  mg_write(connection, head.data(), head.size());
  const mg_request_info* info = mg_get_request_info(connection);
  if (info->request_method == nullptr || std::string(info->request_method) != "HEAD") {
    mg_write(connection, response.body.data(), response.body.size());
  }
  return response.status;
}

HttpResponse HttpServer::Error(int status, const std::string& message) const {
  if (options_.error_response) return options_.error_response(status, message);
  return HttpResponse::Text(status, message + "\n");
}

HttpResponse HttpServer::Handle(mg_connection* connection) const {
  const mg_request_info* info = mg_get_request_info(connection);
  HttpRequest request;
  request.method = info->request_method != nullptr ? info->request_method : "";
  request.path = info->local_uri != nullptr ? info->local_uri : "/";
  request.query = info->query_string != nullptr ? info->query_string : "";
  for (int i = 0; i < info->num_headers; ++i) {
    request.headers.emplace_back(info->http_headers[i].name, info->http_headers[i].value);
  }

  const HttpHandler* handler = nullptr;
  size_t best = 0;
  for (const auto& [prefix, candidate] : routes_) {
    if (PathHasPrefix(request.path, prefix) && (handler == nullptr || prefix.size() > best)) {
      handler = &candidate;
      best = prefix.size();
    }
  }
  if (handler == nullptr) return Error(404, "not found");

  if (info->content_length > 0) {
    if (static_cast<unsigned long long>(info->content_length) > options_.max_body_bytes) {
      return Error(413, absl::StrCat("request body: at most ", options_.max_body_bytes, " bytes"));
    }
    request.body.resize(static_cast<size_t>(info->content_length));
    size_t got = 0;
    while (got < request.body.size()) {
      const int n = mg_read(connection, request.body.data() + got, request.body.size() - got);
      if (n <= 0) return Error(400, "request body: shorter than Content-Length");
      got += static_cast<size_t>(n);
    }
  } else if (info->content_length < 0 &&
             absl::EqualsIgnoreCase(request.Header("Transfer-Encoding"), "chunked")) {
    // On the heap: civetweb's worker threads have small stacks (Debian builds
    // them with USE_STACK_SIZE), which is also why civetweb's own error
    // pages, with their large stack buffers, can overflow them.
    std::vector<char> buffer(16384);
    while (true) {
      const int n = mg_read(connection, buffer.data(), buffer.size());
      if (n <= 0) break;
      if (request.body.size() + static_cast<size_t>(n) > options_.max_body_bytes) {
        return Error(413,
                     absl::StrCat("request body: at most ", options_.max_body_bytes, " bytes"));
      }
      request.body.append(buffer.data(), static_cast<size_t>(n));
    }
  }
  return RunOnHandlerThread(*handler, request);
}

}  // namespace invariant::server
