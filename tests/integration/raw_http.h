// raw_http.h: one HTTP/1.1 connection driven byte by byte, for tests that
// need what a client library hides: keep-alive and pipelining, partial
// headers and bodies, connections held open, a client that vanishes.
//
// Not thread-safe (one thread per RawHttpConnection). Every read waits at most
// its `timeout` (a bound against hangs, not a timing assertion).
#ifndef INVARIANT_TESTS_INTEGRATION_RAW_HTTP_H_
#define INVARIANT_TESTS_INTEGRATION_RAW_HTTP_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace invariant::testing_server {

struct RawHttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class RawHttpConnection {
 public:
  RawHttpConnection() = default;
  ~RawHttpConnection();
  RawHttpConnection(const RawHttpConnection&) = delete;
  RawHttpConnection& operator=(const RawHttpConnection&) = delete;

  // Connects to 127.0.0.1:<port>.
  absl::Status Connect(int port);
  absl::Status Send(const std::string& bytes);
  // Reads one response (Content-Length framed; a 1xx response counts as one).
  absl::StatusOr<RawHttpResponse> Read(absl::Duration timeout = absl::Seconds(30));
  // True when the server closed the connection (EOF or reset) within
  // `timeout`; bytes that came before the close are kept for Read.
  bool ClosedByServer(absl::Duration timeout = absl::Seconds(30));
  void Close();
  // True when bytes (or a close) from the server wait to be read, now.
  bool Readable() const;

 private:
  enum class FillResult { kData, kClosed, kTimeout };
  // Appends what arrives to buffer_ (kData); kClosed on EOF or an error.
  FillResult Fill(absl::Time give_up);

  int fd_ = -1;
  std::string buffer_;
};

// Raises this process's soft limit of open files to the hard limit.
void RaiseOpenFileLimit();

}  // namespace invariant::testing_server

#endif  // INVARIANT_TESTS_INTEGRATION_RAW_HTTP_H_
