// metrics.h: the Prometheus metrics of invariant-server.
//
// ServerMetrics owns a prometheus::Registry and, once Expose() is called, an
// HttpServer (server/http/http_server.h) serving it at http://HOST:PORT/metrics
// (so this target sits above server/http and server/common, whose
// model_statistics.h it keeps, and below the front ends that record into it);
// exactly that path (a query string is ignored), any other path 404, any
// other method on /metrics 405. Names:
//   grpc_server_started_total{grpc_service,grpc_method,grpc_type}       counter
//   grpc_server_handled_total{grpc_service,grpc_method,grpc_type,grpc_code} counter
//   grpc_server_handling_seconds{grpc_service,grpc_method,grpc_type}    histogram
//     (REST calls too: grpc_service="inference.REST", grpc_type="http"; rest_service.h)
//   invariant_batch_rows{model,method}        histogram of rows per compute call
//   invariant_queue_seconds{model}            histogram of time in the batch queue
//   invariant_compute_seconds{model,method}   histogram of compute-call durations
//   invariant_rows_total{model,method}        counter of rows computed
//   invariant_queue_rows{model}               gauge of rows waiting
//   invariant_model_info{model,version,kind}  gauge, 1 while the version is ready
//   invariant_model_load_failures_total{model} counter
//   invariant_model_bytes{model,version}      gauge of the bytes a ready version states
//     (core/model/model_footprint.h: bundle, packed copies, compute workspaces; what
//     --max_model_bytes counts)
//   invariant_build_info{version}             gauge, 1
//   invariant_abandoned_total{stage,reason}   counter of work stopped because its call was
//     cancelled or its deadline passed: stage "decode" (clip decoding), "queue" (the batch
//     queue), "http_queue" (a REST call that waited for a handler thread past its deadline, or
//     whose client left meanwhile);
//     reason "cancelled" or "deadline_exceeded"
//   invariant_admission_refused_total{budget,reason} counter of requests an admission budget
//     refused before any work: budget "memory" (--max_inflight_bytes), "audio"
//     (--max_decode_audio_seconds) or "image" (--max_decode_image_pixels); reason "budget"
//     (server-wide), "share" (one connection's), "too_large" (the request alone)
//   invariant_http_held_bytes{kind}           gauge: request "body" and "answer" bytes the REST
//     front end holds now (http_server.h's budgets)
//   invariant_http_connections{kind}          gauge: "open" (under the cap), "probe_slot" (past it)
//   invariant_http_queued_requests            gauge: REST requests read and waiting for an HTTP
//     handler thread (a rising value: the handler threads, not the batcher, are behind)
//   invariant_http_refused_total{reason}      counter: "body_budget", "answer_budget" (503),
//     "headers_too_large" (431), "over_cap" (503 past the connection cap), "over_cap_dropped"
//   invariant_http_cut_total{reason}          counter: connections cut for "header_timeout",
//     "body_timeout", "body_rate", "write_timeout", "write_rate", or closed "idle_at_cap" to
//     admit a new connection (the one idle the longest)
//   invariant_http_probes_over_cap_total      counter: probes answered past the connection cap
//   invariant_http_clients_gone_total         counter: REST calls whose client left while they
//     were handled (each cancelled; HTTP 499)
//   invariant_access_log_lines_total{outcome} counter of request-log lines "written" and
//     "dropped" (the log's queue was full, or its sink refused a write; access_log.h)
//   invariant_inflight{budget}                gauge of what requests in flight hold of each
//     budget: "memory" in bytes, "audio" in seconds of audio queued for or in decoding,
//     "image" in pixels of image files queued for or in decoding
// Beside the series, the per-(model, version) statistics of the Open
// Inference Protocol's statistics extension (model_statistics.h, read with
// statistics()): BatchComputed and Dequeued update both in the same call, so
// they never disagree (the version is not a Prometheus label);
// RequestEnded, InputDecoded and OutputWritten feed the statistics only.
// Series whose labels are known in advance start at 0 (Prometheus practice,
// so rate() and alerts see the first event): the grpc_server_* series of
// every method of the served services and every code (RpcKnown, called by
// MakeMetricsInterceptorFactory in metrics_interceptor.h and by
// RestInferenceService::Register for the REST routes) and the per-model
// load-failure counter and queue gauge of every model seen (ModelSeen).
//
// Bounded labels: ServerMetrics creates a series for every label value it is
// given, so callers pass only values from sets fixed by the server, never a
// string a client chose: grpc_service / grpc_method are a served method or
// "unknown" (metrics_interceptor.h) or a REST route name (rest_service.h);
// grpc_code a canonical code name; model a model name from the models
// directory (registry observers, or the name a lookup resolved to), never the
// name a request asked for; method "Featurize", "Predict" or
// "FeaturizePredict" (a protocol call asking for features and a head output).
// Every method is thread-safe.
#ifndef INVARIANT_SERVER_METRICS_METRICS_H_
#define INVARIANT_SERVER_METRICS_METRICS_H_

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/common/model_statistics.h"
#include "server/http/http_server.h"

namespace invariant::server {

class ServerMetrics {
 public:
  explicit ServerMetrics(const std::string& build_version);
  ~ServerMetrics();

