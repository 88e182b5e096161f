// http_session.h: the insides of HttpServer (http_server.h), for its .cc files
// only: the shared state (HttpServerImpl) and one connection's state machine
// (HttpSession).
//
// Threading: everything of a session runs on the one network thread; a
// handler runs on a handler thread and hands its answer back with
// boost::asio::post. Counters shared with handler threads are atomics.
// http_session.cc has the request's way from headers to answer,
// http_transfer.cc the byte-moving (body, answer, deadlines and rates).
#ifndef INVARIANT_SERVER_HTTP_HTTP_SESSION_H_
#define INVARIANT_SERVER_HTTP_HTTP_SESSION_H_

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/optional/optional.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/http/http_server.h"

namespace invariant::server {

// The header section (request line, fields, the empty line) at most.
inline constexpr size_t kMaxHeaderBytes = 16 * 1024;
// The largest body read (HttpServerOptions::body_read_bytes is capped here).
inline constexpr size_t kMaxBodyRead = 64 * 1024;

// Connections accepted in one turn of the network thread.
inline constexpr int kAcceptsPerTurn = 256;

using SteadyClock = std::chrono::steady_clock;

// What a parse error means for the client, as status and message.
std::pair<int, std::string> HttpParseError(const boost::beast::error_code& ec);

// A request body kept as it arrives: unlike Beast's string_body, a declared
// Content-Length reserves nothing up front (the string grows with the bytes,
// never past the declared length).
struct ArrivingBody {
  using value_type = std::string;
  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<uint64_t>& length, boost::beast::error_code& ec) {
      declared_ = length.value_or(0);
      ec = {};
    }
    template <class ConstBufferSequence>
    size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      const size_t extra = boost::beast::buffer_bytes(buffers);
      const size_t need = body_.size() + extra;
      if (need > body_.capacity()) {
        size_t grow = std::max(need, 2 * body_.capacity());
        if (declared_ >= need) grow = std::min<uint64_t>(grow, declared_);
        body_.reserve(grow);
      }
      for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
        body_.append(static_cast<const char*>(buffer.data()), buffer.size());
      }
      ec = {};
      return extra;
    }
    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
    uint64_t declared_ = 0;
  };
};

// A minimum transfer rate checked in steps: from `grace_ms` after Start on,
// every `step` bytes must move within `window_ms` of the previous step (or
// of the grace's end). Off when the rate is 0.
class RateClock {
 public:
  void Start(SteadyClock::time_point now, int grace_ms, int window_ms, int64_t bytes_per_second);
  void Stop() { deadline_ = SteadyClock::time_point::max(); }
  // `total` bytes have moved by `now`; true when the deadline moved.
  bool Progress(SteadyClock::time_point now, int64_t total);
  // When the rate is missed; time_point::max() when off.
  SteadyClock::time_point deadline() const { return deadline_; }

 private:
  SteadyClock::time_point grace_end_;
  SteadyClock::duration window_{};
  int64_t step_ = 0;
  int64_t mark_ = 0;
  SteadyClock::time_point deadline_ = SteadyClock::time_point::max();
};

class HttpSession;

class HttpServerImpl {
 public:
  HttpServerImpl(const HttpServerOptions& options, std::vector<HttpRoute> routes);
  ~HttpServerImpl();

  // The route claiming `path` (longest prefix), or null.
  const HttpRoute* Find(const std::string& path) const;
  HttpResponse Error(int status, const std::string& message) const;
  // Error() with "Retry-After: 1".
  HttpResponse Busy(const std::string& message) const;
  // Queues a request's handler job; false (and nothing queued) once the
  // handlers stop; queued jobs still run before they end. Jobs of
  // bodies of at most kSmallBodyBytes are taken first (a burst of large
  // bodies, each costing its parse, cannot keep a small call waiting behind
  // them), but after kSmallPicksPerLarge small ones in a row while large
  // ones wait, a large one goes, so large ones are never starved.
  bool Post(std::function<void()> job, size_t body_bytes);
  std::function<void()> NextJobLocked();  // jobs_mu held; a job waits
  void HandlerLoop();
  // Network thread: accepts what the listen queue holds (at most
  // kAcceptsPerTurn a turn) and re-arms.
  void Accept();
  // Network thread: a session for `socket`, under the cap (closing the
  // longest-idle keep-alive connection to make room) or in a probe slot.
  void Admit(boost::asio::ip::tcp::socket socket);
  // Network thread: gives `session` (past the cap) a probe slot, closing the
  // oldest reserved session when every slot is taken.
  void Reserve(const std::shared_ptr<HttpSession>& session);
  HttpServerStats Stats() const;

