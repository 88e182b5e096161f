// request_record.h: what the access log says of one call (access_log.h),
// filled as the call goes: the transport opens it (trace context, protocol,
// method, peer, bytes), the handler adds the model, the inputs, the
// admission decision and the decode time, the batcher the queue and compute
// times (BatchJobTimes), and the transport closes it with the status.
//
// A stream is one call: its messages add their rows, bytes and times up, and
// its model is that of its last message.
//
// Thread-safety: the fields under "opened" are written once, before the
// handler sees the record, and only read after; every other member may be
// written from any thread at once (the calling thread, a decoding worker,
// batch threads).
#ifndef INVARIANT_SERVER_ACCESS_LOG_REQUEST_RECORD_H_
#define INVARIANT_SERVER_ACCESS_LOG_REQUEST_RECORD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "server/access_log/trace_context.h"
#include "server/batching/batcher.h"

namespace invariant::server {

class RequestRecord {
 public:
  // Opened: by the transport, before the handler.
  TraceContext trace;
  absl::Time start = absl::Now();
  const char* protocol = "";  // "grpc" or "http"
  std::string method;         // "/invariant.v1.FeatureService/Predict", "POST /v2/models/m/infer"
  std::string peer;           // "ipv4:127.0.0.1:50412"
  // HTTP: from the request's first byte to its handler (reading the body and
  // waiting for a handler thread); -1 over gRPC, whose wait is gRPC's own.
  int64_t wait_ns = -1;

  // The version the call resolved to (the last one, in a stream).
  void SetModel(const std::string& name, int64_t version) {
    std::lock_guard<std::mutex> lock(mu_);
    model_ = name;
    version_ = version;
  }
  // "admitted" once every budget granted the call's leases, or
  // "refused:<budget>" (the option that sets it: max_inflight_bytes, ...,
  // batch_queue for a full queue).
  void SetAdmission(std::string decision) {
    std::lock_guard<std::mutex> lock(mu_);
    admission_ = std::move(decision);
  }
  std::string model() const {
    std::lock_guard<std::mutex> lock(mu_);
    return model_;
  }
  int64_t version() const {
    std::lock_guard<std::mutex> lock(mu_);
    return version_;
  }
  std::string admission() const {
    std::lock_guard<std::mutex> lock(mu_);
    return admission_;
  }

  std::atomic<int64_t> rows{0};       // rows computed or asked for
  std::atomic<int64_t> inputs{0};     // encoded inputs (clips, image files)
  std::atomic<int64_t> bytes_in{0};   // request messages / body
  std::atomic<int64_t> bytes_out{0};  // response messages / body
  std::atomic<int64_t> decode_ns{0};  // decoding clips or images into rows
  // Given to every batch job of the call (BatchJob::times).
  const std::shared_ptr<BatchJobTimes> batch_times = std::make_shared<BatchJobTimes>();

 private:
  // A std::mutex, not absl::Mutex: one is made per call, and absl's deadlock
  // detection (on in Debian's build) pays a global graph update for each.
  mutable std::mutex mu_;
  std::string model_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  std::string admission_ ABSL_GUARDED_BY(mu_);
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ACCESS_LOG_REQUEST_RECORD_H_
