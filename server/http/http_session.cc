#include "server/http/http_session.h"

#include <sys/socket.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <cerrno>
#include <chrono>
#include <exception>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

namespace http = boost::beast::http;
using std::chrono::milliseconds;

constexpr int kLingerMs = 2000;
constexpr size_t kLingerBytes = 1 << 20;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %-decodes `raw` into `path`; false on a bad escape or a control byte
// (NUL included), raw or decoded.
bool DecodePath(absl::string_view raw, std::string* path) {
  path->clear();
  path->reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    if (c == '%') {
      if (i + 2 >= raw.size()) return false;
      const int hi = HexDigit(raw[i + 1]), lo = HexDigit(raw[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<unsigned char>(hi * 16 + lo);
      i += 2;
    }
    if (c < 0x20 || c == 0x7f) return false;
    path->push_back(static_cast<char>(c));
  }
  return true;
}

// The framing problems Beast's parser lets through, as a message; nullopt
// when the request is framed as RFC 9112 asks. Transfer-Encoding must be
// exactly one "chunked" and not on HTTP/1.0 (section 6.1: anything else
// leaves the body's end unknown, so a smuggled request could follow);
// HTTP/1.1 needs exactly one Host (section 3.2).
std::optional<std::string> FramingError(const HttpRequest& request, unsigned version) {
  int transfer_encodings = 0, hosts = 0;
  bool chunked_only = true;
  for (const auto& [name, value] : request.headers) {
    if (absl::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      ++transfer_encodings;
      chunked_only =
          chunked_only && absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(value), "chunked");
    } else if (absl::EqualsIgnoreCase(name, "Host")) {
      ++hosts;
    }
  }
  if (transfer_encodings > 0 && (version < 11 || transfer_encodings > 1 || !chunked_only)) {
    return std::string(
        "Transfer-Encoding: only one \"chunked\", on HTTP/1.1 (RFC 9112 section 6.1)");
  }
  if (version >= 11 && hosts != 1) {
    return absl::StrCat("Host: expected exactly one, received ", hosts, " (RFC 9112 section 3.2)");
  }
  return std::nullopt;
}

// What a parse error means for the client, as status and message.
std::pair<int, std::string> ParseError(const boost::beast::error_code& ec) {
  if (ec == http::error::header_limit) {
    return {431, absl::StrCat("request headers: at most ", kMaxHeaderBytes, " bytes")};
  }
  if (ec == http::error::body_limit) return {413, "request body: too large"};
  if (ec == http::error::buffer_overflow) {
    return {400, "request: a line (a chunk size or a trailer) too long"};
  }
  if (ec == http::error::bad_content_length) {
    return {400, "request: bad or conflicting Content-Length (RFC 9112 section 6.3)"};
  }
  if (ec == http::error::bad_transfer_encoding) {
    return {400,
            "request: bad Transfer-Encoding, or Transfer-Encoding with Content-Length "
            "(RFC 9112 section 6.3)"};
  }
  if (ec == http::error::bad_version) return {505, "request: expected HTTP/1.0 or HTTP/1.1"};
  if (ec == http::error::bad_chunk || ec == http::error::bad_chunk_extension) {
    return {400, "request body: bad chunked encoding"};
  }
  return {400, absl::StrCat("request: not HTTP/1.1 (", ec.message(), ")")};
}

}  // namespace

HttpSession::HttpSession(HttpServerImpl* server, boost::asio::ip::tcp::socket socket)
    : server_(server), socket_(std::move(socket)), deadline_(socket_.get_executor()) {
  server_->connections.fetch_add(1);
}

HttpSession::~HttpSession() {
  ReleaseBody();
  if (counted_) server_->connections.fetch_sub(1);
  if (refusing_) server_->refusing.fetch_sub(1);
  if (answer_pending_) server_->pending_answers.fetch_sub(1);
}

void HttpSession::ReleaseBody() {
  if (reserved_bytes_ > 0) server_->inflight_body_bytes.fetch_sub(reserved_bytes_);
  reserved_bytes_ = 0;
}

void HttpSession::SetDeadline(int ms) {
  timed_out_ = false;
  const uint64_t generation = ++deadline_generation_;
  deadline_.expires_after(milliseconds(ms));
  // A weak reference: the timer alone does not keep a finished session (and
  // its socket) alive.
  deadline_.async_wait([weak = weak_from_this(), generation](boost::beast::error_code ec) {
    const std::shared_ptr<HttpSession> self = weak.lock();
    if (ec || self == nullptr || generation != self->deadline_generation_) return;
    self->timed_out_ = true;
    boost::beast::error_code ignored;
    self->socket_.cancel(ignored);
  });
}

void HttpSession::ClearDeadline() {
  ++deadline_generation_;
  deadline_.cancel();
  timed_out_ = false;
}

void HttpSession::Start() { ReadNext(); }

void HttpSession::Refuse(int status, const std::string& message) {
  // A refused connection does not hold a place under the cap while it drains,
  // but is counted apart, so refusals too are bounded.
  if (counted_) server_->connections.fetch_sub(1);
  counted_ = false;
  refusing_ = true;
  server_->refusing.fetch_add(1);
  head_only_ = false;
  SendError(status, message, /*close=*/true);
}

