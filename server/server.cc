#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/server_builders.h"
#include "server/server_grpc.h"

#ifndef INVARIANT_VERSION
#define INVARIANT_VERSION "dev"
#endif

namespace invariant::server {
namespace {

constexpr char kFeatureServiceName[] = "invariant.v1.FeatureService";

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  std::unique_ptr<Server> server(new Server(options));
  RETURN_IF_ERROR(server->Init());
  return server;
}

absl::Status Server::Init() {
  ASSIGN_OR_RETURN(VersionPolicy policy, ParseVersionPolicy(options_.version_policy));
  ASSIGN_OR_RETURN(std::shared_ptr<GrpcPortCredentials> credentials, MakeCredentials(options_));
  RETURN_IF_ERROR(BuildMetrics());
  RETURN_IF_ERROR(BuildAccessLog());
  RETURN_IF_ERROR(BuildRegistry(policy));
  batcher_ = std::make_unique<Batcher>(BatcherOptionsFor(options_, metrics_.get()));
  BuildAdmission();
  BuildHandlers();
  BuildGrpcServices();
  RETURN_IF_ERROR(StartGrpc(std::move(credentials)));
  if (options_.http_port >= 0) RETURN_IF_ERROR(StartHttp());
  UpdateHealth();
  if (options_.poll_seconds > 0) poller_ = std::thread([this] { PollLoop(); });
  trimmer_ = std::thread([this] { TrimLoop(); });
  return absl::OkStatus();
}

absl::Status Server::BuildMetrics() {
  metrics_ = std::make_unique<ServerMetrics>(INVARIANT_VERSION);
  // Every scrape reads the REST front end's counters (once it exists);
  // Shutdown clears the hook before http_ and its mutex go.
  metrics_->SetScrapeHook([this] {
    std::lock_guard<std::mutex> lock(http_mu_);
    if (http_ != nullptr) metrics_->HttpServed(http_->stats());
  });
  if (options_.metrics_port < 0) return absl::OkStatus();
  return metrics_->Expose(options_.metrics_host.empty() ? options_.host : options_.metrics_host,
                          options_.metrics_port);
}

absl::Status Server::BuildAccessLog() {
  AccessLogOptions log;
  RETURN_IF_ERROR(ParseAccessLogMode(options_.access_log, &log));
  if (log.mode == AccessLogMode::kOff) return absl::OkStatus();
  log.path = options_.access_log_file;
  log.max_queued_lines = options_.access_log_queue_lines;
  ServerMetrics* metrics = metrics_.get();
  log.on_written = [metrics](int64_t lines) { metrics->AccessLogLines("written", lines); };
  log.on_dropped = [metrics](int64_t lines) { metrics->AccessLogLines("dropped", lines); };
  ASSIGN_OR_RETURN(access_log_, AccessLog::Open(std::move(log)));
  return absl::OkStatus();
}

absl::Status Server::BuildRegistry(VersionPolicy policy) {
  model_memory_ = std::make_unique<ModelMemoryBudget>(options_.max_model_bytes);
  registry_ = std::make_unique<Registry>(RegistryOptionsFor(options_, policy),
                                         ModelLoaderFor(options_, model_memory_.get()),
                                         RegistryObserversFor(metrics_.get()));
  RETURN_IF_ERROR(CheckStartupModelsExist(options_));
  registry_->Rescan();
  NoteModels();
  return absl::OkStatus();
}

void Server::BuildAdmission() {
  memory_budget_ =
      std::make_unique<InflightBudget>(MemoryBudgetOptionsFor(options_, metrics_.get()));
  audio_budget_ = std::make_unique<InflightBudget>(AudioBudgetOptionsFor(options_, metrics_.get()));
  image_budget_ = std::make_unique<InflightBudget>(ImageBudgetOptionsFor(options_, metrics_.get()));
  // Decoding yields the CPU to gRPC's and the HTTP server's threads (nice
  // +10): a flood of large clips cannot delay health and small calls.
  decoders_ = std::make_unique<WorkerQueue>(options_.decode_threads, options_.testonly_start_paused,
                                            kDecoderNice);
}

void Server::BuildHandlers() {
  ServerMetrics* metrics = metrics_.get();
  // A request larger than the queue could never be accepted: refuse it as
  // INVALID_ARGUMENT (not the retryable RESOURCE_EXHAUSTED).
  handler_ = std::make_unique<FeatureHandler>(
      registry_.get(), batcher_.get(), std::min(options_.max_request_rows, options_.max_queue_rows),
      options_.max_message_bytes,
      InputLimits{options_.max_audio_clip_seconds, options_.max_image_pixels},
      HandlerAdmissionFor(memory_budget_.get(), audio_budget_.get(), image_budget_.get(),
                          decoders_.get(), metrics),
      HandlerObserversFor(metrics));
  inference_handler_ = std::make_unique<InferenceHandler>(
      registry_.get(), handler_.get(), INVARIANT_VERSION,
      [this] {
        std::lock_guard<std::mutex> lock(mu_);
        return !shutting_down_ && registry_->Serving();
      },
      options_.max_message_bytes, std::vector<std::string>{"model_repository"},
      [metrics](const std::string& name, int64_t version, inference::ModelStatistics* out) {
        metrics->statistics().Fill(name, version, out);
      });
  model_pages_ = std::make_unique<ModelPages>(registry_.get(), options_.models_dir);
  // An unload answers once the model's calls in flight have ended, waiting
  // at most as long as a shutdown would for them.
  repository_handler_ = std::make_unique<RepositoryHandler>(
      registry_.get(),
      [this] {
        NoteModels();
        UpdateHealth();
      },
      absl::Seconds(options_.drain_seconds));
}

void Server::BuildGrpcServices() {
  const AccessPlan plan = PlanAccess(AccessInputsFor(options_));
  admin_access_ = plan.admin;
  for (const std::string& warning : plan.warnings) LogLine(warning);
  GrpcCallRecords* records = access_log_ != nullptr ? &call_records_ : nullptr;
  feature_service_ = std::make_unique<FeatureServiceImpl>(handler_.get(), records);
  admin_service_ = std::make_unique<ModelAdminImpl>(
      plan.admin, options_.admin_token, [this] { return Reload(); }, registry_.get());
  inference_service_ =
      std::make_unique<InferenceServiceImpl>(inference_handler_.get(), repository_handler_.get(),
                                             plan.admin, options_.admin_token, records);
}

absl::Status Server::StartGrpc(std::shared_ptr<GrpcPortCredentials> credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  // Reflection serves descriptors from the generated pool; gRPC's health
  // service has none there, so pull grpc.health.v1 in (listed AND described).
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::ServerBuilder builder;
  ConfigureGrpcPort(options_, credentials, &grpc_port_, &builder);
  builder.RegisterService(feature_service_.get());
  builder.RegisterService(inference_service_.get());
  if (!options_.data_token.empty()) {
    // Checked by gRPC core on the request headers, before a message is read
    // (data_auth.h). Fail closed: every service not listed open needs it.
    credentials->RequireDataToken(
        std::make_shared<DataTokenGate>(DataTokenPolicyFor(options_.data_token, metrics_.get())));
  }
  builder.RegisterService(admin_service_.get());
  const std::vector<std::string> served = ServedGrpcServices();
  reflection_v1_ = std::make_unique<ReflectionV1Service>(served);
  builder.RegisterService(reflection_v1_.get());
  builder.experimental().SetInterceptorCreators(
      GrpcInterceptors(served, metrics_.get(), access_log_.get(), &call_records_));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("port: cannot listen on ", options_.host, ":", options_.port));
  }
  return absl::OkStatus();
}

