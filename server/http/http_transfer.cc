// http_transfer.cc: the byte-moving half of HttpSession (http_session.h): a
// request body read and charged as it arrives, an answer written in the
// pieces the socket takes, each under its phase's deadline and minimum rate;
// the lingering close.
#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/http/http_session.h"

namespace invariant::server {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

constexpr int kLingerMs = 2000;
constexpr size_t kLingerBytes = 1 << 20;

}  // namespace

void RateClock::Start(SteadyClock::time_point now, int grace_ms, int window_ms,
                      int64_t bytes_per_second) {
  mark_ = 0;
  if (bytes_per_second <= 0 || window_ms <= 0) return Stop();
  grace_end_ = now + milliseconds(std::max(0, grace_ms));
  window_ = milliseconds(window_ms);
  step_ = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(bytes_per_second) * window_ms / 1000.0));
  deadline_ = grace_end_ + window_;
}

bool RateClock::Progress(SteadyClock::time_point now, int64_t total) {
  if (deadline_ == SteadyClock::time_point::max() || total < mark_ + step_) return false;
  mark_ = total;
  deadline_ = std::max(now, grace_end_) + window_;
  return true;
}

void HttpSession::SetDeadline(int ms) {
  phase_end_ = SteadyClock::now() + milliseconds(ms);
  rate_.Stop();
  ArmDeadline();
}

void HttpSession::ArmDeadline() {
  late_ = Late::kNone;
  const SteadyClock::time_point rate_end = rate_.deadline();
  const SteadyClock::time_point at = std::min(phase_end_, rate_end);
  if (at == armed_) return;
  armed_ = at;
  const uint64_t generation = ++deadline_generation_;
  if (at == SteadyClock::time_point::max()) {
    deadline_.cancel();
    return;
  }
  const Late why = rate_end < phase_end_ ? Late::kRate : Late::kTotal;
  deadline_.expires_at(at);
  // A weak reference: the timer alone does not keep a finished session (and
  // its socket) alive.
  deadline_.async_wait([weak = weak_from_this(), generation, why](boost::beast::error_code ec) {
    const std::shared_ptr<HttpSession> self = weak.lock();
    if (ec || self == nullptr || generation != self->deadline_generation_) return;
    self->armed_ = SteadyClock::time_point::max();
    self->late_ = why;
    boost::beast::error_code ignored;
    self->socket_.cancel(ignored);
  });
}

void HttpSession::ClearDeadline() {
  phase_end_ = SteadyClock::time_point::max();
  rate_.Stop();
  ArmDeadline();
}

void HttpSession::ReadBody() {
  parser_->body_limit(server_->options.max_body_bytes);
  // HTTP/1.0 clients do not know 100 (RFC 9110 section 10.1.1).
  if (parser_->get().version() < 11 ||
      !absl::EqualsIgnoreCase(request_.Header("Expect"), "100-continue")) {
    return StartBody();
  }
  static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
  SetDeadline(server_->options.write_timeout_ms);
  boost::asio::async_write(socket_, boost::asio::buffer(kContinue, sizeof(kContinue) - 1),
                           [self = shared_from_this()](boost::beast::error_code ec, size_t) {
                             if (!ec) self->StartBody();
                           });
}

void HttpSession::StartBody() {
  const HttpServerOptions& options = server_->options;
  SetDeadline(options.body_timeout_ms);
  body_moved_ = 0;
  rate_.Start(SteadyClock::now(), options.rate_grace_ms, options.rate_window_ms,
              options.min_body_bytes_per_second);
  ArmDeadline();
  ParseBody();
}

void HttpSession::ParseBody() {
  while (buffer_.size() > 0 && !parser_->is_done()) {
    boost::beast::error_code ec;
    const size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more) break;
    if (ec) return FailBody(ec);
    if (used == 0) break;
  }
  if (parser_->is_done()) return Dispatch();
  const size_t room = buffer_.max_size() - buffer_.size();
  if (room == 0) return FailBody(http::error::buffer_overflow);  // a line without its end
  const size_t read = std::min<size_t>(
      room, std::clamp<int64_t>(server_->options.body_read_bytes, 1, kMaxBodyRead));
  // Charged before it is read: what is held, and what this read may bring.
  if (!ChargeBody(static_cast<int64_t>(parser_->get().body().size() + buffer_.size() + read))) {
    ReleaseBody();
    server_->body_budget_refused.fetch_add(1);
    return Write(
        server_->Busy(absl::StrCat("server: more than ", server_->options.max_inflight_body_bytes,
                                   " bytes of request bodies in flight; try again later")),
        true);
  }
  socket_.async_read_some(buffer_.prepare(read),
                          [self = shared_from_this()](boost::beast::error_code ec, size_t n) {
                            self->OnBodyRead(ec, n);
                          });
}