void HttpSession::ReadNext() {
  parser_.emplace();
  parser_->header_limit(kMaxHeaderBytes);
  // Checked in Admit, then set for the body. (Not boost::none: Beast 1.74
  // compares a Content-Length with an empty limit as if it were over it.)
  parser_->body_limit(std::numeric_limits<uint64_t>::max());
  request_ = HttpRequest();
  route_ = nullptr;
  head_only_ = false;
  if (buffer_.size() > 0) return ReadHeader();  // a pipelined request
  // Idle: wait for the first byte under the idle deadline.
  SetDeadline(server_->options.idle_timeout_ms);
  socket_.async_read_some(buffer_.prepare(4096),
                          [self = shared_from_this()](boost::beast::error_code ec, size_t n) {
                            if (ec) return;  // closed, reset or idle too long: just close
                            self->buffer_.commit(n);
                            self->ReadHeader();
                          });
}

void HttpSession::ReadHeader() {
  SetDeadline(server_->options.header_timeout_ms);
  http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](boost::beast::error_code ec, size_t) { self->OnHeader(ec); });
}

void HttpSession::OnHeader(boost::beast::error_code ec) {
  if (ec && timed_out_) {
    return SendError(408,
                     absl::StrCat("request headers: not complete within ",
                                  server_->options.header_timeout_ms, " ms"),
                     true);
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == boost::asio::error::connection_reset || ec == boost::asio::error::eof ||
      ec == boost::asio::error::operation_aborted) {
    return;  // the client went away
  }
  if (ec) {
    auto [status, message] = ParseError(ec);
    return SendError(status, message, true);
  }
  const auto& header = parser_->get();
  keep_alive_ = parser_->keep_alive();
  request_.method = std::string(header.method_string());
  head_only_ = request_.method == "HEAD";
  for (const auto& field : header) {
    request_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  const absl::string_view target(header.target().data(), header.target().size());
  const size_t question = target.find('?');
  if (question != absl::string_view::npos)
    request_.query = std::string(target.substr(question + 1));
  if (!DecodePath(target.substr(0, question), &request_.path)) {
    return SendError(400, "path: a bad %-escape or a control byte", true);
  }
  if (std::optional<std::string> bad = FramingError(request_, header.version())) {
    return SendError(400, *bad, true);  // the next request cannot be found
  }
  if (std::optional<HttpResponse> refusal = Admit()) {
    // Nothing of a body is read: the connection cannot carry another request.
    const bool body_pending = !parser_->is_done();
    return Write(std::move(*refusal), body_pending || !keep_alive_);
  }
  if (parser_->is_done()) return Dispatch();
  ReadBody();
}

std::optional<HttpResponse> HttpSession::Admit() {
  const HttpServerOptions& options = server_->options;
  if (request_.path.empty() || request_.path[0] != '/') {
    return server_->Error(400, "path: expected an absolute path");
  }
  route_ = server_->Find(request_.path);
  if (route_ == nullptr) return server_->Error(404, "path: no such route");
  for (const auto& [name, value] : request_.headers) {
    if (absl::EqualsIgnoreCase(name, "Content-Encoding") &&
        !absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(value), "identity")) {
      return server_->Error(415,
                            "Content-Encoding: only identity is accepted (send the body "
                            "uncompressed)");
    }
  }
  const boost::optional<uint64_t> length = parser_->content_length();
  if (length.has_value() && *length > options.max_body_bytes) {
    return server_->Error(413,
                          absl::StrCat("request body: at most ", options.max_body_bytes, " bytes"));
  }
  if (route_->admit) {
    if (std::optional<HttpResponse> answer = route_->admit(request_)) return answer;
  }
  if (parser_->is_done()) return std::nullopt;
  const std::string expect = request_.Header("Expect");
  if (!expect.empty() && !absl::EqualsIgnoreCase(expect, "100-continue")) {
    return server_->Error(417, "Expect: only 100-continue is understood");
  }
  const int64_t reserve = static_cast<int64_t>(length.value_or(options.max_body_bytes));
  if (server_->inflight_body_bytes.fetch_add(reserve) + reserve > options.max_inflight_body_bytes &&
      reserve > 0) {
    server_->inflight_body_bytes.fetch_sub(reserve);
    HttpResponse busy =
        server_->Error(503, absl::StrCat("server: more than ", options.max_inflight_body_bytes,
                                         " bytes of request bodies in flight; try again later"));
    busy.headers.emplace_back("Retry-After", "1");
    return busy;
  }
  reserved_bytes_ = reserve;
  return std::nullopt;
}

