#include "server/grpc/data_auth.h"

#include "server/common/auth.h"
#include "server/common/status_util.h"

namespace invariant::server {
namespace {

constexpr char kWhat[] = "data token";

// Forwards a unary call to `(inner->*method)` when the token matches, or
// finishes it with UNAUTHENTICATED.
template <typename Service, typename Request, typename Response>
grpc::ServerUnaryReactor* Unary(const std::string& token, grpc::CallbackServerContext* context,
                                const Request* request, Response* response, Service* inner,
                                grpc::ServerUnaryReactor* (Service::*method)(
                                    grpc::CallbackServerContext*, const Request*, Response*)) {
  const absl::Status status = CheckCallToken(token, *context, kWhat);
  if (status.ok()) return (inner->*method)(context, request, response);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A stream refused before its first read.
template <typename Request, typename Response>
class RefusedStream final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  explicit RefusedStream(const absl::Status& status) { this->Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

template <typename Service, typename Request, typename Response>
grpc::ServerBidiReactor<Request, Response>* Bidi(
    const std::string& token, grpc::CallbackServerContext* context, Service* inner,
    grpc::ServerBidiReactor<Request, Response>* (Service::*method)(grpc::CallbackServerContext*)) {
  const absl::Status status = CheckCallToken(token, *context, kWhat);
  if (status.ok()) return (inner->*method)(context);
  return new RefusedStream<Request, Response>(status);
}

}  // namespace

grpc::ServerUnaryReactor* AuthorizedFeatureService::Featurize(grpc::CallbackServerContext* context,
                                                              const v1::FeaturizeRequest* request,
                                                              v1::FeaturizeResponse* response) {
  return Unary(token_, context, request, response, inner_, &FeatureServiceImpl::Featurize);
}

grpc::ServerUnaryReactor* AuthorizedFeatureService::Predict(grpc::CallbackServerContext* context,
                                                            const v1::PredictRequest* request,
                                                            v1::PredictResponse* response) {
  return Unary(token_, context, request, response, inner_, &FeatureServiceImpl::Predict);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
AuthorizedFeatureService::StreamFeaturize(grpc::CallbackServerContext* context) {
  return Bidi(token_, context, inner_, &FeatureServiceImpl::StreamFeaturize);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
AuthorizedFeatureService::StreamPredict(grpc::CallbackServerContext* context) {
  return Bidi(token_, context, inner_, &FeatureServiceImpl::StreamPredict);
}

grpc::ServerUnaryReactor* AuthorizedFeatureService::ListModels(grpc::CallbackServerContext* context,
                                                               const v1::ListModelsRequest* request,
                                                               v1::ListModelsResponse* response) {
  return Unary(token_, context, request, response, inner_, &FeatureServiceImpl::ListModels);
}

grpc::ServerUnaryReactor* AuthorizedFeatureService::GetModelMetadata(
    grpc::CallbackServerContext* context, const v1::GetModelMetadataRequest* request,
    v1::GetModelMetadataResponse* response) {
  return Unary(token_, context, request, response, inner_, &FeatureServiceImpl::GetModelMetadata);
}

grpc::ServerUnaryReactor* AuthorizedInferenceService::ServerLive(
    grpc::CallbackServerContext* context, const inference::ServerLiveRequest* request,
    inference::ServerLiveResponse* response) {
  return Unary(token_, context, request, response, inner_, &InferenceServiceImpl::ServerLive);
}

grpc::ServerUnaryReactor* AuthorizedInferenceService::ServerReady(
    grpc::CallbackServerContext* context, const inference::ServerReadyRequest* request,
    inference::ServerReadyResponse* response) {
  return Unary(token_, context, request, response, inner_, &InferenceServiceImpl::ServerReady);
}

grpc::ServerUnaryReactor* AuthorizedInferenceService::ModelReady(
    grpc::CallbackServerContext* context, const inference::ModelReadyRequest* request,
    inference::ModelReadyResponse* response) {
  return Unary(token_, context, request, response, inner_, &InferenceServiceImpl::ModelReady);
}

grpc::ServerUnaryReactor* AuthorizedInferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest* request,
    inference::ServerMetadataResponse* response) {
  return Unary(token_, context, request, response, inner_, &InferenceServiceImpl::ServerMetadata);
}

grpc::ServerUnaryReactor* AuthorizedInferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  return Unary(token_, context, request, response, inner_, &InferenceServiceImpl::ModelMetadata);
}

grpc::ServerUnaryReactor* AuthorizedInferenceService::ModelInfer(
    grpc::CallbackServerContext* context, const inference::ModelInferRequest* request,
    inference::ModelInferResponse* response) {
  return Unary(token_, context, request, response, inner_, &InferenceServiceImpl::ModelInfer);
}

}  // namespace invariant::server
