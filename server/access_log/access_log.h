// access_log.h: the server's request log, one JSON object a line
// (docs/operations.md, "Request log").
//
//   --access_log=off | errors | sampled:RATE | all
//     errors      calls that did not end OK
//     sampled:R   those, plus the OK calls of sampled traces: a caller's
//                 traceparent decides by its sampled flag (parent-based, as
//                 OpenTelemetry's ParentBased sampler), a trace started here
//                 is kept when its id falls in the first R of the id space
//                 (TraceIdRatioBased: the same trace is kept by every service
//                 that samples at R)
//     all         every call
//
// A line is flat JSON with OpenTelemetry's field names where one exists
// (trace_id, span_id, trace_flags: the Collector's filelog receiver's
// json_parser and trace_parser read them with their defaults; Loki's `json`
// stage reads every field), e.g.
//   {"time":"2026-12-02T17:30:00.123456Z","level":"info","trace_id":"…","span_id":"…",
//    "trace_flags":"01","protocol":"grpc","method":"/invariant.v1.FeatureService/Predict",
//    "model":"digits","version":3,"rows":1,"inputs":0,"status":"OK","bytes_in":3152,
//    "bytes_out":58,"queue_ms":0.012,"decode_ms":0.000,"compute_ms":0.210,"total_ms":0.391,
//    "peer":"ipv4:127.0.0.1:50412","admission":"admitted"}
// (AccessLogLine lists every field.)
//
// Bounded and never in a call's way: Close formats the line (a few
// microseconds) and queues it; one writer thread writes the lines in
// batches (every 100 ms, or sooner once 256 lines or half the queue wait).
// When `max_queued_lines` are waiting (the sink is slow or stuck), a line
// is dropped and counted (dropped()), never waited for. A write that fails
// (a closed pipe) counts its lines as dropped too.
//
// The sink: stderr, or a file opened for appending at Open (a FIFO must
// have its reader first); rotation is the platform's (a container's log
// driver; logrotate's copytruncate for a file). Written without blocking: a
// full pipe is waited for by the writer alone.
//
// Thread-safety: Close, Logged and the counters may be called from any
// thread at once. The destructor writes what is queued (waiting at most 2 s
// for a full sink, then dropping the rest), then returns.
#ifndef INVARIANT_SERVER_ACCESS_LOG_ACCESS_LOG_H_
#define INVARIANT_SERVER_ACCESS_LOG_ACCESS_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/access_log/request_record.h"

namespace invariant::server {

enum class AccessLogMode { kOff, kErrors, kSampled, kAll };

struct AccessLogOptions {
  AccessLogMode mode = AccessLogMode::kOff;
  double sample_rate = 0;  // kSampled: the share of traces started here that are kept
  std::string path;        // "" or "-": stderr
  int64_t max_queued_lines = 8192;
  // Called (on the writer thread, or Close's for a drop) with the lines
  // written or dropped; each may be empty.
  std::function<void(int64_t lines)> on_written;
  std::function<void(int64_t lines)> on_dropped;
};

// Parses the flag's value into options.mode and sample_rate
// (INVALID_ARGUMENT naming --access_log otherwise).
absl::Status ParseAccessLogMode(absl::string_view flag, AccessLogOptions* options);

// What a call's end adds to its record.
struct CallOutcome {
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string message;  // of an error
  int http_status = 0;  // the HTTP answer's status; 0 over gRPC
  absl::Time end = absl::Now();
};

// The line of `record` ended with `outcome`, without its newline. Every
// field, in order: time (the call's start, RFC 3339 UTC, microseconds),
// level ("info", or "error" for a status other than OK), trace_id, span_id,
// parent_span_id (when the caller sent one), trace_flags, tracestate (when
// sent), protocol, method, model and version (when the call reached one),
// rows, inputs, status (the canonical code name), http_status (HTTP),
// error (the message, when not OK), bytes_in, bytes_out, wait_ms (HTTP: from
// the request's first byte to its handler), queue_ms, decode_ms, compute_ms,
// total_ms, peer, admission (when decided).
std::string AccessLogLine(const RequestRecord& record, const CallOutcome& outcome);

class AccessLog {
 public:
  // The log of `options` (mode not kOff), its sink opened and its writer started.
  static absl::StatusOr<std::unique_ptr<AccessLog>> Open(AccessLogOptions options);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Whether a call of `record` that ended OK (`ok`) or not is logged.
  bool Logged(const RequestRecord& record, bool ok) const;
  // Queues `record`'s line when Logged; never blocks (see above).
  void Close(const RequestRecord& record, CallOutcome outcome);

  int64_t written() const { return written_.load(std::memory_order_relaxed); }
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Test hook: the writer takes no line until Resume (lines queue up to
  // max_queued_lines and are dropped past it).
  void PauseWriter();
  void ResumeWriter();

 private:
  AccessLog(AccessLogOptions options, int fd, bool owns_fd);
  void WriterLoop();
  // Writes `text` to the sink whole; false when the sink refused it.
  bool WriteAll(const std::string& text);
  void Drop(int64_t lines);

  const AccessLogOptions options_;
  const int fd_;
  const bool owns_fd_;
  const int64_t batch_lines_;  // queued lines that wake the writer before its interval
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> written_{0};
  std::atomic<int64_t> dropped_{0};
  // Unix ns after which a write to a full sink gives up (set when stopping).
  std::atomic<int64_t> give_up_at_ns_{std::numeric_limits<int64_t>::max()};
  std::thread writer_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ACCESS_LOG_ACCESS_LOG_H_