void HttpSession::ReadBody() {
  parser_->body_limit(server_->options.max_body_bytes);
  auto read = [self = shared_from_this()] {
    self->SetDeadline(self->server_->options.body_timeout_ms);
    http::async_read(self->socket_, self->buffer_, *self->parser_,
                     [self](boost::beast::error_code ec, size_t) { self->OnBody(ec); });
  };
  // HTTP/1.0 clients do not know 100 (RFC 9110 section 10.1.1).
  if (parser_->get().version() < 11 ||
      !absl::EqualsIgnoreCase(request_.Header("Expect"), "100-continue")) {
    return read();
  }
  static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
  SetDeadline(server_->options.write_timeout_ms);
  boost::asio::async_write(socket_, boost::asio::buffer(kContinue, sizeof(kContinue) - 1),
                           [self = shared_from_this(), read](boost::beast::error_code ec, size_t) {
                             if (!ec) read();
                           });
}

void HttpSession::OnBody(boost::beast::error_code ec) {
  if (ec) ReleaseBody();  // no body will be handled
  if (ec && timed_out_) {
    return SendError(
        408,
        absl::StrCat("request body: not complete within ", server_->options.body_timeout_ms, " ms"),
        true);
  }
  if (ec == http::error::partial_message || ec == http::error::end_of_stream ||
      ec == boost::asio::error::eof) {
    return SendError(400, "request body: shorter than Content-Length", true);
  }
  if (ec == boost::asio::error::connection_reset || ec == boost::asio::error::operation_aborted) {
    return;
  }
  if (ec) {
    auto [status, message] = ParseError(ec);
    if (status == 413) {
      message = absl::StrCat("request body: at most ", server_->options.max_body_bytes, " bytes");
    }
    return SendError(status, message, true);
  }
  Dispatch();
}

void HttpSession::Dispatch() {
  if (server_->stopping.load()) {
    ReleaseBody();
    return SendError(503, "server: shutting down", true);
  }
  request_.body = std::move(parser_->get().body());
  parser_.reset();
  cancellation_ = std::make_shared<HttpCancellation>();
  request_.cancellation = cancellation_;
  handling_ = true;
  answer_pending_ = true;
  server_->pending_answers.fetch_add(1);
  ClearDeadline();
  WatchDisconnect();
  const bool queued = server_->Post([self = shared_from_this()] {
    HttpResponse response;
    try {
      response = self->route_->handler(self->request_);
    } catch (const std::exception& e) {
      response = self->server_->Error(500, "internal: the handler failed");
    }
    boost::asio::post(*self->server_->ioc, [self, response = std::move(response)]() mutable {
      self->Respond(std::move(response));
    });
  });
  if (!queued) {  // the handlers stopped between the check above and now
    keep_alive_ = false;
    Respond(server_->Error(503, "server: shutting down"));
  }
}

void HttpSession::WatchDisconnect() {
  socket_.async_wait(
      boost::asio::ip::tcp::socket::wait_read,
      [self = shared_from_this(), cancellation = cancellation_](boost::beast::error_code ec) {
        if (ec || !self->handling_ || cancellation != self->cancellation_) return;
        char byte;
        const ssize_t n = ::recv(self->socket_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) return;  // a pipelined request: read after this answer
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          return self->WatchDisconnect();
        }
        cancellation->Cancel();  // EOF or an error: the client is gone
      });
}

void HttpSession::Respond(HttpResponse response) {
  handling_ = false;
  boost::beast::error_code ignored;
  socket_.cancel(ignored);  // ends the disconnect watch
  ReleaseBody();
  const bool gone = cancellation_ != nullptr && cancellation_->cancelled();
  cancellation_.reset();
  request_.body = std::string();  // free it before writing the answer
  Write(std::move(response), !keep_alive_ || gone);
}

void HttpSession::SendError(int status, const std::string& message, bool close) {
  Write(server_->Error(status, message), close);
}

void HttpSession::Write(HttpResponse response, bool close) {
  write_ = std::move(response);
  if (close) keep_alive_ = false;
  write_head_ = absl::StrCat(
      "HTTP/1.1 ", write_.status, " ", HttpReasonPhrase(write_.status),
      "\r\nContent-Type: ", write_.content_type, "\r\nContent-Length: ", write_.body.size(),
      close ? "\r\nConnection: close\r\n" : "\r\nConnection: keep-alive\r\n");
  for (const auto& [name, value] : write_.headers) {
    absl::StrAppend(&write_head_, name, ": ", value, "\r\n");
  }
  write_head_ += "\r\n";
  std::vector<boost::asio::const_buffer> buffers{boost::asio::buffer(write_head_)};
  if (!head_only_ && !write_.body.empty()) buffers.push_back(boost::asio::buffer(write_.body));
  SetDeadline(server_->options.write_timeout_ms);
  boost::asio::async_write(socket_, buffers,
                           [self = shared_from_this(), close](boost::beast::error_code ec, size_t) {
                             self->write_ = HttpResponse();
                             self->write_head_.clear();
                             if (self->answer_pending_) {
                               self->answer_pending_ = false;
                               self->server_->pending_answers.fetch_sub(1);
                             }
                             if (ec) return;
                             if (close || self->server_->stopping.load()) {
                               return self->LingeringClose();
                             }
                             self->ReadNext();
                           });
}

void HttpSession::LingeringClose() {
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

}  // namespace invariant::server
