#include "server/grpc/inference_service.h"

#include "server/common/status_util.h"
#include "server/grpc/cancellable_reactor.h"

namespace invariant::server {
namespace {

// Finishes a unary call with the outcome of a synchronous handler method.
grpc::ServerUnaryReactor* FinishWith(grpc::CallbackServerContext* context, absl::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* InferenceServiceImpl::ServerLive(
    grpc::CallbackServerContext* context, const inference::ServerLiveRequest* request,
    inference::ServerLiveResponse* response) {
  return FinishWith(context, handler_->ServerLive(*request, response));
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ServerReady(
    grpc::CallbackServerContext* context, const inference::ServerReadyRequest* request,
    inference::ServerReadyResponse* response) {
  return FinishWith(context, handler_->ServerReady(*request, response));
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ModelReady(
    grpc::CallbackServerContext* context, const inference::ModelReadyRequest* request,
    inference::ModelReadyResponse* response) {
  return FinishWith(context, handler_->ModelReady(*request, response));
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest* request,
    inference::ServerMetadataResponse* response) {
  return FinishWith(context, handler_->ServerMetadata(*request, response));
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  return FinishWith(context, handler_->ModelMetadata(*request, response));
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ModelInfer(
    grpc::CallbackServerContext* context, const inference::ModelInferRequest* request,
    inference::ModelInferResponse* response) {
  auto* reactor = new CancellableUnaryReactor(absl::FromChrono(context->deadline()));
  // The outputs are computed in place in the protocol's response (no copy);
  // the memory lease lasts until the call is done (the reactor holds the
  // bag), so it covers the serialized answer too.
  CallContext call;
  if (records_ != nullptr) call.record = records_->Find(context);
  call.peer = call.record != nullptr ? call.record->peer : context->peer();
  if (call.record != nullptr) {
    call.record->bytes_in += static_cast<int64_t>(request->ByteSizeLong());
  }
  call.answer_bytes_per_value = 4;
  call.answer_leases = reactor->leases();
  handler_->ModelInfer(
      *request, response, reactor->deadline(),
      [reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); }, reactor->token(),
      call);
  return reactor;
}

grpc::ServerUnaryReactor* InferenceServiceImpl::ModelStatistics(
    grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  return FinishWith(context, handler_->ModelStatistics(*request, response));
}

template <typename Start>
grpc::ServerUnaryReactor* InferenceServiceImpl::AdminLater(grpc::CallbackServerContext* context,
                                                           Start start) const {
  if (repository_ == nullptr) {
    return FinishWith(context, absl::UnimplementedError("the repository extension is not served"));
  }
  if (absl::Status s = CheckAdminCall(admin_, admin_token_, *context); !s.ok()) {
    return FinishWith(context, s);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  start([reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); });
  return reactor;
}

template <typename Call>
grpc::ServerUnaryReactor* InferenceServiceImpl::Admin(grpc::CallbackServerContext* context,
                                                      Call call) const {
  return AdminLater(context, [&](RepositoryHandler::DoneFn done) { done(call()); });
}

grpc::ServerUnaryReactor* InferenceServiceImpl::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest* request,
    inference::RepositoryIndexResponse* response) {
  return Admin(context, [&] { return repository_->Index(*request, response); });
}

grpc::ServerUnaryReactor* InferenceServiceImpl::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse* /*response*/) {
  return AdminLater(context, [&](RepositoryHandler::DoneFn done) {
    repository_->Load(*request, std::move(done));
  });
}

grpc::ServerUnaryReactor* InferenceServiceImpl::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse* /*response*/) {
  return AdminLater(context, [&](RepositoryHandler::DoneFn done) {
    repository_->Unload(*request, std::move(done));
  });
}

}  // namespace invariant::server
