#include "server/admin_service.h"

#include <thread>

#include "server/status_util.h"

namespace invariant::server {
namespace {

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

absl::Status CheckBearerToken(const std::string& token, const std::string* authorization) {
  if (token.empty()) return absl::OkStatus();
  if (authorization == nullptr) {
    return absl::UnauthenticatedError(
        "authorization: expected metadata 'authorization: Bearer <token>', received none");
  }
  if (!ConstantTimeEquals(*authorization, "Bearer " + token)) {
    return absl::UnauthenticatedError(
        "authorization: expected 'Bearer <admin token>', received a different credential");
  }
  return absl::OkStatus();
}

absl::Status ModelAdminImpl::Authorize(const grpc::CallbackServerContext* context) const {
  const auto& metadata = context->client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return CheckBearerToken(token_, nullptr);
  const std::string value(it->second.data(), it->second.size());
  return CheckBearerToken(token_, &value);
}

grpc::ServerUnaryReactor* ModelAdminImpl::ReloadModels(grpc::CallbackServerContext* context,
                                                       const v1::ReloadModelsRequest* /*request*/,
                                                       v1::ReloadModelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status status = Authorize(context);
  if (!status.ok()) {
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  // Loading may take long: run it off the gRPC callback thread. The call stays
  // in flight until Finish, and the server's shutdown waits for in-flight
  // calls, so `this` and `response` outlive the thread.
  std::thread([this, reactor, response] {
    const ScanReport report = reload_();
    response->set_versions_loaded(report.loaded);
    response->set_versions_failed(report.failed);
    response->set_versions_unloaded(report.unloaded);
    reactor->Finish(grpc::Status::OK);
  }).detach();
  return reactor;
}

grpc::ServerUnaryReactor* ModelAdminImpl::GetModelStatus(grpc::CallbackServerContext* context,
                                                         const v1::GetModelStatusRequest* request,
                                                         v1::GetModelStatusResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status status = Authorize(context);
  if (status.ok()) status = FillModelStatus(*registry_, request->model_name(), response);
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace invariant::server
