#include "server/http/http_session.h"

#include <sys/socket.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

namespace http = boost::beast::http;

constexpr size_t kHeaderRead = 4096;

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

}  // namespace

std::pair<int, std::string> HttpParseError(const boost::beast::error_code& ec) {
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

HttpSession::HttpSession(HttpServerImpl* server, boost::asio::ip::tcp::socket socket)
    : server_(server), socket_(std::move(socket)), deadline_(socket_.get_executor()) {
  server_->connections.fetch_add(1);
  boost::system::error_code ec;
  const boost::asio::ip::tcp::endpoint remote = socket_.remote_endpoint(ec);
  if (!ec) {
    const boost::asio::ip::address address = remote.address();
    peer_ = address.is_v6() ? absl::StrCat("ipv6:[", address.to_string(), "]:", remote.port())
                            : absl::StrCat("ipv4:", address.to_string(), ":", remote.port());
  }
}

HttpSession::~HttpSession() {
  LeaveIdle();
  ReleaseBody();
  ReleaseAnswer();
  ReleaseReserved();
  if (counted_) server_->connections.fetch_sub(1);
  if (answer_pending_) server_->pending_answers.fetch_sub(1);
}

bool HttpSession::ChargeBody(int64_t bytes) {
  bytes = std::min(bytes, body_cap_);
  if (bytes <= body_charged_) return true;
  const int64_t more = bytes - body_charged_;
  if (server_->inflight_body_bytes.fetch_add(more) + more >
      server_->options.max_inflight_body_bytes) {
    server_->inflight_body_bytes.fetch_sub(more);
    return false;
  }
  body_charged_ = bytes;
  return true;
}

void HttpSession::ReleaseBody() {
  if (body_charged_ > 0) server_->inflight_body_bytes.fetch_sub(body_charged_);
  body_charged_ = 0;
}

void HttpSession::ReleaseAnswer() {
  if (answer_charged_ > 0) server_->answer_bytes.fetch_sub(answer_charged_);
  answer_charged_ = 0;
}

void HttpSession::ReleaseReserved() {
  if (reserved_) server_->reserved.fetch_sub(1);
  reserved_ = false;
}

void HttpSession::Start() { ReadNext(); }

void HttpSession::StartReserved() {
  // A reserved session does not hold a place under the cap; it is counted
  // apart, so the sessions past the cap are bounded too.
  if (counted_) server_->connections.fetch_sub(1);
  counted_ = false;
  reserved_ = true;
  server_->reserved.fetch_add(1);
  ReadNext();
}

bool HttpSession::Evict() {
  if (!reserved_) return false;
  ReleaseReserved();
  if (!lingering_) {
    Abort();
    return true;
  }
  // Answered already: a plain close, so the answer still reaches the client.
  boost::beast::error_code ignored;
  ClearDeadline();
  socket_.close(ignored);
  return true;
}

void HttpSession::EnterIdle() {
  if (idle_ || !counted_) return;
  idle_ = true;
  idle_at_ = server_->idle_sessions.insert(server_->idle_sessions.end(), this);
}

void HttpSession::LeaveIdle() {
  if (!idle_) return;
  idle_ = false;
  server_->idle_sessions.erase(idle_at_);
}

void HttpSession::CloseIdle() {
  LeaveIdle();
  if (counted_) server_->connections.fetch_sub(1);
  counted_ = false;
  ClearDeadline();
  boost::beast::error_code ignored;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);  // the pending read ends with an error: the session goes
}

void HttpSession::ReadNext() {
  parser_.emplace();
  // The header section's size is checked in ScanHeader, exactly (Beast's
  // limit applies to each put: fields parsed in an earlier read are not
  // counted, nor the request line within one).
  parser_->header_limit(std::numeric_limits<std::uint32_t>::max());
  // Checked in Admit, then set for the body. (Not boost::none: Beast 1.74
  // compares a Content-Length with an empty limit as if it were over it.)
  parser_->body_limit(std::numeric_limits<uint64_t>::max());
  request_ = HttpRequest();
  route_ = nullptr;
  head_only_ = false;
  scanned_ = 0;
  if (buffer_.size() > 0) {  // a pipelined request
    request_.arrival = last_read_;
    return ReadHeader();
  }
  // Idle: wait for the first byte under the idle deadline (and, under the
  // cap, be the first closed when a new connection needs the room).
  SetDeadline(reserved_ ? server_->options.probe_header_timeout_ms
                        : server_->options.idle_timeout_ms);
  EnterIdle();
  socket_.async_read_some(buffer_.prepare(kHeaderRead),
                          [self = shared_from_this()](boost::beast::error_code ec, size_t n) {
                            self->LeaveIdle();
                            if (ec && self->reserved_ && self->late_ != Late::kNone) {
                              return self->OnHeader(ec);  // a 503 for a silent one
                            }
                            if (ec) return;  // closed, reset or idle too long: just close
                            self->buffer_.commit(n);
                            self->last_read_ = self->request_.arrival = SteadyClock::now();
                            self->ReadHeader();
                          });
}