  // Serves /metrics on `host`:`port` (port 0 = pick one); UNAVAILABLE naming
  // the address when it cannot listen.
  absl::Status Expose(const std::string& host, int port);
  // The bound port of the exposer, or 0 before Expose.
  int port() const { return port_; }

  // The text exposition of every metric (for tests and debugging).
  std::string Serialize() const;

  void RpcStarted(const std::string& service, const std::string& method, const std::string& type);
  void RpcHandled(const std::string& service, const std::string& method, const std::string& type,
                  const std::string& code, double seconds);
  // Creates the series of one method (started, handling_seconds) and of one
  // of its codes (handled) at 0, leaving existing series as they are.
  void RpcKnown(const std::string& service, const std::string& method, const std::string& type,
                const std::string& code);

  // One compute call of `model` `version`: the batch series and the statistics.
  void BatchComputed(const std::string& model, int64_t version, const std::string& method,
                     int64_t rows, double compute_seconds);
  // One piece of a request out of the batch queue: the queue series and the statistics.
  void Dequeued(const std::string& model, int64_t version, double queue_seconds);
  // The statistics only: one request ended (`ok` or not) `seconds` after its
  // handler began; its clips decoded in `seconds`; its outputs written in `seconds`.
  void RequestEnded(const std::string& model, int64_t version, bool ok, double seconds);
  void InputDecoded(const std::string& model, int64_t version, double seconds);
  void OutputWritten(const std::string& model, int64_t version, double seconds);
  // The per-(model, version) statistics (ModelUnloaded forgets a version's).
  const ModelStatisticsTable& statistics() const { return statistics_; }
  void QueueRows(const std::string& model, int64_t rows);

  void ModelReady(const std::string& model, int64_t version, const std::string& kind,
                  uint64_t bytes);
  void ModelUnloaded(const std::string& model, int64_t version);
  void ModelLoadFailed(const std::string& model);
  // Creates the per-model series of `model` at 0 (load failures, queued rows).
  void ModelSeen(const std::string& model);

  // Work stopped at `stage` (one of kAbandonStages) with a CANCELLED or
  // DEADLINE_EXCEEDED `status`; other stages and codes are not counted.
  void Abandoned(const char* stage, const absl::Status& status);
  // A refusal by `budget` (one of kAdmissionBudgets) for `reason` ("budget",
  // "share", "too_large").
  void AdmissionRefused(const char* budget, const char* reason);
  // `lines` of the request log were "written" or "dropped".
  void AccessLogLines(const char* outcome, int64_t lines);
  // The REST front end's HTTP counters, read at each scrape (SetScrapeHook).
  void HttpServed(const HttpServerStats& stats);
  // Runs `hook` at the start of every scrape (Serialize), e.g. to read
  // counters kept elsewhere; empty: none. Waits for a scrape running the
  // old hook to finish it, so an owner clears its hook before it goes.
  void SetScrapeHook(std::function<void()> hook);

  // What requests in flight hold of `budget` (one of kAdmissionBudgets).
  void Inflight(const char* budget, int64_t units);
  static constexpr const char* kAbandonStages[] = {"decode", "queue", "http_queue"};
  static constexpr const char* kAdmissionBudgets[] = {"memory", "audio", "image"};

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Histogram>& handling_seconds_;
  prometheus::Family<prometheus::Histogram>& batch_rows_;
  prometheus::Family<prometheus::Histogram>& queue_seconds_;
  prometheus::Family<prometheus::Histogram>& compute_seconds_;
  prometheus::Family<prometheus::Counter>& rows_total_;
  prometheus::Family<prometheus::Gauge>& queue_rows_;
  prometheus::Family<prometheus::Gauge>& model_info_;
  prometheus::Family<prometheus::Counter>& load_failures_;
  prometheus::Family<prometheus::Gauge>& model_bytes_;
  prometheus::Family<prometheus::Gauge>& build_info_;
  prometheus::Family<prometheus::Counter>& abandoned_;
  prometheus::Family<prometheus::Counter>& admission_refused_;
  prometheus::Family<prometheus::Counter>& access_log_lines_;
  prometheus::Family<prometheus::Gauge>& inflight_;
  prometheus::Gauge* inflight_gauges_[std::size(kAdmissionBudgets)] = {};
  prometheus::Family<prometheus::Gauge>& http_held_;
  prometheus::Family<prometheus::Gauge>& http_connections_;
  prometheus::Family<prometheus::Gauge>& http_queued_;
  prometheus::Family<prometheus::Counter>& http_refused_;
  prometheus::Family<prometheus::Counter>& http_cut_;
  prometheus::Family<prometheus::Counter>& http_probes_;
  prometheus::Family<prometheus::Counter>& http_clients_gone_;
  std::mutex http_mu_;  // the last HttpServed stats (counters grow by the difference)
  HttpServerStats http_last_;
  mutable std::mutex hook_mu_;  // held while the hook runs
  std::function<void()> scrape_hook_;
  std::mutex model_mu_;  // model_info_ kinds by (model, version)
  std::map<std::pair<std::string, int64_t>, std::string> model_kinds_;
  ModelStatisticsTable statistics_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_METRICS_METRICS_H_
