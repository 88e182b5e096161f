// server.h: invariant-server assembled — registry, batcher, services, metrics.
//
// Server::Start validates ServerOptions, exposes the metrics, scans the models
// directory once (so the server is ready when Start returns if every model
// loads), starts the gRPC server (FeatureService, ModelAdmin, grpc.health.v1,
// reflection, inference.GRPCInferenceService), the HTTP/JSON Open Inference
// Protocol when http_port >= 0, and the poller thread. Health: "" is SERVING
// while the server runs (liveness); "invariant.v1.FeatureService" is SERVING
// while some model is ready and every model that has ever been ready still has
// a ready version (readiness: a model that never loaded does not take the
// replica out); "invariant.v1.FeatureService/<model>" is SERVING while that
// model has a ready version (NOT_FOUND for a model never seen). Access
// (auth.h, data_auth.h): the admin and data tokens, ModelAdmin disabled on a
// non-loopback bind without an admin token (unless insecure_admin), warnings
// logged at startup. Bundles that resolve outside models_dir (symlinks) are
// refused as failed loads. Shutdown() flips all to NOT_SERVING, lets in-flight
// calls finish within drain_seconds (then cancels them), and stops the batcher
// and poller. Flags are parsed in main.cc only.
#ifndef INVARIANT_SERVER_SERVER_H_
#define INVARIANT_SERVER_SERVER_H_

#include <grpcpp/server.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "server/admission/inflight_budget.h"
#include "server/admission/worker_queue.h"
#include "server/batching/batcher.h"
#include "server/common/auth.h"
#include "server/grpc/admin_service.h"
#include "server/grpc/data_auth.h"
#include "server/grpc/feature_service.h"
#include "server/grpc/inference_service.h"
#include "server/grpc/reflection_v1.h"
#include "server/handlers/feature_handler.h"
#include "server/handlers/inference_handler.h"
#include "server/handlers/model_metadata.h"
#include "server/handlers/model_pages.h"
#include "server/handlers/repository_handler.h"
#include "server/metrics/metrics.h"
#include "server/rest/rest_service.h"