void HttpSession::OnBodyRead(boost::beast::error_code ec, size_t n) {
  buffer_.commit(n);
  if (ec) return FailBody(ec);
  last_read_ = SteadyClock::now();
  body_moved_ += static_cast<int64_t>(n);
  if (rate_.Progress(last_read_, body_moved_)) ArmDeadline();
  ParseBody();
}

void HttpSession::FailBody(boost::beast::error_code ec) {
  ReleaseBody();  // no body will be handled
  const HttpServerOptions& options = server_->options;
  if (late_ == Late::kRate) {
    server_->body_rate_cuts.fetch_add(1);
    return SendError(
        408,
        absl::StrCat("request body: slower than ", options.min_body_bytes_per_second, " bytes/s"),
        true);
  }
  if (late_ == Late::kTotal) {
    server_->body_timeouts.fetch_add(1);
    return SendError(
        408, absl::StrCat("request body: not complete within ", options.body_timeout_ms, " ms"),
        true);
  }
  if (ec == http::error::partial_message || ec == http::error::end_of_stream ||
      ec == boost::asio::error::eof) {
    return SendError(400, "request body: shorter than Content-Length", true);
  }
  if (ec == boost::asio::error::connection_reset || ec == boost::asio::error::operation_aborted) {
    return;
  }
  auto [status, message] = HttpParseError(ec);
  if (status == 413) {
    message = absl::StrCat("request body: at most ", options.max_body_bytes, " bytes");
  }
  SendError(status, message, true);
}

void HttpSession::Write(HttpResponse response, bool close) {
  write_ = std::move(response);
  if (close) keep_alive_ = false;
  write_close_ = close;
  write_head_ = absl::StrCat(
      "HTTP/1.1 ", write_.status, " ", HttpReasonPhrase(write_.status),
      "\r\nContent-Type: ", write_.content_type, "\r\nContent-Length: ", write_.body.size(),
      close ? "\r\nConnection: close\r\n" : "\r\nConnection: keep-alive\r\n");
  for (const auto& [name, value] : write_.headers) {
    absl::StrAppend(&write_head_, name, ": ", value, "\r\n");
  }
  write_head_ += "\r\n";
  if (head_only_) {  // the length is told, the body is not sent: free it now
    write_.body = std::string();
    ReleaseAnswer();
  }
  write_size_ = write_head_.size() + write_.body.size();
  written_ = 0;
  const HttpServerOptions& options = server_->options;
  SetDeadline(options.write_timeout_ms);
  rate_.Start(SteadyClock::now(), options.rate_grace_ms, options.rate_window_ms,
              options.min_write_bytes_per_second);
  ArmDeadline();
  WriteSome();
}

void HttpSession::WriteSome() {
  const size_t head = std::min(written_, write_head_.size());
  const size_t body = written_ - head;
  const std::array<boost::asio::const_buffer, 2> buffers{
      boost::asio::buffer(write_head_.data() + head, write_head_.size() - head),
      boost::asio::buffer(write_.body.data() + body, write_.body.size() - body)};
  socket_.async_write_some(buffers,
                           [self = shared_from_this()](boost::beast::error_code ec, size_t n) {
                             self->OnWritten(ec, n);
                           });
}

void HttpSession::OnWritten(boost::beast::error_code ec, size_t n) {
  written_ += n;
  if (!ec && written_ < write_size_) {
    if (rate_.Progress(SteadyClock::now(), static_cast<int64_t>(written_))) ArmDeadline();
    return WriteSome();
  }
  write_ = HttpResponse();
  write_head_.clear();
  ReleaseAnswer();
  if (answer_pending_) {
    answer_pending_ = false;
    server_->pending_answers.fetch_sub(1);
  }
  if (ec) {
    if (late_ == Late::kRate) server_->write_rate_cuts.fetch_add(1);
    if (late_ == Late::kTotal) server_->write_timeouts.fetch_add(1);
    if (late_ != Late::kNone) Abort();
    return;
  }
  if (write_close_ || server_->stopping.load()) return LingeringClose();
  ReadNext();
}

void HttpSession::LingeringClose() {
  lingering_ = true;
  boost::beast::error_code ignored;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  drain_.resize(16384);
  drained_ = 0;
  SetDeadline(kLingerMs);
  Drain();
}

void HttpSession::Drain() {
  socket_.async_read_some(boost::asio::buffer(drain_),
                          [self = shared_from_this()](boost::beast::error_code ec, size_t n) {
                            self->drained_ += n;
                            if (ec || self->drained_ >= kLingerBytes) {
                              boost::beast::error_code ignored;
                              self->ClearDeadline();
                              self->socket_.close(ignored);
                              return;
                            }
                            self->Drain();
                          });
}

void HttpSession::Abort() {
  boost::beast::error_code ignored;
  ClearDeadline();
  socket_.set_option(boost::asio::socket_base::linger(true, 0), ignored);
  socket_.close(ignored);
}

}  // namespace invariant::server
