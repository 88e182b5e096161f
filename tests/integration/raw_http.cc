#include "tests/integration/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace invariant::testing_server {

RawHttpConnection::~RawHttpConnection() { Close(); }

void RawHttpConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::Status RawHttpConnection::Connect(int port) {
  Close();
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return absl::UnavailableError(absl::StrCat("socket: errno ", errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    const int error = errno;
    Close();
    return absl::UnavailableError(absl::StrCat("connect: errno ", error));
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return absl::OkStatus();
}

absl::Status RawHttpConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("send: errno ", errno));
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

RawHttpConnection::FillResult RawHttpConnection::Fill(absl::Time give_up) {
  while (true) {
    const int wait_ms =
        static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(give_up - absl::Now())));
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return FillResult::kTimeout;
    char chunk[65536];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return FillResult::kClosed;
    buffer_.append(chunk, static_cast<size_t>(n));
    return FillResult::kData;
  }
}

absl::StatusOr<RawHttpResponse> RawHttpConnection::Read(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (Fill(give_up) != FillResult::kData) {
      return absl::UnavailableError(
          absl::StrCat("no complete response head; have '", buffer_.substr(0, 200), "'"));
    }
  }
  RawHttpResponse response;
  std::vector<std::string> lines = absl::StrSplit(buffer_.substr(0, end), "\r\n");
  std::vector<std::string> status_line = absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &response.status)) {
    return absl::InternalError(absl::StrCat("bad status line '", lines[0], "'"));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    response.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  size_t length = 0;
  if (response.status >= 200) {
    auto it = response.headers.find("content-length");
    if (it != response.headers.end() && !absl::SimpleAtoi(it->second, &length)) {
      return absl::InternalError("bad Content-Length");
    }
  }
  while (buffer_.size() < end + 4 + length) {
    if (Fill(give_up) != FillResult::kData) {
      return absl::UnavailableError("body shorter than Content-Length");
    }
  }
  response.body = buffer_.substr(end + 4, length);
  buffer_.erase(0, end + 4 + length);
  return response;
}

bool RawHttpConnection::Readable() const {
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

bool RawHttpConnection::ClosedByServer(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  FillResult result;
  while ((result = Fill(give_up)) == FillResult::kData) {
  }
  return result == FillResult::kClosed;
}

void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace invariant::testing_server
