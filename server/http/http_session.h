// http_session.h: the insides of HttpServer (http_server.h), for its .cc files
// only: the shared state (HttpServerImpl) and one connection's state machine
// (HttpSession).
//
// Threading: everything of a session runs on the one network thread; a
// handler runs on a handler thread and hands its answer back with
// boost::asio::post. Counters shared with handler threads are atomics.
#ifndef INVARIANT_SERVER_HTTP_HTTP_SESSION_H_
#define INVARIANT_SERVER_HTTP_HTTP_SESSION_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/http/http_server.h"

namespace invariant::server {

// Connections past the cap that still get a 503 (beyond: closed unanswered).
inline constexpr int kRefusalSlack = 64;
inline constexpr size_t kMaxHeaderBytes = 16 * 1024;

class HttpServerImpl {
 public:
  HttpServerImpl(const HttpServerOptions& options, std::vector<HttpRoute> routes);
  ~HttpServerImpl();

  // The route claiming `path` (longest prefix), or null.
  const HttpRoute* Find(const std::string& path) const;
  HttpResponse Error(int status, const std::string& message) const;
  // Queues `job` for a handler thread; false (and nothing queued) once
  // stopping. Queued jobs still run before the handler threads end.
  bool Post(std::function<void()> job);
  void HandlerLoop();
  void Accept();

  const HttpServerOptions options;
  const std::vector<HttpRoute> routes;
  int max_connections = 0;
  std::atomic<int> connections{0};
  std::atomic<int> refusing{0};         // sessions answering 503 to a connection over the cap
  std::atomic<int> pending_answers{0};  // requests dispatched whose answer is not written yet
  std::atomic<int64_t> inflight_body_bytes{0};
  std::atomic<bool> stopping{false};

  std::unique_ptr<boost::asio::io_context> ioc;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor;
  std::thread network_thread;

  std::mutex jobs_mu;
  std::condition_variable jobs_ready;
  std::deque<std::function<void()>> jobs;
  bool jobs_stopping = false;
  std::vector<std::thread> handler_threads;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(HttpServerImpl* server, boost::asio::ip::tcp::socket socket);
  ~HttpSession();

  void Start();
  // Answers `status` and closes (a connection over the cap).
  void Refuse(int status, const std::string& message);

 private:
  void ReadNext();
  void ReadHeader();
  void OnHeader(boost::beast::error_code ec);
  // The checks after the headers; an answer refuses the request.
  std::optional<HttpResponse> Admit();
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  void Dispatch();
  void WatchDisconnect();
  void Respond(HttpResponse response);
  void Write(HttpResponse response, bool close);
  void SendError(int status, const std::string& message, bool close);
  // Half-closes, reads (and drops) what the client still sends for a short
  // bounded time so it can read the answer, then closes.
  void LingeringClose();
  void Drain();
  void ReleaseBody();
  // Arms the one deadline of the session: when it passes, the socket's
  // operations are cancelled and timed_out_ is set (the handlers then know
  // an abort was a timeout, and the socket stays open for a 408).
  void SetDeadline(int ms);
  void ClearDeadline();

  HttpServerImpl* const server_;
  boost::asio::ip::tcp::socket socket_;
  // Bounded: a chunk-size line or a trailer without its CRLF (never counted
  // as body) cannot grow it past the headers' limit and one read.
  boost::beast::flat_buffer buffer_{kMaxHeaderBytes + 64 * 1024};
  boost::asio::steady_timer deadline_;
  uint64_t deadline_generation_ = 0;
  bool timed_out_ = false;
  bool counted_ = true;          // in HttpServerImpl::connections
  bool refusing_ = false;        // in HttpServerImpl::refusing
  bool answer_pending_ = false;  // in HttpServerImpl::pending_answers
  // The cancellation of the request a handler holds (apart from request_,
  // which the handler owns meanwhile).
  std::shared_ptr<HttpCancellation> cancellation_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  HttpRequest request_;
  const HttpRoute* route_ = nullptr;
  bool keep_alive_ = true;
  bool head_only_ = false;      // a HEAD request: no body in the answer
  bool handling_ = false;       // a handler holds the request
  int64_t reserved_bytes_ = 0;  // of inflight_body_bytes
  std::string write_head_;
  HttpResponse write_;
  std::vector<char> drain_;
  size_t drained_ = 0;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HTTP_HTTP_SESSION_H_
