#include "server/grpc/admin_service.h"

#include "server/common/status_util.h"

namespace invariant::server {

absl::Status ModelAdminImpl::Authorize(const grpc::CallbackServerContext* context) const {
  return CheckAdminCall(access_, token_, *context);
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
  // The rescan runs on the coalescer's worker thread, not a gRPC callback
  // thread. The call stays in flight until Finish, and the server's shutdown
  // waits for in-flight calls, so `response` outlives the rescan.
  reloads_.Request([reactor, response](const ScanReport& report) {
    response->set_versions_loaded(report.loaded);
    response->set_versions_failed(report.failed);
    response->set_versions_unloaded(report.unloaded);
    reactor->Finish(grpc::Status::OK);
  });
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