namespace invariant::server {

// Every knob of the server, with its default (the flag of the same name in main.cc).
struct ServerOptions {
  std::string models_dir;                 // MODELS/<name>/<version>/model.bundle; required
  std::string host = "0.0.0.0";           // gRPC and metrics bind address
  int port = 8500;                        // gRPC port; 0 = pick a free one
  int metrics_port = 9102;                // Prometheus /metrics port; 0 = pick; -1 = off
  std::string metrics_host;               // metrics bind address; empty = `host`
  std::string version_policy = "latest";  // latest | latest:N | all
  double poll_seconds = 30;               // rescan period; <= 0 = only on demand
  // "poll": every model directory is served; "explicit": only `load_models`
  // and the models loaded by RepositoryModelLoad (until unloaded).
  std::string model_control = "poll";
  std::vector<std::string> load_models;  // explicit: served from the start
  double removal_grace_seconds = 30;     // a removed version serves this long
  bool batching = true;                  // false = compute each request inline
  int64_t max_batch_size = 64;           // rows per compute call (1 = batching off)
  int64_t max_batch_delay_us = 500;      // oldest request's wait for a fuller batch, while busy
  int64_t max_queue_rows = 65536;        // queued rows per model before RESOURCE_EXHAUSTED
  int64_t max_queue_bytes = 256 << 20;   // queued input+output bytes, all models, likewise
  int64_t max_request_rows = 65536;      // rows per request (capped at max_queue_rows)
  bool batch_wait_when_idle = false;     // true: wait for max_batch_delay even when idle
  int threads = 2;                       // batches computed at once (each on the compute pool)
  bool testonly_start_paused =
      false;  // tests: no batch starts until ResumeBatcherForTesting or Shutdown
  int max_message_bytes = 64 << 20;  // gRPC receive/send limit
  // gRPC's ResourceQuota: memory its transports may hold; 0 = gRPC's default.
  int64_t grpc_memory_quota_bytes = int64_t{1} << 30;
  std::string tls_cert_file;  // PEM; with tls_key_file turns TLS on
  std::string tls_key_file;
  std::string tls_client_ca_file;         // PEM; requires and verifies client certificates (mTLS)
  std::string admin_token;                // empty = no admin token (see insecure_admin)
  bool insecure_admin = false;            // no admin token on a non-loopback host: open, not off
  std::string data_token;                 // empty = FeatureService/inference unauthenticated
  double drain_seconds = 10;              // graceful shutdown budget
  double max_connection_age_seconds = 0;  // > 0: clients reconnect (rebalance) after this
  // Open Inference Protocol over HTTP/JSON (rest_service.h), on a port of its own.
  int http_port = -1;                           // 0 = pick a free one; -1 = off
  std::string http_host;                        // HTTP bind address; empty = `host`
  int64_t http_max_body_bytes = 16 << 20;       // larger request bodies are refused with 413
  int http_threads = 8;                         // HTTP handler threads (an infer call holds one)
  double http_timeout_seconds = 30;             // deadline of a REST infer call
  int http_max_connections = 10000;             // open HTTP connections; more get 503
  int64_t http_max_inflight_bytes = 256 << 20;  // request bodies held at once; more get 503
  // Answers written or waiting for a slow reader, at once; while spent, new
  // requests get 503 before their body is read. 0 = no budget.
  int64_t http_max_inflight_answer_bytes = int64_t{256} << 20;
  // After http_rate_grace_seconds, a body must arrive and an answer be read
  // at these rates (bytes/s), else the connection is cut. 0 = off.
  int64_t http_min_body_bytes_per_second = 8 << 10;
  int64_t http_min_write_bytes_per_second = 32 << 10;
  double http_rate_grace_seconds = 5;
  int http_probe_slots = 64;                // connections past the cap read for a health probe
  double http_idle_timeout_seconds = 60;    // keep-alive wait for a request's first byte
  double http_header_timeout_seconds = 10;  // first byte to the end of the headers, in all
  double http_body_timeout_seconds = 30;    // the whole body, in all; also each answer's write
  int64_t warmup_rows = 8;             // rows a new version answers before it is ready; 0 = off
  double max_audio_clip_seconds = 30;  // longest clip a model of sound is sent (and the model's)
  // Admission by cost (server/admission/, feature_handler.h): bytes requests
  // hold from admission to their answer (rows, outputs, encoded answer), all
  // calls; one connection's share; seconds of audio queued for or in
  // decoding (a clip costs its length plus the model's clip_seconds); the
  // threads that decode clips (off gRPC's and HTTP's threads). 0 = no limit.
  int64_t max_inflight_bytes = int64_t{512} << 20;
  int64_t max_connection_inflight_bytes = int64_t{256} << 20;
  int64_t max_decode_audio_seconds = 3600;
  int decode_threads = 1;
  int64_t http_max_response_bytes = 64 << 20;  // one REST answer, encoded; 0 = no limit
};

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();  // Shutdown()

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_->port(); }
  // The bound port of the HTTP/JSON front end, or -1 when it is off.
  int http_port() const { return http_ != nullptr ? http_->port() : -1; }
  // The server's metrics (e.g. for in-process benchmarks).
  const ServerMetrics& metrics() const { return *metrics_; }

  // Rescans the models directory now (SIGHUP, ModelAdmin.ReloadModels, poller).
  ScanReport Reload();
  // Graceful shutdown; idempotent.
  void Shutdown();
  // Tests (with testonly_start_paused): lets the held clip decodings and
  // batches start.
  void ResumeBatcherForTesting() {
    decoders_->Resume();
    batcher_->Resume();
  }

 private:
  explicit Server(const ServerOptions& options) : options_(options) {}
  absl::Status Init();
  absl::Status StartHttp();
  void UpdateHealth();
  // Starts the per-model metric series of every model seen at 0.
  void NoteModels();
  void PollLoop();
  // Gives freed heap back to the OS (malloc_trim) once no admitted request
  // is in flight and the resident memory grew by 32 MiB since the last
  // trim, so RSS falls back after a spike.
  void TrimLoop();

  const ServerOptions options_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<InflightBudget> memory_budget_;
  std::unique_ptr<InflightBudget> audio_budget_;
  std::unique_ptr<WorkerQueue> decoders_;
  std::unique_ptr<FeatureHandler> handler_;
  std::unique_ptr<FeatureServiceImpl> feature_service_;
  std::unique_ptr<ModelAdminImpl> admin_service_;
  std::unique_ptr<InferenceHandler> inference_handler_;
  std::unique_ptr<RepositoryHandler> repository_handler_;
  std::unique_ptr<ModelPages> model_pages_;
  AdminAccess admin_access_ = AdminAccess::kDisabled;  // ModelAdmin and the repository extension
  std::unique_ptr<InferenceServiceImpl> inference_service_;
  std::unique_ptr<RestInferenceService> rest_service_;
  std::mutex http_mu_;                // http_ for the metrics' scrape hook
  std::unique_ptr<HttpServer> http_;  // after rest_service_: destroyed (stopped) first
  std::unique_ptr<ReflectionV1Service> reflection_v1_;
  std::unique_ptr<grpc::Server> server_;
  int grpc_port_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool shutting_down_ = false;
  bool shut_down_ = false;
  std::thread poller_;
  std::thread trimmer_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_SERVER_H_