  const HttpServerOptions options;
  const std::vector<HttpRoute> routes;
  int max_connections = 0;
  std::atomic<int> connections{0};
  std::atomic<int> reserved{0};         // sessions in probe slots (past the cap)
  std::atomic<int> pending_answers{0};  // requests dispatched whose answer is not written yet
  std::atomic<int64_t> inflight_body_bytes{0};
  std::atomic<int64_t> answer_bytes{0};  // handler answers charged
  std::atomic<bool> stopping{false};
  // Deferred replies (HttpRequest::defer) post their answer to `ioc` under
  // this gate's lock, and only while it is open; the destructor closes it
  // before the network thread stops.
  struct ReplyGate {
    std::mutex mu;
    bool closed = false;
  };
  const std::shared_ptr<ReplyGate> reply_gate = std::make_shared<ReplyGate>();
  // HttpServerStats's counts, in its order.
  std::atomic<uint64_t> over_cap_answered{0}, over_cap_refused{0}, over_cap_dropped{0},
      body_budget_refused{0}, answer_budget_refused{0}, headers_too_large{0}, header_timeouts{0},
      body_timeouts{0}, body_rate_cuts{0}, write_timeouts{0}, write_rate_cuts{0}, clients_gone{0};

  std::unique_ptr<boost::asio::io_context> ioc;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor;
  std::thread network_thread;
  // Sessions given a probe slot, oldest first (network thread only; some
  // may have ended).
  std::deque<std::weak_ptr<HttpSession>> reserved_sessions;
  // Sessions under the cap waiting for a request's first byte, longest idle
  // first (network thread only; each session takes itself out).
  std::list<HttpSession*> idle_sessions;
  std::atomic<uint64_t> idle_closed_for_new{0};  // closed at the cap to admit a new connection

  std::mutex jobs_mu;
  std::condition_variable jobs_ready;
  static constexpr size_t kSmallBodyBytes = 64 * 1024;
  static constexpr int kSmallPicksPerLarge = 4;
  std::deque<std::function<void()>> small_jobs;  // bodies of at most kSmallBodyBytes
  std::deque<std::function<void()>> jobs;        // larger bodies
  int small_picks = 0;              // small jobs taken in a row while large ones waited
  std::atomic<int> queued_jobs{0};  // both queues (HttpServerStats::queued_requests)
  bool jobs_stopping = false;
  std::vector<std::thread> handler_threads;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(HttpServerImpl* server, boost::asio::ip::tcp::socket socket);
  ~HttpSession();

  void Start();
  // Past the cap: reads one request for an admit hook's answer, else 503.
  // Call after HttpServerImpl::Reserve.
  void StartReserved();
  // Ends a reserved session unanswered (its slot is given to a newer one);
  // false when it was not reserved (any more).
  bool Evict();
  // Closes an idle session (HttpServerImpl::idle_sessions) to make room
  // under the cap: its place is given up at once, the client sees a clean
  // close between requests (as after a keep-alive timeout).
  void CloseIdle();

 private:
  // Why the deadline passed.
  enum class Late { kNone, kTotal, kRate };