void HttpSession::ReadHeader() {
  SetDeadline(reserved_ ? server_->options.probe_header_timeout_ms
                        : server_->options.header_timeout_ms);
  ScanHeader();
}

void HttpSession::ScanHeader() {
  const char* data = static_cast<const char*>(buffer_.data().data());
  const absl::string_view buffered(data, buffer_.size());
  const size_t end = buffered.find("\r\n\r\n", scanned_);
  if (end == absl::string_view::npos && buffered.size() < kMaxHeaderBytes) {
    scanned_ = buffered.size() < 3 ? 0 : buffered.size() - 3;
    const size_t room = std::min(kHeaderRead, kMaxHeaderBytes - buffered.size());
    socket_.async_read_some(buffer_.prepare(room),
                            [self = shared_from_this()](boost::beast::error_code ec, size_t n) {
                              if (ec) return self->OnHeader(ec);
                              self->buffer_.commit(n);
                              self->last_read_ = SteadyClock::now();
                              self->ScanHeader();
                            });
    return;
  }
  if (end == absl::string_view::npos || end + 4 > kMaxHeaderBytes) {
    return OnHeader(http::error::header_limit);
  }
  boost::beast::error_code ec;
  const size_t used = parser_->put(boost::asio::buffer(data, end + 4), ec);
  buffer_.consume(used);
  if (!ec && !parser_->is_header_done()) ec = http::error::partial_message;
  if (ec == http::error::partial_message || ec == http::error::need_more) {
    ec = http::error::bad_line_ending;  // the parser wants more than the section: malformed
  }
  OnHeader(ec);
}

void HttpSession::OnHeader(boost::beast::error_code ec) {
  if (ec && late_ != Late::kNone) {
    if (reserved_) {
      server_->over_cap_refused.fetch_add(1);
      return SendError(503,
                       absl::StrCat("server: too many open connections (at most ",
                                    server_->max_connections, "); try again later"),
                       true);
    }
    server_->header_timeouts.fetch_add(1);
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
  ClearDeadline();
  if (ec) {
    if (ec == http::error::header_limit) server_->headers_too_large.fetch_add(1);
    auto [status, message] = HttpParseError(ec);
    return SendError(status, message, true);
  }
  const auto& header = parser_->get();
  keep_alive_ = parser_->keep_alive() && !reserved_;
  request_.method = std::string(header.method_string());
  request_.peer = peer_;
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
    if (std::optional<HttpResponse> answer = route_->admit(request_)) {
      if (reserved_) server_->over_cap_answered.fetch_add(1);
      return answer;
    }
  }
  if (reserved_) {  // past the cap, only what admit answers is answered
    server_->over_cap_refused.fetch_add(1);
    return server_->Error(503, absl::StrCat("server: too many open connections (at most ",
                                            server_->max_connections, "); try again later"));
  }
  if (options.max_answer_bytes > 0 && server_->answer_bytes.load() >= options.max_answer_bytes) {
    server_->answer_budget_refused.fetch_add(1);
    return server_->Busy(absl::StrCat("server: ", options.max_answer_bytes,
                                      " bytes of answers or more wait to be written; try again "
                                      "later"));
  }
  if (parser_->is_done()) return std::nullopt;
  const std::string expect = request_.Header("Expect");
  if (!expect.empty() && !absl::EqualsIgnoreCase(expect, "100-continue")) {
    return server_->Error(417, "Expect: only 100-continue is understood");
  }
  body_cap_ = static_cast<int64_t>(length.value_or(options.max_body_bytes));
  if (!ChargeBody(std::clamp<int64_t>(options.body_read_bytes, 1, kMaxBodyRead))) {
    server_->body_budget_refused.fetch_add(1);
    return server_->Busy(absl::StrCat("server: more than ", options.max_inflight_body_bytes,
                                      " bytes of request bodies in flight; try again later"));
  }
  return std::nullopt;
}