absl::Status Server::StartHttp() {
  rest_service_ = std::make_unique<RestInferenceService>(
      inference_handler_.get(), metrics_.get(), absl::Seconds(options_.http_timeout_seconds),
      options_.data_token, options_.http_max_response_bytes,
      RestExtensions{repository_handler_.get(), admin_access_, options_.admin_token,
                     model_pages_.get(), access_log_.get()});
  {
    std::lock_guard<std::mutex> lock(http_mu_);
    http_ = std::make_unique<HttpServer>(HttpServerOptionsFor(options_));
  }
  rest_service_->Register(http_.get());
  if (absl::Status s = http_->Start(); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("http_port: ", s.message()));
  }
  return absl::OkStatus();
}

void Server::UpdateHealth() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_ || server_ == nullptr) return;
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  health->SetServingStatus("", true);
  health->SetServingStatus(kFeatureServiceName, registry_->Serving());
  for (const auto& [name, versions] : registry_->Snapshot()) {
    health->SetServingStatus(absl::StrCat(kFeatureServiceName, "/", name),
                             registry_->ModelReady(name));
  }
}

void Server::NoteModels() {
  for (const auto& [name, versions] : registry_->Snapshot()) metrics_->ModelSeen(name);
}

ScanReport Server::Reload() {
  const ScanReport report = registry_->Rescan();
  NoteModels();
  UpdateHealth();
  return report;
}

