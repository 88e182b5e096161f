#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/error_text.h"
#include "core/base/file.h"
#include "core/base/status_macros.h"
#include "core/model/featurizer_factory.h"
#include "core/model/repository.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/grpc/metrics_interceptor.h"
#include "server/grpc/parse_error_interceptor.h"
#include "server/handlers/model_warmup.h"

#ifndef INVARIANT_VERSION
#define INVARIANT_VERSION "dev"
#endif

namespace invariant::server {
namespace {

constexpr char kFeatureServiceName[] = "invariant.v1.FeatureService";

void Log(const std::string& line) { std::cerr << "invariant-server: " << line << std::endl; }

absl::StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::optional<std::string> text = ReadWholeFile(path);
  if (!text.has_value()) {
    return absl::NotFoundError(absl::StrCat(flag, ": cannot read '", path, "'"));
  }
  return *std::move(text);
}

// The gRPC port's credentials (data_auth.h): Init adds the data token to
// them (RequireDataToken) once the metrics exist.
absl::StatusOr<std::shared_ptr<GrpcPortCredentials>> MakeCredentials(const ServerOptions& o) {
  if (o.tls_cert_file.empty()) return MakeGrpcPortCredentials(std::nullopt);
  GrpcPortTls tls;
  ASSIGN_OR_RETURN(tls.cert_chain_pem, ReadFile("tls_cert", o.tls_cert_file));
  ASSIGN_OR_RETURN(tls.private_key_pem, ReadFile("tls_key", o.tls_key_file));
  if (!o.tls_client_ca_file.empty()) {
    ASSIGN_OR_RETURN(tls.client_ca_pem, ReadFile("tls_client_ca", o.tls_client_ca_file));
  }
  return MakeGrpcPortCredentials(tls);
}

// How much lower the clip decoders' CPU priority is than the transport's.
constexpr int kDecoderNice = 10;

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

  metrics_ = std::make_unique<ServerMetrics>(INVARIANT_VERSION);
  // Every scrape reads the REST front end's counters (once it exists);
  // Shutdown clears the hook before http_ and its mutex go.
  metrics_->SetScrapeHook([this] {
    std::lock_guard<std::mutex> lock(http_mu_);
    if (http_ != nullptr) metrics_->HttpServed(http_->stats());
  });
  if (options_.metrics_port >= 0) {
    RETURN_IF_ERROR(
        metrics_->Expose(options_.metrics_host.empty() ? options_.host : options_.metrics_host,
                         options_.metrics_port));
  }

  RegistryOptions registry_options;
  registry_options.root = options_.models_dir;
  registry_options.policy = policy;
  registry_options.removal_grace = absl::Seconds(options_.removal_grace_seconds);
  registry_options.explicit_control = options_.model_control == "explicit";
  registry_options.startup_models = options_.load_models;
  Registry::Observers observers;
  ServerMetrics* metrics = metrics_.get();
  observers.on_ready = [metrics](const std::string& name, int64_t version, const Model& model) {
    Log(absl::StrCat("model '", name, "' version ", version, " ready (",
                     EncoderKindName(model.manifest().encoder()), ", ", model.bytes(), " bytes)"));
    metrics->ModelReady(name, version, EncoderKindName(model.manifest().encoder()), model.bytes());
  };
  observers.on_failed = [metrics](const std::string& name, int64_t version,
                                  const absl::Status& error) {
    Log(absl::StrCat("model '", name, "' version ", version,
                     " failed to load: ", error.ToString()));
    metrics->ModelLoadFailed(name);
  };
  observers.on_unloaded = [metrics](const std::string& name, int64_t version) {
    Log(absl::StrCat("model '", name, "' version ", version, " unloaded"));
    metrics->ModelUnloaded(name, version);
  };
  // A bundle (or version directory) that is a symlink out of the models root
  // is refused: its failure (with the resolved path) goes to the log and to
  // ModelAdmin, never to the data path. A loaded version answers warmup rows
  // before it is marked ready.
  auto load = [root = options_.models_dir, warmup_rows = options_.warmup_rows](
                  const std::string& path) -> absl::StatusOr<std::shared_ptr<const Model>> {
    ASSIGN_OR_RETURN(std::string resolved, ResolveInsideRoot(root, path));
    absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(resolved);
    if (!model.ok()) return model;
    RETURN_IF_ERROR(WarmUp(resolved, **model, warmup_rows));
    return model;
  };
  registry_ = std::make_unique<Registry>(registry_options, std::move(load), observers);
  RETURN_IF_ERROR(CheckStartupModelsExist(options_));
  registry_->Rescan();
  NoteModels();

