// protobuf_log.h: libprotobuf's log lines, throttled.
//
// Protobuf 3.21 validates proto3 `string` fields as UTF-8 while parsing: a
// request whose model name is not UTF-8 fails to parse AND makes libprotobuf
// write one "[libprotobuf ERROR ...] String field '...' contains invalid UTF-8
// data" line to stderr, so a client can flood the log at request rate. We
// keep the message (it says which field was bad) but throttle it: the
// process-wide handler installed by InstallProtobufLogThrottle() writes the
// 1st, 2nd, 4th, 8th, ... occurrence of each distinct message (N occurrences
// cost about log2(N) + 1 lines, each saying how many there were so far).
// FATAL messages always pass. LogThrottle is the pure counting rule.
#ifndef INVARIANT_SERVER_COMMON_PROTOBUF_LOG_H_
#define INVARIANT_SERVER_COMMON_PROTOBUF_LOG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace invariant::server {

// Counts occurrences per key and says which to write: the n-th occurrence of
// a key is written when n is a power of two. At most kMaxKeys distinct keys
// are tracked (longer keys are cut to kMaxKeyBytes); later keys share one
// counter. Thread-safe.
class LogThrottle {
 public:
  static constexpr size_t kMaxKeys = 256;
  static constexpr size_t kMaxKeyBytes = 256;

  // The occurrence number of `key` (1, 2, ...) when it should be written, or 0.
  int64_t Admit(absl::string_view key) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::map<std::string, int64_t, std::less<>> counts_ ABSL_GUARDED_BY(mu_);
  int64_t overflow_ ABSL_GUARDED_BY(mu_) = 0;
};

// Routes libprotobuf's log messages through a process-wide LogThrottle to
// stderr. Call once at startup, before other threads run (SetLogHandler is not
// thread-safe).
void InstallProtobufLogThrottle();

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_COMMON_PROTOBUF_LOG_H_
