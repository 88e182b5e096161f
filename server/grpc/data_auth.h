// data_auth.h: the data-path bearer token (--data_token_file).
//
// AuthorizedFeatureService and AuthorizedInferenceService are the services
// registered instead of FeatureServiceImpl / InferenceServiceImpl when a data
// token is set: each method checks "authorization: Bearer <token>" (auth.h)
// and either answers UNAUTHENTICATED at once (streams are finished before
// reading anything) or hands the call to the wrapped service unchanged.
// They are separate services (AuthorizedFeatureService has FeatureServiceImpl's
// base, raw-byte streams included), not subclasses, so an RPC added to the
// proto but not forwarded here answers UNIMPLEMENTED: fail closed (and
// tests/integration/auth_test.cc, which calls every method of both services
// from their descriptors, fails until it is forwarded).
#ifndef INVARIANT_SERVER_GRPC_DATA_AUTH_H_
#define INVARIANT_SERVER_GRPC_DATA_AUTH_H_

#include <string>

#include "server/grpc/feature_service.h"
#include "server/grpc/inference_service.h"

namespace invariant::server {

class AuthorizedFeatureService final : public FeatureServiceBase {
 public:
  // `inner` must outlive this service; `token` is not empty.
  AuthorizedFeatureService(std::string token, FeatureServiceImpl* inner)
      : token_(std::move(token)), inner_(inner) {}

  grpc::ServerUnaryReactor* Featurize(grpc::CallbackServerContext* context,
                                      const v1::FeaturizeRequest* request,
                                      v1::FeaturizeResponse* response) override;
  grpc::ServerUnaryReactor* Predict(grpc::CallbackServerContext* context,
                                    const v1::PredictRequest* request,
                                    v1::PredictResponse* response) override;
  // The streams are raw bytes, as in FeatureServiceImpl (which parses them).
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StreamFeaturize(
      grpc::CallbackServerContext* context) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StreamPredict(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* GetModelMetadata(grpc::CallbackServerContext* context,
                                             const v1::GetModelMetadataRequest* request,
                                             v1::GetModelMetadataResponse* response) override;

 private:
  const std::string token_;
  FeatureServiceImpl* inner_;
};

class AuthorizedInferenceService final : public inference::GRPCInferenceService::CallbackService {
 public:
  // `inner` must outlive this service; `token` is not empty.
  AuthorizedInferenceService(std::string token, InferenceServiceImpl* inner)
      : token_(std::move(token)), inner_(inner) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override;

 private:
  const std::string token_;
  InferenceServiceImpl* inner_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_DATA_AUTH_H_
