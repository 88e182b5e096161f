// rest_client.h: one persistent HTTP/1.1 connection to the Open Inference
// Protocol's REST port, on libcurl (one easy handle per connection).
//
// Contract:
//   * A RestConnection keeps its TCP connection open between calls
//     (keep-alive) and reconnects transparently when the server closed it;
//     connections_opened() counts the TCP connections it had to open, so a
//     server that closes every connection shows one per call.
//   * Each call has `timeout` as its whole deadline (connect included);
//     zero = none. "Authorization: Bearer <token>" is sent with every call
//     when `bearer_token` is not empty. "Expect: 100-continue" is never sent.
//   * A call returns OK with the HTTP status, headers of interest and body
//     of whatever answer the server gave (4xx/5xx included); a transport
//     failure is UNAVAILABLE (DEADLINE_EXCEEDED for a timeout) whose message
//     starts with the libcurl code name, e.g. "CURLE_COULDNT_CONNECT: ...";
//     TransportErrorName gives that name alone.
//   * Plain http:// only (the server's --http_port has no TLS).
//   * RestInit() must have been called once (it is idempotent and
//     thread-safe) before the first RestConnection is made.
//
// Thread-safety: a RestConnection is used by one thread at a time; distinct
// connections may be used from different threads at once.
#ifndef INVARIANT_CLIENT_LOADGEN_REST_CLIENT_H_
#define INVARIANT_CLIENT_LOADGEN_REST_CLIENT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace invariant::loadgen {

// Initialises libcurl for the process (curl_global_init), once.
void RestInit();

struct RestCallResult {
  int http_status = 0;
  std::string body;
  // The Inference-Header-Content-Length response header, or -1 when absent
  // or not a non-negative integer.
  int64_t inference_header_length = -1;
};

class RestConnection {
 public:
  // `target` is host:port of the server's HTTP port.
  RestConnection(std::string target, std::string bearer_token, absl::Duration timeout);
  ~RestConnection();
  RestConnection(const RestConnection&) = delete;
  RestConnection& operator=(const RestConnection&) = delete;

  // POST `path` with `body`; `content_type` as given and, when
  // `inference_header_length` >= 0, an Inference-Header-Content-Length header.
  // `result` is reused (its body keeps its capacity).
  absl::Status Post(const std::string& path, absl::string_view body,
                    const std::string& content_type, int64_t inference_header_length,
                    RestCallResult* result);
  // GET `path`.
  absl::Status Get(const std::string& path, RestCallResult* result);

  int64_t connections_opened() const { return connections_opened_; }

 private:
  absl::Status Perform(const std::string& path, RestCallResult* result);

  const std::string base_url_;
  const std::string authorization_;  // the whole header line, or empty
  const absl::Duration timeout_;
  void* curl_;  // CURL*
  int64_t connections_opened_ = 0;
};

// The libcurl code name of a transport error returned by RestConnection
// (the text before the first ':'), e.g. "CURLE_OPERATION_TIMEDOUT".
std::string TransportErrorName(const absl::Status& status);

// `text` percent-encoded for one path segment (RFC 3986 unreserved bytes
// are kept).
std::string EscapePathSegment(absl::string_view text);

}  // namespace invariant::loadgen

#endif  // INVARIANT_CLIENT_LOADGEN_REST_CLIENT_H_
