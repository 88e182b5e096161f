#include "server/metrics/metrics.h"

#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "prometheus/text_serializer.h"
#include "server/http/http_server.h"

namespace invariant::server {
namespace {

using prometheus::Histogram;

Histogram::BucketBoundaries LatencyBuckets() {
  return {25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3,
          25e-3, 50e-3, 0.1,    0.25,   0.5,    1.0,  2.5,    5.0,  10.0};
}

Histogram::BucketBoundaries RowBuckets() {
  return {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
}

// The families of the registry, each with its name and help text.
prometheus::Family<prometheus::Counter>& CounterFamily(prometheus::Registry& registry,
                                                       const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Gauge>& GaugeFamily(prometheus::Registry& registry, const char* name,
                                                   const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

prometheus::Family<Histogram>& HistogramFamily(prometheus::Registry& registry, const char* name,
                                               const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
}

}  // namespace

ServerMetrics::ServerMetrics(const std::string& build_version)
    : registry_(std::make_shared<prometheus::Registry>()),
      started_(
          CounterFamily(*registry_, "grpc_server_started_total", "RPCs started on the server.")),
      handled_(CounterFamily(*registry_, "grpc_server_handled_total",
                             "RPCs completed on the server, by status code.")),
      handling_seconds_(HistogramFamily(*registry_, "grpc_server_handling_seconds",
                                        "Time from the start of an RPC to its status being sent.")),
      batch_rows_(HistogramFamily(*registry_, "invariant_batch_rows",
                                  "Rows per compute call formed by the batcher.")),
      queue_seconds_(HistogramFamily(*registry_, "invariant_queue_seconds",
                                     "Time a request waited in the batch queue.")),
      compute_seconds_(HistogramFamily(*registry_, "invariant_compute_seconds",
                                       "Duration of one Featurize/Predict compute call.")),
      rows_total_(
          CounterFamily(*registry_, "invariant_rows_total", "Rows computed, by model and method.")),
      queue_rows_(
          GaugeFamily(*registry_, "invariant_queue_rows", "Rows waiting in the batch queue.")),
      model_info_(
          GaugeFamily(*registry_, "invariant_model_info", "1 for each ready model version.")),
      load_failures_(CounterFamily(*registry_, "invariant_model_load_failures_total",
                                   "Failed model version loads.")),
      model_bytes_(GaugeFamily(
          *registry_, "invariant_model_bytes",
          "Bytes a ready model version states: its bundle, packed copies and compute workspaces.")),
      build_info_(GaugeFamily(*registry_, "invariant_build_info", "Build of the running server.")),
      abandoned_(CounterFamily(*registry_, "invariant_abandoned_total",
                               "Requests whose work stopped because the call was cancelled or its "
                               "deadline passed, by stage.")),
      admission_refused_(CounterFamily(*registry_, "invariant_admission_refused_total",
                                       "Requests refused by an admission budget before any work.")),
      access_log_lines_(CounterFamily(*registry_, "invariant_access_log_lines_total",
                                      "Request-log lines written, and dropped (queue full or the "
                                      "sink refused the write).")),
      inflight_(GaugeFamily(*registry_, "invariant_inflight",
                            "What requests in flight hold of each admission budget (memory: "
                            "bytes; audio: seconds of audio to decode; image: pixels to decode).")),
      http_held_(GaugeFamily(*registry_, "invariant_http_held_bytes",
                             "Request body and answer bytes the REST front end holds now.")),
      http_connections_(GaugeFamily(*registry_, "invariant_http_connections",
                                    "Open REST connections: under the cap, and in probe slots.")),
      http_queued_(GaugeFamily(*registry_, "invariant_http_queued_requests",
                               "REST requests read and waiting for an HTTP handler thread.")),
      http_refused_(CounterFamily(*registry_, "invariant_http_refused_total",
                                  "REST requests refused by the HTTP server's own limits.")),
      http_cut_(CounterFamily(*registry_, "invariant_http_cut_total",
                              "REST connections cut for a deadline or a minimum transfer rate, or "
                              "closed idle at the cap to admit a new one.")),
      http_probes_(
          CounterFamily(*registry_, "invariant_http_probes_over_cap_total",
                        "Liveness and readiness probes answered past the REST connection cap.")),
      http_clients_gone_(CounterFamily(*registry_, "invariant_http_clients_gone_total",
                                       "REST calls whose client left while they were handled "
                                       "(cancelled).")) {
  HttpServed(HttpServerStats());  // every series at 0
  build_info_.Add({{"version", build_version}}).Set(1);
  for (const char* stage : kAbandonStages) {
    for (const char* reason : {"cancelled", "deadline_exceeded"}) {
      abandoned_.Add({{"stage", stage}, {"reason", reason}});
    }
  }
  for (const char* outcome : {"written", "dropped"}) access_log_lines_.Add({{"outcome", outcome}});
  for (size_t i = 0; i < std::size(kAdmissionBudgets); ++i) {
    const char* budget = kAdmissionBudgets[i];
    inflight_gauges_[i] = &inflight_.Add({{"budget", budget}});
    for (const char* reason : {"budget", "share", "too_large"}) {
      admission_refused_.Add({{"budget", budget}, {"reason", reason}});
    }
  }
}

namespace {

// The index of `value` among the fixed label values `known`, or -1 (a
// series is created only for those).
template <size_t N>
int IndexOf(absl::string_view value, const char* const (&known)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (value == known[i]) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

void ServerMetrics::Abandoned(const char* stage, const absl::Status& status) {
  const char* reason = nullptr;
  if (status.code() == absl::StatusCode::kCancelled) reason = "cancelled";
  if (status.code() == absl::StatusCode::kDeadlineExceeded) reason = "deadline_exceeded";
  if (reason == nullptr) return;
  if (IndexOf(stage, kAbandonStages) >= 0)
    abandoned_.Add({{"stage", stage}, {"reason", reason}}).Increment();
}

void ServerMetrics::Inflight(const char* budget, int64_t units) {
  // Called twice per admitted request: the series are found once, at construction.
  const int i = IndexOf(budget, kAdmissionBudgets);
  if (i >= 0) inflight_gauges_[i]->Set(static_cast<double>(units));
}

void ServerMetrics::AdmissionRefused(const char* budget, const char* reason) {
  if (IndexOf(budget, kAdmissionBudgets) >= 0) {
    admission_refused_.Add({{"budget", budget}, {"reason", reason}}).Increment();
  }
}

void ServerMetrics::AccessLogLines(const char* outcome, int64_t lines) {
  const absl::string_view name(outcome);
  if (name == "written" || name == "dropped") {
    access_log_lines_.Add({{"outcome", outcome}}).Increment(static_cast<double>(lines));
  }
}

// The handler reads this object: stop serving before any member goes.
ServerMetrics::~ServerMetrics() { http_.reset(); }

absl::Status ServerMetrics::Expose(const std::string& host, int port) {
  HttpServerOptions options;
  options.host = host;
  options.port = port;
  options.threads = 2;
  auto http = std::make_unique<HttpServer>(options);
  // Exactly /metrics (a query string is ignored: Prometheus' scrape `params`
  // add one); every other path is 404, from the server itself.
  http->Route(
      "/metrics",
      [this](const HttpRequest& request) {
        HttpResponse response = HttpResponse::Text(200, Serialize());
        response.content_type = "text/plain; version=0.0.4; charset=utf-8";
        return response;
      },
      [](const HttpRequest& request) -> std::optional<HttpResponse> {
        if (request.method == "GET" || request.method == "HEAD") return std::nullopt;
        HttpResponse response = HttpResponse::Text(405, "/metrics: use GET\n");
        response.headers.emplace_back("Allow", "GET, HEAD");
        return response;
      },
      /*exact=*/true);
  absl::Status started = http->Start();
  if (!started.ok()) return absl::UnavailableError(absl::StrCat("metrics: ", started.message()));
  port_ = http->port();
  http_ = std::move(http);
  return absl::OkStatus();
}

std::string ServerMetrics::Serialize() const {
  {
    std::lock_guard<std::mutex> lock(hook_mu_);
    if (scrape_hook_) scrape_hook_();
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void ServerMetrics::SetScrapeHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(hook_mu_);
  scrape_hook_ = std::move(hook);
}

void ServerMetrics::HttpServed(const HttpServerStats& stats) {
  std::lock_guard<std::mutex> lock(http_mu_);
  http_held_.Add({{"kind", "body"}}).Set(static_cast<double>(stats.body_bytes_held));
  http_held_.Add({{"kind", "answer"}}).Set(static_cast<double>(stats.answer_bytes_held));
  http_connections_.Add({{"kind", "open"}}).Set(stats.open_connections);
  http_connections_.Add({{"kind", "probe_slot"}}).Set(stats.reserved_connections);
  http_queued_.Add({}).Set(stats.queued_requests);
  const HttpServerStats& last = http_last_;
  auto grow = [](prometheus::Family<prometheus::Counter>& family, const char* reason, uint64_t now,
                 uint64_t before) {
    family.Add({{"reason", reason}})
        .Increment(static_cast<double>(now >= before ? now - before : 0));
  };
  grow(http_refused_, "body_budget", stats.body_budget_refused, last.body_budget_refused);
  grow(http_refused_, "answer_budget", stats.answer_budget_refused, last.answer_budget_refused);
  grow(http_refused_, "headers_too_large", stats.headers_too_large, last.headers_too_large);
  grow(http_refused_, "over_cap", stats.over_cap_refused, last.over_cap_refused);
  grow(http_refused_, "over_cap_dropped", stats.over_cap_dropped, last.over_cap_dropped);
  grow(http_cut_, "header_timeout", stats.header_timeouts, last.header_timeouts);
  grow(http_cut_, "body_timeout", stats.body_timeouts, last.body_timeouts);
  grow(http_cut_, "body_rate", stats.body_rate_cuts, last.body_rate_cuts);
  grow(http_cut_, "write_timeout", stats.write_timeouts, last.write_timeouts);
  grow(http_cut_, "write_rate", stats.write_rate_cuts, last.write_rate_cuts);
  grow(http_cut_, "idle_at_cap", stats.idle_closed_for_new, last.idle_closed_for_new);
  http_probes_.Add({}).Increment(
      static_cast<double>(stats.over_cap_answered >= last.over_cap_answered
                              ? stats.over_cap_answered - last.over_cap_answered
                              : 0));
  http_clients_gone_.Add({}).Increment(static_cast<double>(
      stats.clients_gone >= last.clients_gone ? stats.clients_gone - last.clients_gone : 0));
  http_last_ = stats;
}

void ServerMetrics::RpcStarted(const std::string& service, const std::string& method,
                               const std::string& type) {
  started_.Add({{"grpc_service", service}, {"grpc_method", method}, {"grpc_type", type}})
      .Increment();
}

void ServerMetrics::RpcHandled(const std::string& service, const std::string& method,
                               const std::string& type, const std::string& code, double seconds) {
  handled_
      .Add({{"grpc_service", service},
            {"grpc_method", method},
            {"grpc_type", type},
            {"grpc_code", code}})
      .Increment();
  handling_seconds_
      .Add({{"grpc_service", service}, {"grpc_method", method}, {"grpc_type", type}},
           LatencyBuckets())
      .Observe(seconds);
}

void ServerMetrics::BatchComputed(const std::string& model, int64_t version,
                                  const std::string& method, int64_t rows, double compute_seconds) {
  statistics_.RecordBatch(model, version, rows, absl::Seconds(compute_seconds));
  batch_rows_.Add({{"model", model}, {"method", method}}, RowBuckets())
      .Observe(static_cast<double>(rows));
  compute_seconds_.Add({{"model", model}, {"method", method}}, LatencyBuckets())
      .Observe(compute_seconds);
  rows_total_.Add({{"model", model}, {"method", method}}).Increment(static_cast<double>(rows));
}

void ServerMetrics::Dequeued(const std::string& model, int64_t version, double queue_seconds) {
  statistics_.RecordQueue(model, version, absl::Seconds(queue_seconds));
  queue_seconds_.Add({{"model", model}}, LatencyBuckets()).Observe(queue_seconds);
}

void ServerMetrics::RequestEnded(const std::string& model, int64_t version, bool ok,
                                 double seconds) {
  statistics_.RecordRequest(model, version, ok, absl::Seconds(seconds), absl::Now());
}

void ServerMetrics::InputDecoded(const std::string& model, int64_t version, double seconds) {
  statistics_.RecordInput(model, version, absl::Seconds(seconds));
}

void ServerMetrics::OutputWritten(const std::string& model, int64_t version, double seconds) {
  statistics_.RecordOutput(model, version, absl::Seconds(seconds));
}

void ServerMetrics::QueueRows(const std::string& model, int64_t rows) {
  queue_rows_.Add({{"model", model}}).Set(static_cast<double>(rows));
}

void ServerMetrics::ModelReady(const std::string& model, int64_t version, const std::string& kind,
                               uint64_t bytes) {
  statistics_.Loaded(model, version);
  const std::string v = absl::StrCat(version);
  std::string previous_kind;
  {
    std::lock_guard<std::mutex> lock(model_mu_);
    previous_kind = std::exchange(model_kinds_[{model, version}], kind);
  }
  // A version loaded again from a changed file may be of another kind.
  if (!previous_kind.empty() && previous_kind != kind) {
    model_info_.Remove(
        &model_info_.Add({{"model", model}, {"version", v}, {"kind", previous_kind}}));
  }
  model_info_.Add({{"model", model}, {"version", v}, {"kind", kind}}).Set(1);
  model_bytes_.Add({{"model", model}, {"version", v}}).Set(static_cast<double>(bytes));
}

void ServerMetrics::ModelUnloaded(const std::string& model, int64_t version) {
  statistics_.Forget(model, version);
  const std::string v = absl::StrCat(version);
  std::string kind;
  {
    std::lock_guard<std::mutex> lock(model_mu_);
    auto it = model_kinds_.find({model, version});
    if (it == model_kinds_.end()) return;
    kind = it->second;
    model_kinds_.erase(it);
  }
  model_info_.Remove(&model_info_.Add({{"model", model}, {"version", v}, {"kind", kind}}));
  model_bytes_.Remove(&model_bytes_.Add({{"model", model}, {"version", v}}));
}

void ServerMetrics::ModelLoadFailed(const std::string& model) {
  load_failures_.Add({{"model", model}}).Increment();
}

void ServerMetrics::ModelSeen(const std::string& model) {
  load_failures_.Add({{"model", model}});
  queue_rows_.Add({{"model", model}});
}

void ServerMetrics::RpcKnown(const std::string& service, const std::string& method,
                             const std::string& type, const std::string& code) {
  started_.Add({{"grpc_service", service}, {"grpc_method", method}, {"grpc_type", type}});
  handled_.Add({{"grpc_service", service},
                {"grpc_method", method},
                {"grpc_type", type},
                {"grpc_code", code}});
  handling_seconds_.Add({{"grpc_service", service}, {"grpc_method", method}, {"grpc_type", type}},
                        LatencyBuckets());
}

}  // namespace invariant::server