  BatcherOptions batcher_options;
  batcher_options.enabled = options_.batching && options_.max_batch_size > 1;
  batcher_options.max_batch_rows = options_.max_batch_size;
  batcher_options.max_batch_delay = absl::Microseconds(options_.max_batch_delay_us);
  batcher_options.max_queue_rows = options_.max_queue_rows;
  batcher_options.max_queue_bytes = options_.max_queue_bytes;
  batcher_options.max_concurrent_batches = options_.threads;
  batcher_options.wait_when_idle = options_.batch_wait_when_idle;
  batcher_options.start_paused = options_.testonly_start_paused;
  // One call records both the Prometheus series and the per-version
  // statistics (metrics.h), so the two never disagree.
  batcher_options.observers.on_batch =
      [metrics](const std::string& model, int64_t version, const std::string& method, int64_t rows,
                double seconds) { metrics->BatchComputed(model, version, method, rows, seconds); };
  batcher_options.observers.on_dequeue = [metrics](const std::string& model, int64_t version,
                                                   double seconds) {
    metrics->Dequeued(model, version, seconds);
  };
  batcher_options.observers.on_queue_rows = [metrics](const std::string& model, int64_t rows) {
    metrics->QueueRows(model, rows);
  };
  batcher_options.observers.on_abandoned = [metrics](const std::string&,
                                                     const absl::Status& status) {
    metrics->Abandoned("queue", status);
  };
  batcher_ = std::make_unique<Batcher>(batcher_options);
  InflightBudgetOptions memory_options;
  memory_options.name = "max_inflight_bytes";
  memory_options.limit = options_.max_inflight_bytes;
  memory_options.per_key_limit = options_.max_connection_inflight_bytes;
  memory_options.on_refused = [metrics](const char* reason) {
    metrics->AdmissionRefused("memory", reason);
  };
  memory_options.on_change = [metrics](int64_t bytes) { metrics->Inflight("memory", bytes); };
  memory_budget_ = std::make_unique<InflightBudget>(memory_options);
  InflightBudgetOptions audio_options;
  audio_options.name = "max_decode_audio_seconds";
  audio_options.unit = "seconds of audio";
  audio_options.limit = options_.max_decode_audio_seconds;
  // One connection may hold half of the decoding queue.
  audio_options.per_key_limit = std::max<int64_t>(1, options_.max_decode_audio_seconds / 2);
  audio_options.on_refused = [metrics](const char* reason) {
    metrics->AdmissionRefused("audio", reason);
  };
  audio_options.on_change = [metrics](int64_t seconds) { metrics->Inflight("audio", seconds); };
  audio_budget_ = std::make_unique<InflightBudget>(audio_options);
  // Decoding yields the CPU to gRPC's and the HTTP server's threads (nice
  // +10): a flood of large clips cannot delay health and small calls.
  decoders_ = std::make_unique<WorkerQueue>(options_.decode_threads, options_.testonly_start_paused,
                                            kDecoderNice);
  HandlerAdmission admission;
  admission.memory = memory_budget_.get();
  admission.audio = audio_budget_.get();
  admission.decoders = decoders_.get();
  admission.on_abandoned = [metrics](const char* stage, const absl::Status& status) {
    metrics->Abandoned(stage, status);
  };
  HandlerObservers handler_observers;
  handler_observers.on_request = [metrics](const std::string& model, int64_t version, bool ok,
                                           double seconds) {
    metrics->RequestEnded(model, version, ok, seconds);
  };
  handler_observers.on_input = [metrics](const std::string& model, int64_t version,
                                         double seconds) {
    metrics->InputDecoded(model, version, seconds);
  };
  handler_observers.on_output = [metrics](const std::string& model, int64_t version,
                                          double seconds) {
    metrics->OutputWritten(model, version, seconds);
  };
  // A request larger than the queue could never be accepted: refuse it as
  // INVALID_ARGUMENT (not the retryable RESOURCE_EXHAUSTED).
  handler_ = std::make_unique<FeatureHandler>(
      registry_.get(), batcher_.get(), std::min(options_.max_request_rows, options_.max_queue_rows),
      options_.max_message_bytes, options_.max_audio_clip_seconds, std::move(admission),
      std::move(handler_observers));
  feature_service_ = std::make_unique<FeatureServiceImpl>(handler_.get());
  AccessInputs access;
  access.host = options_.host;
  access.tls = !options_.tls_cert_file.empty();
  access.has_admin_token = !options_.admin_token.empty();
  access.has_data_token = !options_.data_token.empty();
  access.insecure_admin = options_.insecure_admin;
  const AccessPlan plan = PlanAccess(access);
  admin_access_ = plan.admin;
  for (const std::string& warning : plan.warnings) Log(warning);
  admin_service_ = std::make_unique<ModelAdminImpl>(
      plan.admin, options_.admin_token, [this] { return Reload(); }, registry_.get());
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
  inference_service_ = std::make_unique<InferenceServiceImpl>(
      inference_handler_.get(), repository_handler_.get(), plan.admin, options_.admin_token);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  // Reflection serves descriptors from the generated pool; gRPC's health
  // service has none there, so pull grpc.health.v1 in (listed AND described).
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(options_.host, ":", options_.port), credentials,
                           &grpc_port_);
  // gRPC enables SO_REUSEPORT by default: a second server on the same port
  // would start and silently share the traffic. One port, one server.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.SetMaxSendMessageSize(options_.max_message_bytes);
  // gRPC's own bound on what its transports hold (messages being read and
  // written): under pressure it shrinks flow-control windows and, past the
  // quota, closes connections, so many large calls at once cannot take the
  // process's memory before admission sees them.
  if (options_.grpc_memory_quota_bytes > 0) {
    grpc::ResourceQuota quota("invariant-server");
    quota.Resize(static_cast<size_t>(options_.grpc_memory_quota_bytes));
    builder.SetResourceQuota(quota);
  }
  if (options_.max_connection_age_seconds > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               static_cast<int>(options_.max_connection_age_seconds * 1000));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               static_cast<int>(options_.drain_seconds * 1000));
  }
  builder.RegisterService(feature_service_.get());
  builder.RegisterService(inference_service_.get());
  if (!options_.data_token.empty()) {
    // Checked by gRPC core on the request headers, before a message is read
    // (data_auth.h). Fail closed: every service not listed here needs it.
    DataTokenPolicy policy;
    policy.token = options_.data_token;
    policy.open_services = {grpc::health::v1::Health::service_full_name(),
                            "grpc.reflection.v1alpha.ServerReflection",
                            grpc::reflection::v1::ServerReflection::service_full_name(),
                            v1::ModelAdmin::service_full_name()};  // has its own admin token
    // The repository extension: the admin token, checked by its handlers.
    for (const char* method : {"RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload"}) {
      policy.open_methods.push_back(
          absl::StrCat("/", inference::GRPCInferenceService::service_full_name(), "/", method));
    }
    for (const char* name : {v1::FeatureService::service_full_name(),
                             inference::GRPCInferenceService::service_full_name()}) {
      policy.labelled.push_back(
          google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name));
    }
    policy.metrics = metrics;
    credentials->RequireDataToken(std::make_shared<DataTokenGate>(std::move(policy)));
  }
  builder.RegisterService(admin_service_.get());
  std::vector<const google::protobuf::ServiceDescriptor*> services;
  for (const char* name :
       {v1::FeatureService::service_full_name(), v1::ModelAdmin::service_full_name(),
        ::inference::GRPCInferenceService::service_full_name()}) {
    const auto* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    if (service == nullptr) continue;
    services.push_back(service);
  }
  // grpc.reflection.v1 beside gRPC's own v1alpha (1.51 has no v1).
  const std::vector<std::string> served = {
      v1::FeatureService::service_full_name(),
      v1::ModelAdmin::service_full_name(),
      inference::GRPCInferenceService::service_full_name(),
      grpc::health::v1::Health::service_full_name(),
      "grpc.reflection.v1alpha.ServerReflection",
      grpc::reflection::v1::ServerReflection::service_full_name()};
  reflection_v1_ = std::make_unique<ReflectionV1Service>(served);
  builder.RegisterService(reflection_v1_.get());
  // The metrics label only these services' methods by name (every other
  // path is "unknown"), all at 0 before the first call.
  std::vector<const google::protobuf::ServiceDescriptor*> labelled;
  for (const std::string& name : served) {
    labelled.push_back(google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name));
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(
      MakeParseErrorInterceptorFactory(services));  // before metrics: they see its code
  creators.push_back(MakeMetricsInterceptorFactory(labelled, metrics));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || grpc_port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("port: cannot listen on ", options_.host, ":", options_.port));
  }
  if (options_.http_port >= 0) RETURN_IF_ERROR(StartHttp());
  UpdateHealth();
  if (options_.poll_seconds > 0) poller_ = std::thread([this] { PollLoop(); });
  trimmer_ = std::thread([this] { TrimLoop(); });
  return absl::OkStatus();
}

