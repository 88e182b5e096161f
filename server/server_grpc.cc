#include "server/server_grpc.h"

#include <grpcpp/resource_quota.h>

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/file.h"
#include "core/base/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "inference/grpc_service.grpc.pb.h"
#include "invariant/v1/feature_service.grpc.pb.h"
#include "invariant/v1/model_admin_service.grpc.pb.h"
#include "server/grpc/access_log_interceptor.h"
#include "server/grpc/metrics_interceptor.h"
#include "server/grpc/parse_error_interceptor.h"

namespace invariant::server {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::optional<std::string> text = ReadWholeFile(path);
  if (!text.has_value()) {
    return absl::NotFoundError(absl::StrCat(flag, ": cannot read '", path, "'"));
  }
  return *std::move(text);
}

// The generated descriptors of `names` (null where the pool has none).
std::vector<const google::protobuf::ServiceDescriptor*> Descriptors(
    const std::vector<std::string>& names) {
  std::vector<const google::protobuf::ServiceDescriptor*> descriptors;
  for (const std::string& name : names) {
    descriptors.push_back(
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name));
  }
  return descriptors;
}

}  // namespace

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

void ConfigureGrpcPort(const ServerOptions& options,
                       std::shared_ptr<GrpcPortCredentials> credentials, int* bound_port,
                       grpc::ServerBuilder* builder) {
  builder->AddListeningPort(absl::StrCat(options.host, ":", options.port), std::move(credentials),
                            bound_port);
  // gRPC enables SO_REUSEPORT by default: a second server on the same port
  // would start and silently share the traffic. One port, one server.
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder->SetMaxReceiveMessageSize(options.max_message_bytes);
  builder->SetMaxSendMessageSize(options.max_message_bytes);
  // gRPC's own bound on what its transports hold (messages being read and
  // written): under pressure it shrinks flow-control windows and, past the
  // quota, closes connections, so many large calls at once cannot take the
  // process's memory before admission sees them.
  if (options.grpc_memory_quota_bytes > 0) {
    grpc::ResourceQuota quota("invariant-server");
    quota.Resize(static_cast<size_t>(options.grpc_memory_quota_bytes));
    builder->SetResourceQuota(quota);
  }
  if (options.max_connection_age_seconds > 0) {
    builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                                static_cast<int>(options.max_connection_age_seconds * 1000));
    builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                                static_cast<int>(options.drain_seconds * 1000));
  }
}

DataTokenPolicy DataTokenPolicyFor(const std::string& token, ServerMetrics* metrics) {
  DataTokenPolicy policy;
  policy.token = token;
  policy.open_services = {grpc::health::v1::Health::service_full_name(),
                          "grpc.reflection.v1alpha.ServerReflection",
                          grpc::reflection::v1::ServerReflection::service_full_name(),
                          v1::ModelAdmin::service_full_name()};  // has its own admin token
  // The repository extension: the admin token, checked by its handlers.
  for (const char* method : {"RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload"}) {
    policy.open_methods.push_back(
        absl::StrCat("/", inference::GRPCInferenceService::service_full_name(), "/", method));
  }
  policy.labelled = Descriptors({v1::FeatureService::service_full_name(),
                                 inference::GRPCInferenceService::service_full_name()});
  policy.metrics = metrics;
  return policy;
}

std::vector<std::string> ServedGrpcServices() {
  // grpc.reflection.v1 beside gRPC's own v1alpha (1.51 has no v1).
  return {v1::FeatureService::service_full_name(),
          v1::ModelAdmin::service_full_name(),
          inference::GRPCInferenceService::service_full_name(),
          grpc::health::v1::Health::service_full_name(),
          "grpc.reflection.v1alpha.ServerReflection",
          grpc::reflection::v1::ServerReflection::service_full_name()};
}

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
GrpcInterceptors(const std::vector<std::string>& served, ServerMetrics* metrics,
                 AccessLog* access_log, GrpcCallRecords* records) {
  // Parse errors are answered for the services of this server's own protos.
  std::vector<const google::protobuf::ServiceDescriptor*> parsed;
  for (const auto* service :
       Descriptors({v1::FeatureService::service_full_name(), v1::ModelAdmin::service_full_name(),
                    inference::GRPCInferenceService::service_full_name()})) {
    if (service != nullptr) parsed.push_back(service);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(
      MakeParseErrorInterceptorFactory(parsed));  // before metrics: they see its code
  // The metrics label only these services' methods by name (every other
  // path is "unknown"), all at 0 before the first call.
  creators.push_back(MakeMetricsInterceptorFactory(Descriptors(served), metrics));
  // After the parse errors' too: the log sees the code the client gets.
  if (access_log != nullptr) {
    creators.push_back(MakeAccessLogInterceptorFactory(access_log, records));
  }
  return creators;
}

}  // namespace invariant::server