void Server::PollLoop() {
  const auto period = std::chrono::microseconds(static_cast<int64_t>(options_.poll_seconds * 1e6));
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    if (cv_.wait_for(lock, period, [this] { return shutting_down_; })) break;
    lock.unlock();
    Reload();
    lock.lock();
  }
}

namespace {

// The process's resident memory, from /proc/self/statm (0 when unreadable).
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

void Server::TrimLoop() {
  // Trimming walks the heap: only while no admitted request is in flight,
  // and only when the resident memory grew by this much since the last trim
  // (a burst, whatever held it: requests, answers, connections, gRPC).
  constexpr int64_t kGrowthBytes = int64_t{32} << 20;
  int64_t floor = ResidentBytes();
  std::unique_lock<std::mutex> lock(mu_);
  while (!shutting_down_) {
    if (cv_.wait_for(lock, std::chrono::seconds(1), [this] { return shutting_down_; })) break;
    if (memory_budget_->in_flight() > 0 || audio_budget_->in_flight() > 0 ||
        image_budget_->in_flight() > 0) {
      continue;
    }
    const int64_t resident = ResidentBytes();
    floor = std::min(floor, resident);
    if (resident < floor + kGrowthBytes) continue;
    lock.unlock();
    malloc_trim(0);
    floor = ResidentBytes();
    lock.lock();
  }
}

void Server::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    shutting_down_ = true;
    if (server_ != nullptr) server_->GetHealthCheckService()->Shutdown();
  }
  cv_.notify_all();
  if (poller_.joinable()) poller_.join();
  if (trimmer_.joinable()) trimmer_.join();
  // Draining lets every queued batch run, even one held by
  // --testonly_start_paused: the calls it serves are the ones drained.
  if (batcher_ != nullptr) batcher_->Resume();
  if (decoders_ != nullptr) decoders_->Resume();
  // Unloads waiting for their calls answer now; later loads are refused.
  if (repository_handler_ != nullptr) repository_handler_->Stop();
  if (server_ != nullptr) {
    server_->Shutdown(
        std::chrono::system_clock::now() +
        std::chrono::microseconds(static_cast<int64_t>(options_.drain_seconds * 1e6)));
    server_->Wait();
  }
  // In-flight REST calls finish (the batcher still runs) before it stops.
  std::unique_ptr<HttpServer> http;
  {
    std::lock_guard<std::mutex> lock(http_mu_);  // a scrape reads http_ under it
    http = std::move(http_);
  }
  http.reset();
  // The load still running ends (its answer, if REST, is dropped) and the
  // repository's threads stop, before the services they answer for go.
  repository_handler_.reset();
  // Clip decodings still queued run (a held one too) and hand their rows
  // to the batcher, which computes them as it stops.
  decoders_.reset();
  if (batcher_ != nullptr) batcher_->Stop();
  if (metrics_ != nullptr) metrics_->SetScrapeHook(nullptr);
}

Server::~Server() { Shutdown(); }

}  // namespace invariant::server