absl::Status Server::StartHttp() {
  HttpServerOptions http_options;
  http_options.host = options_.http_host.empty() ? options_.host : options_.http_host;
  http_options.port = options_.http_port;
  http_options.threads = options_.http_threads;
  http_options.max_body_bytes = static_cast<size_t>(options_.http_max_body_bytes);
  http_options.max_inflight_body_bytes = options_.http_max_inflight_bytes;
  http_options.max_connections = options_.http_max_connections;
  const auto ms = [](double seconds) { return static_cast<int>(std::ceil(seconds * 1000)); };
  http_options.idle_timeout_ms = ms(options_.http_idle_timeout_seconds);
  http_options.header_timeout_ms = ms(options_.http_header_timeout_seconds);
  http_options.body_timeout_ms = ms(options_.http_body_timeout_seconds);
  http_options.write_timeout_ms = ms(options_.http_body_timeout_seconds);
  http_options.error_response = &RestInferenceService::ErrorResponse;
  http_options.max_answer_bytes = options_.http_max_inflight_answer_bytes;
  http_options.min_body_bytes_per_second = options_.http_min_body_bytes_per_second;
  http_options.min_write_bytes_per_second = options_.http_min_write_bytes_per_second;
  http_options.rate_grace_ms = ms(options_.http_rate_grace_seconds);
  http_options.probe_slots = options_.http_probe_slots;
  rest_service_ = std::make_unique<RestInferenceService>(
      inference_handler_.get(), metrics_.get(), absl::Seconds(options_.http_timeout_seconds),
      options_.data_token, options_.http_max_response_bytes,
      RestExtensions{repository_handler_.get(), admin_access_, options_.admin_token,
                     model_pages_.get()});
  {
    std::lock_guard<std::mutex> lock(http_mu_);
    http_ = std::make_unique<HttpServer>(http_options);
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
    if (memory_budget_->in_flight() > 0 || audio_budget_->in_flight() > 0) continue;
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
