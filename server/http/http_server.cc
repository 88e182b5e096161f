#include "server/http/http_server.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/thread_priority.h"
#include "server/http/http_session.h"

namespace invariant::server {
namespace {

std::string ListeningAddress(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return ipv6 ? absl::StrCat("[", host, "]:", port) : absl::StrCat(host, ":", port);
}

bool PathHasPrefix(const std::string& path, const std::string& prefix, bool exact) {
  if (exact) return path == prefix;
  if (prefix == "/") return true;
  if (!absl::StartsWith(path, prefix)) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

// Raises the soft limit of open files to the hard limit; returns the soft limit.
int64_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? int64_t{1} << 20 : static_cast<int64_t>(limit.rlim_cur);
}

}  // namespace

void HttpCancellation::OnCancel(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cancelled_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

void HttpCancellation::Cancel() {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    cancelled_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  for (auto& callback : callbacks) callback();
}

std::string HttpRequest::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

bool HttpRequest::HasHeader(const std::string& name) const {
  for (const auto& header : headers) {
    if (absl::EqualsIgnoreCase(header.first, name)) return true;
  }
  return false;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

const char* HttpReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
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
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
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
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

HttpServerImpl::HttpServerImpl(const HttpServerOptions& options, std::vector<HttpRoute> routes)
    : options(options),
      routes(std::move(routes)),
      ioc(std::make_unique<boost::asio::io_context>(1)) {}

HttpServerImpl::~HttpServerImpl() {
  // New requests get 503 and close from here on (HttpSession::Dispatch).
  stopping.store(true);
  if (acceptor != nullptr) {
    boost::asio::post(*ioc, [this] {
      boost::system::error_code ignored;
      acceptor->close(ignored);
    });
  }
  // The handlers finish what they hold and what is queued, while the network
  // thread still runs to write their answers...
  {
    std::lock_guard<std::mutex> lock(jobs_mu);
    jobs_stopping = true;
  }
  jobs_ready.notify_all();
  for (std::thread& thread : handler_threads) thread.join();
  // ...and those answers go out (bounded: a client that does not read its
  // answer is not waited for beyond this).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (pending_answers.load() > 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  {
    std::lock_guard<std::mutex> lock(reply_gate->mu);
    reply_gate->closed = true;  // a deferred answer from now on is dropped
  }
  ioc->stop();
  if (network_thread.joinable()) network_thread.join();
  acceptor.reset();
  ioc.reset();  // destroys pending handlers: the last sessions and their sockets
}

const HttpRoute* HttpServerImpl::Find(const std::string& path) const {
  const HttpRoute* best = nullptr;
  for (const HttpRoute& route : routes) {
    if (PathHasPrefix(path, route.prefix, route.exact) &&
        (best == nullptr || route.prefix.size() > best->prefix.size())) {
      best = &route;
    }
  }
  return best;
}

HttpResponse HttpServerImpl::Error(int status, const std::string& message) const {
  if (options.error_response) return options.error_response(status, message);
  return HttpResponse::Text(status, message + "\n");
}

HttpResponse HttpServerImpl::Busy(const std::string& message) const {
  HttpResponse busy = Error(503, message);
  busy.headers.emplace_back("Retry-After", "1");
  return busy;
}

void HttpServerImpl::Reserve(const std::shared_ptr<HttpSession>& session) {
  while (reserved.load() >= options.probe_slots && !reserved_sessions.empty()) {
    const std::shared_ptr<HttpSession> oldest = reserved_sessions.front().lock();
    reserved_sessions.pop_front();
    if (oldest != nullptr && oldest->Evict()) over_cap_dropped.fetch_add(1);
  }
  if (reserved_sessions.size() >= 2 * static_cast<size_t>(options.probe_slots)) {
    reserved_sessions.erase(
        std::remove_if(reserved_sessions.begin(), reserved_sessions.end(),
                       [](const std::weak_ptr<HttpSession>& s) { return s.expired(); }),
        reserved_sessions.end());
  }
  reserved_sessions.push_back(session);
}

HttpServerStats HttpServerImpl::Stats() const {
  HttpServerStats stats;
  stats.open_connections = connections.load();
  stats.reserved_connections = reserved.load();
  stats.body_bytes_held = inflight_body_bytes.load();
  stats.answer_bytes_held = answer_bytes.load();
  stats.queued_requests = queued_jobs.load();
  stats.over_cap_answered = over_cap_answered.load();
  stats.over_cap_refused = over_cap_refused.load();
  stats.over_cap_dropped = over_cap_dropped.load();
  stats.body_budget_refused = body_budget_refused.load();
  stats.answer_budget_refused = answer_budget_refused.load();
  stats.headers_too_large = headers_too_large.load();
  stats.header_timeouts = header_timeouts.load();
  stats.body_timeouts = body_timeouts.load();
  stats.body_rate_cuts = body_rate_cuts.load();
  stats.write_timeouts = write_timeouts.load();
  stats.write_rate_cuts = write_rate_cuts.load();
  stats.clients_gone = clients_gone.load();
  stats.idle_closed_for_new = idle_closed_for_new.load();
  return stats;
}

bool HttpServerImpl::Post(std::function<void()> job, size_t body_bytes) {
  {
    std::lock_guard<std::mutex> lock(jobs_mu);
    if (jobs_stopping) return false;
    (body_bytes <= kSmallBodyBytes ? small_jobs : jobs).push_back(std::move(job));
    queued_jobs.fetch_add(1);
  }
  jobs_ready.notify_one();
  return true;
}

std::function<void()> HttpServerImpl::NextJobLocked() {
  std::deque<std::function<void()>>* from = &small_jobs;
  if (small_jobs.empty() || (!jobs.empty() && small_picks >= kSmallPicksPerLarge)) {
    from = &jobs;
    small_picks = 0;
  } else if (!jobs.empty()) {
    ++small_picks;
  }
  std::function<void()> job = std::move(from->front());
  from->pop_front();
  queued_jobs.fetch_sub(1);
  return job;
}

void HttpServerImpl::HandlerLoop() {
  std::unique_lock<std::mutex> lock(jobs_mu);
  while (true) {
    jobs_ready.wait(lock, [this] { return jobs_stopping || !jobs.empty() || !small_jobs.empty(); });
    // Stopping, and every queued request answered.
    if (jobs.empty() && small_jobs.empty()) return;
    std::function<void()> job = NextJobLocked();
    lock.unlock();
    job();
    job = nullptr;  // release what the job holds outside the lock
    lock.lock();
  }
}

void HttpServerImpl::Accept() {
  acceptor->async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket socket) {
    if (stopping.load()) return;
    if (ec) {
      // EMFILE and friends: try again shortly instead of spinning.
      auto timer = std::make_shared<boost::asio::steady_timer>(*ioc, std::chrono::milliseconds(50));
      timer->async_wait([this, timer](boost::system::error_code) {
        if (!stopping.load()) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    // The rest of the listen queue in this turn: one accept a turn would put
    // a newcomer behind one turn of every session per connection queued before
    // it (a burst of 200 connections that send their bodies at once held a
    // new one 110-220 ms before its first byte was read).
    for (int i = 1; i < kAcceptsPerTurn && !stopping.load(); ++i) {
      boost::asio::ip::tcp::socket next(*ioc);
      acceptor->accept(next, ec);  // non-blocking: would_block when the queue is empty
      if (ec) break;               // an error here is met again by async_accept
      Admit(std::move(next));
    }
    Accept();
  });
}

void HttpServerImpl::Admit(boost::asio::ip::tcp::socket socket) {
  if (connections.load() >= max_connections && !idle_sessions.empty()) {
    // At the cap, the connection idle the longest makes room: a client
    // that has a request to send is served before one that has none.
    idle_sessions.front()->CloseIdle();
    idle_closed_for_new.fetch_add(1);
  }
  boost::system::error_code ignored;
  if (connections.load() < max_connections) {
    // Answers go out whole; no reason to wait for an ACK first.
    socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
    std::make_shared<HttpSession>(this, std::move(socket))->Start();
  } else if (options.probe_slots <= 0) {
    socket.close(ignored);
    over_cap_dropped.fetch_add(1);
  } else {  // past the cap: a probe slot, read for an admit hook's answer
    socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
    auto session = std::make_shared<HttpSession>(this, std::move(socket));
    Reserve(session);
    session->StartReserved();
  }
}

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)) {}

HttpServer::~HttpServer() { impl_.reset(); }

void HttpServer::Route(std::string prefix, HttpHandler handler, HttpAdmit admit, bool exact) {
  pending_routes_.push_back(
      HttpRoute{std::move(prefix), exact, std::move(handler), std::move(admit)});
}

int HttpServer::open_connections() const {
  return impl_ != nullptr ? impl_->connections.load() : 0;
}

HttpServerStats HttpServer::stats() const {
  return impl_ != nullptr ? impl_->Stats() : HttpServerStats{};
}

absl::Status HttpServer::Start() {
  const std::string address = ListeningAddress(options_.host, options_.port);
  auto impl = std::make_unique<HttpServerImpl>(options_, std::move(pending_routes_));
  const int64_t file_limit = RaiseFileLimit();
  impl->max_connections = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(options_.max_connections,
                           file_limit - 256 - std::max(0, options_.probe_slots))));
  boost::system::error_code ec;
  const boost::asio::ip::address ip = boost::asio::ip::make_address(options_.host, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("http: cannot listen on '", address, "': not an IP address"));
  }
  const boost::asio::ip::tcp::endpoint endpoint(ip, static_cast<uint16_t>(options_.port));
  auto acceptor = std::make_unique<boost::asio::ip::tcp::acceptor>(*impl->ioc);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(boost::asio::socket_base::max_listen_connections, ec);
  if (!ec) acceptor->non_blocking(true, ec);  // Accept drains the queue without waiting
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("http: cannot listen on '", address, "': ", ec.message()));
  }
  port_ = acceptor->local_endpoint().port();
  impl->acceptor = std::move(acceptor);
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    impl->handler_threads.emplace_back([raw = impl.get()] {
      // Below the network thread (nice +5): it reads requests and answers
      // health in admit hooks, and must not wait behind busy handlers.
      LowerThisThreadsPriority(kHandlerNice);
      raw->HandlerLoop();
    });
  }
  impl->Accept();
  impl->network_thread = std::thread([raw = impl.get()] { raw->ioc->run(); });
  impl_ = std::move(impl);
  return absl::OkStatus();
}

}  // namespace invariant::server
