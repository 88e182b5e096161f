#include "server/grpc/metrics_interceptor.h"

#include <grpcpp/server_context.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/status_code_name.h"

namespace invariant::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

const char* RpcTypeName(grpc::experimental::ServerRpcInfo::Type type) {
  using Type = grpc::experimental::ServerRpcInfo::Type;
  switch (type) {
    case Type::UNARY:
      return "unary";
    case Type::CLIENT_STREAMING:
      return "client_stream";
    case Type::SERVER_STREAMING:
      return "server_stream";
    case Type::BIDI_STREAMING:
      return "bidi_stream";
  }
  return "unknown";
}

// The labels of one served method (or of every call to an unknown one).
struct RpcLabels {
  std::string service;
  std::string method;
  std::string type;
};

// Creates the series of `labels` (each code) at 0.
void InitializeLabels(const RpcLabels& labels, ServerMetrics* metrics) {
  for (int code = grpc::StatusCode::OK; code <= grpc::StatusCode::UNAUTHENTICATED; ++code) {
    metrics->RpcKnown(labels.service, labels.method, labels.type, StatusCodeName(code));
  }
}

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(grpc::experimental::ServerRpcInfo* info, const RpcLabels* labels,
                     ServerMetrics* metrics)
      : metrics_(metrics), context_(info->server_context()), labels_(*labels), start_(absl::Now()) {
    metrics_->RpcStarted(labels_.service, labels_.method, labels_.type);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      grpc::StatusCode code = methods->GetSendStatus().error_code();
      const absl::Time now = absl::Now();
      // A call the client abandoned (or whose deadline passed) never gets the
      // status sent: count what the client saw.
      if (code != grpc::StatusCode::CANCELLED && code != grpc::StatusCode::DEADLINE_EXCEEDED &&
          context_ != nullptr && context_->IsCancelled()) {
        code = now >= absl::FromChrono(context_->deadline()) ? grpc::StatusCode::DEADLINE_EXCEEDED
                                                             : grpc::StatusCode::CANCELLED;
      }
      metrics_->RpcHandled(labels_.service, labels_.method, labels_.type, StatusCodeName(code),
                           absl::ToDoubleSeconds(now - start_));
    }
    methods->Proceed();
  }

 private:
  ServerMetrics* metrics_;
  grpc::ServerContextBase* context_;
  const RpcLabels& labels_;  // owned by the factory, which outlives every call
  const absl::Time start_;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  MetricsInterceptorFactory(const std::vector<const google::protobuf::ServiceDescriptor*>& services,
                            ServerMetrics* metrics)
      : metrics_(metrics), unknown_{kUnknownRpcLabel, kUnknownRpcLabel, kUnknownRpcLabel} {
    for (const google::protobuf::ServiceDescriptor* service : services) {
      if (service == nullptr) continue;
      for (int m = 0; m < service->method_count(); ++m) {
        const google::protobuf::MethodDescriptor& method = *service->method(m);
        known_.emplace(absl::StrCat("/", service->full_name(), "/", method.name()),
                       RpcLabels{service->full_name(), method.name(), MethodTypeName(method)});
      }
    }
    for (const auto& [path, labels] : known_) InitializeLabels(labels, metrics_);
    InitializeLabels(unknown_, metrics_);
  }

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // info->method() is "/package.Service/Method", whatever the client sent.
    const std::string_view path = info->method() != nullptr ? info->method() : "";
    const auto it = known_.find(path);
    return new MetricsInterceptor(info, it != known_.end() ? &it->second : &unknown_, metrics_);
  }

 private:
  ServerMetrics* metrics_;
  std::map<std::string, RpcLabels, std::less<>> known_;  // by path; immutable after construction
  const RpcLabels unknown_;
};

}  // namespace

const char* MethodTypeName(const google::protobuf::MethodDescriptor& method) {
  using Type = grpc::experimental::ServerRpcInfo::Type;
  return RpcTypeName(
      method.client_streaming()
          ? (method.server_streaming() ? Type::BIDI_STREAMING : Type::CLIENT_STREAMING)
          : (method.server_streaming() ? Type::SERVER_STREAMING : Type::UNARY));
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeMetricsInterceptorFactory(
    const std::vector<const google::protobuf::ServiceDescriptor*>& services,
    ServerMetrics* metrics) {
  return std::make_unique<MetricsInterceptorFactory>(services, metrics);
}

}  // namespace invariant::server
