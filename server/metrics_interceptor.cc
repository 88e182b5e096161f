#include "server/metrics_interceptor.h"

#include <grpcpp/server_context.h>

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/grpc_code_name.h"

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

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(grpc::experimental::ServerRpcInfo* info, ServerMetrics* metrics)
      : metrics_(metrics),
        context_(info->server_context()),
        type_(RpcTypeName(info->type())),
        start_(absl::Now()) {
    // info->method() is "/package.Service/Method".
    const std::string full = info->method() != nullptr ? info->method() : "";
    const size_t slash = full.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      service_ = full.substr(1, slash - 1);
      method_ = full.substr(slash + 1);
    } else {
      service_ = "unknown";
      method_ = full;
    }
    metrics_->RpcStarted(service_, method_, type_);
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
      metrics_->RpcHandled(service_, method_, type_, GrpcCodeName(code),
                           absl::ToDoubleSeconds(now - start_));
    }
    methods->Proceed();
  }

 private:
  ServerMetrics* metrics_;
  grpc::ServerContextBase* context_;
  std::string service_;
  std::string method_;
  const std::string type_;
  const absl::Time start_;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(ServerMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(info, metrics_);
  }

 private:
  ServerMetrics* metrics_;
};

}  // namespace

void InitializeRpcMetrics(const google::protobuf::ServiceDescriptor& service,
                          ServerMetrics* metrics) {
  using Type = grpc::experimental::ServerRpcInfo::Type;
  for (int m = 0; m < service.method_count(); ++m) {
    const google::protobuf::MethodDescriptor& method = *service.method(m);
    const Type type =
        method.client_streaming()
            ? (method.server_streaming() ? Type::BIDI_STREAMING : Type::CLIENT_STREAMING)
            : (method.server_streaming() ? Type::SERVER_STREAMING : Type::UNARY);
    for (int code = grpc::StatusCode::OK; code <= grpc::StatusCode::UNAUTHENTICATED; ++code) {
      metrics->RpcKnown(service.full_name(), method.name(), RpcTypeName(type), GrpcCodeName(code));
    }
  }
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeMetricsInterceptorFactory(ServerMetrics* metrics) {
  return std::make_unique<MetricsInterceptorFactory>(metrics);
}

}  // namespace invariant::server
