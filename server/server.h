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
// and poller. Flags are parsed in main.cc only; the options and their checks
// are in server_options.h, what each subsystem is given in server_builders.h
// and server_grpc.h.
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
#include "server/access_log/access_log.h"
#include "server/admission/inflight_budget.h"
#include "server/admission/model_memory_budget.h"
#include "server/admission/worker_queue.h"
#include "server/batching/batcher.h"
#include "server/common/auth.h"
#include "server/grpc/access_log_interceptor.h"
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
#include "server/lifecycle/version_policy.h"
#include "server/metrics/metrics.h"
#include "server/rest/rest_service.h"
#include "server/server_options.h"

namespace invariant::server {

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
  // The assembly, in order: each step builds one subsystem from options_
  // (and the ones built before it; server_builders.h, server_grpc.h).
  absl::Status Init();
  // The metrics, and their /metrics endpoint unless metrics_port is -1.
  absl::Status BuildMetrics();
  // The request log, when --access_log is not off.
  absl::Status BuildAccessLog();
  // The registry, with its first scan of the models directory done.
  absl::Status BuildRegistry(VersionPolicy policy);
  // The memory and audio budgets and the clip decoders.
  void BuildAdmission();
  // The transport-free handlers: features, inference, model pages, repository.
  void BuildHandlers();
  // The access plan (its warnings logged) and the gRPC services over the handlers.
  void BuildGrpcServices();
  // The gRPC server, started on its port.
  absl::Status StartGrpc(std::shared_ptr<GrpcPortCredentials> credentials);
  // The REST front end (rest_service.h), started on http_port.
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
  // The request log (null: off) and its gRPC calls' records; they outlive
  // every front end (declared before them).
  std::unique_ptr<AccessLog> access_log_;
  GrpcCallRecords call_records_;
  // What loaded versions hold (--max_model_bytes); outlives the registry,
  // whose versions give their reservations back to it.
  std::unique_ptr<ModelMemoryBudget> model_memory_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<InflightBudget> memory_budget_;
  std::unique_ptr<InflightBudget> audio_budget_;
  std::unique_ptr<InflightBudget> image_budget_;
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