void HttpSession::Dispatch() {
  if (server_->stopping.load()) {
    ReleaseBody();
    return SendError(503, "server: shutting down", true);
  }
  request_.body = std::move(parser_->get().body());
  parser_.reset();
  // The charge is what is held now: the body (a read's share is returned).
  body_cap_ = static_cast<int64_t>(request_.body.capacity());
  if (body_charged_ > body_cap_) {
    server_->inflight_body_bytes.fetch_sub(body_charged_ - body_cap_);
    body_charged_ = body_cap_;
  }
  cancellation_ = std::make_shared<HttpCancellation>();
  request_.cancellation = cancellation_;
  handling_ = true;
  answer_pending_ = true;
  server_->pending_answers.fetch_add(1);
  ClearDeadline();
  WatchDisconnect();
  const bool queued =
      server_->Post([self = shared_from_this()] { self->RunHandler(); }, request_.body.size());
  if (!queued) {  // the handlers stopped between the check above and now
    keep_alive_ = false;
    Respond(server_->Error(503, "server: shutting down"));
  }
}

void HttpSession::RunHandler() {
  HttpResponse response;
  const HttpServerOptions& options = server_->options;
  // Checked again when a handler thread takes the request: the answers of
  // the requests admitted while the budget was free may have spent it since.
  if (options.max_answer_bytes > 0 && server_->answer_bytes.load() >= options.max_answer_bytes) {
    server_->answer_budget_refused.fetch_add(1);
    response = server_->Busy(absl::StrCat("server: ", options.max_answer_bytes,
                                          " bytes of answers or more wait to be written; try "
                                          "again later"));
  } else {
    HttpReply reply;  // set when the handler defers its answer
    // A deferred answer given while the handler still runs waits here: the
    // session's request is the handler's until it returns.
    auto handover = std::make_shared<DeferredHandover>();
    request_.defer = [this, &reply, &handover]() {
      if (!reply) reply = DeferredReply(handover);
      return reply;
    };
    try {
      response = route_->handler(request_);
    } catch (const std::exception& e) {
      response = server_->Error(500, "internal: the handler failed");
      if (reply) reply(std::move(response));  // the first answer wins
    }
    request_.defer = nullptr;
    if (reply) return handover->HandlerReturned();  // the reply posts the answer
  }
  boost::asio::post(*server_->ioc,
                    [self = shared_from_this(), response = std::move(response)]() mutable {
                      self->Respond(std::move(response));
                    });
}

void HttpSession::DeferredHandover::Give(std::function<void()> post) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!handler_returned) {
      early = std::move(post);
      return;
    }
  }
  post();
}

void HttpSession::DeferredHandover::HandlerReturned() {
  std::function<void()> post;
  {
    std::lock_guard<std::mutex> lock(mu);
    handler_returned = true;
    post = std::move(early);
  }
  if (post) post();
}

HttpReply HttpSession::DeferredReply(const std::shared_ptr<DeferredHandover>& handover) {
  return [self = shared_from_this(), gate = server_->reply_gate, handover,
          given = std::make_shared<std::atomic<bool>>(false)](HttpResponse response) {
    if (given->exchange(true)) return;
    handover->Give([self, gate, response = std::move(response)]() mutable {
      std::lock_guard<std::mutex> lock(gate->mu);
      if (gate->closed) return;
      boost::asio::post(*self->server_->ioc, [self, response = std::move(response)]() mutable {
        self->Respond(std::move(response));
      });
    });
  };
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
        cancellation->Cancel();                    // EOF or an error: the client is gone
        self->server_->clients_gone.fetch_add(1);  // after its callbacks ran
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
  // Held until written or the connection closes (http_transfer.cc).
  answer_charged_ = static_cast<int64_t>(response.body.size());
  server_->answer_bytes.fetch_add(answer_charged_);
  Write(std::move(response), !keep_alive_ || gone);
}

void HttpSession::SendError(int status, const std::string& message, bool close) {
  Write(server_->Error(status, message), close);
}

}  // namespace invariant::server