  // http_session.cc: a request's headers, admission, handler and answer.
  void ReadNext();
  void ReadHeader();
  // Reads until the header section's end is buffered (or 16 KiB are without it).
  void ScanHeader();
  void OnHeader(boost::beast::error_code ec);
  // The checks after the headers; an answer refuses the request.
  std::optional<HttpResponse> Admit();
  void Dispatch();
  // On a handler thread: the route's handler, then its answer posted to the
  // network thread (or, deferred, once both the reply and the return came).
  void RunHandler();
  // A deferred answer and its handler's return, whichever comes last,
  // posts the answer: an answer given before the handler returned (from
  // another thread, or from the handler itself) waits for it, since until
  // then the handler may still read the session's request. Thread-safe.
  struct DeferredHandover {
    void Give(std::function<void()> post);  // runs `post` now or at HandlerReturned
    void HandlerReturned();
    std::mutex mu;
    bool handler_returned = false;
    std::function<void()> early;  // an answer given before the handler returned
  };
  // The HttpReply of a deferred request: posts Respond to the network
  // thread once, while the server's reply gate is open, and not before the
  // handler returned (`handover`).
  HttpReply DeferredReply(const std::shared_ptr<DeferredHandover>& handover);
  void WatchDisconnect();
  void Respond(HttpResponse response);
  void SendError(int status, const std::string& message, bool close);
  // Grows this request's body charge to `bytes` (capped by body_cap_);
  // false, charging nothing, when that passes max_inflight_body_bytes.
  bool ChargeBody(int64_t bytes);
  void ReleaseBody();
  void ReleaseAnswer();
  void ReleaseReserved();
  // Enters or leaves HttpServerImpl::idle_sessions.
  void EnterIdle();
  void LeaveIdle();

  // http_transfer.cc: the body and the answer, byte by byte, under deadlines.
  void ReadBody();
  void StartBody();
  // Feeds the buffered bytes to the parser, then reads more (or dispatches).
  void ParseBody();
  void OnBodyRead(boost::beast::error_code ec, size_t n);
  void FailBody(boost::beast::error_code ec);
  void Write(HttpResponse response, bool close);
  void WriteSome();
  void OnWritten(boost::beast::error_code ec, size_t n);
  // Half-closes, reads (and drops) what the client still sends for a short
  // bounded time so it can read the answer, then closes.
  void LingeringClose();
  void Drain();
  // Closes with a reset (SO_LINGER 0): no answer bytes left in the kernel.
  void Abort();
  // The one deadline of the session: the phase's total (SetDeadline) or,
  // sooner, rate_'s. When it passes, the socket's operations are cancelled
  // and late_ says why (the socket stays open for a 408).
  void SetDeadline(int ms);
  void ArmDeadline();
  void ClearDeadline();

  HttpServerImpl* const server_;
  boost::asio::ip::tcp::socket socket_;
  std::string peer_;  // HttpRequest::peer of its requests
  // Bounded: the headers and one body read; a chunk-size line or a trailer
  // without its CRLF (never counted as body) cannot grow it past that.
  boost::beast::flat_buffer buffer_{kMaxHeaderBytes + kMaxBodyRead};
  size_t scanned_ = 0;  // of buffer_, searched for the headers' end
  SteadyClock::time_point last_read_;
  boost::asio::steady_timer deadline_;
  uint64_t deadline_generation_ = 0;
  SteadyClock::time_point phase_end_ = SteadyClock::time_point::max();
  SteadyClock::time_point armed_ = SteadyClock::time_point::max();
  RateClock rate_;
  Late late_ = Late::kNone;
  bool idle_ = false;  // in server_->idle_sessions at idle_at_
  std::list<HttpSession*>::iterator idle_at_;
  bool counted_ = true;          // in HttpServerImpl::connections
  bool reserved_ = false;        // in HttpServerImpl::reserved
  bool answer_pending_ = false;  // in HttpServerImpl::pending_answers
  // The cancellation of the request a handler holds (apart from request_,
  // which the handler owns meanwhile).
  std::shared_ptr<HttpCancellation> cancellation_;
  std::optional<boost::beast::http::request_parser<ArrivingBody>> parser_;
  HttpRequest request_;
  const HttpRoute* route_ = nullptr;
  bool keep_alive_ = true;
  bool head_only_ = false;      // a HEAD request: no body in the answer
  bool handling_ = false;       // a handler holds the request
  int64_t body_cap_ = 0;        // the most a body charge grows to
  int64_t body_charged_ = 0;    // of inflight_body_bytes
  int64_t body_moved_ = 0;      // bytes read in the body phase (for rate_)
  int64_t answer_charged_ = 0;  // of answer_bytes
  std::string write_head_;
  HttpResponse write_;
  size_t write_size_ = 0;  // head and the body bytes sent
  size_t written_ = 0;
  bool write_close_ = false;
  bool lingering_ = false;  // answered; draining before the close
  std::vector<char> drain_;
  size_t drained_ = 0;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HTTP_HTTP_SESSION_H_
