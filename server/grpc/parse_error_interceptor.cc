#include "server/grpc/parse_error_interceptor.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

class ParseErrorInterceptor final : public grpc::experimental::Interceptor {
 public:
  // `request_type` is empty for a method not declared by the services.
  explicit ParseErrorInterceptor(std::string request_type)
      : request_type_(std::move(request_type)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (!request_type_.empty() &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED &&
          status.error_message().empty()) {
        methods->ModifySendStatus(
            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         absl::StrCat("request: the message does not parse as ", request_type_)));
      }
    }
    methods->Proceed();
  }

 private:
  const std::string request_type_;
};

class ParseErrorInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ParseErrorInterceptorFactory(
      const std::vector<const google::protobuf::ServiceDescriptor*>& services) {
    for (const google::protobuf::ServiceDescriptor* service : services) {
      for (int m = 0; m < service->method_count(); ++m) {
        const google::protobuf::MethodDescriptor& method = *service->method(m);
        if (method.client_streaming()) continue;  // one request: unary or server-streaming
        request_types_[absl::StrCat("/", service->full_name(), "/", method.name())] =
            method.input_type()->full_name();
      }
    }
  }

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    std::string request_type;
    if (info->method() != nullptr) {
      auto it = request_types_.find(info->method());
      if (it != request_types_.end()) request_type = it->second;
    }
    return new ParseErrorInterceptor(std::move(request_type));
  }

 private:
  absl::flat_hash_map<std::string, std::string> request_types_;  // by "/Service/Method"
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeParseErrorInterceptorFactory(std::vector<const google::protobuf::ServiceDescriptor*> services) {
  return std::make_unique<ParseErrorInterceptorFactory>(services);
}

}  // namespace invariant::server
