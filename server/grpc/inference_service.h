// inference_service.h: the gRPC inference.GRPCInferenceService (Open Inference Protocol).
//
// Thin handlers on the callback API: each converts the deadline, calls
// InferenceHandler (inference_handler.h, where all request logic lives),
// converts the status once (status_util.h) and finishes. Served on the same
// port and server as invariant.v1, so the metrics interceptor counts its
// calls under grpc_service="inference.GRPCInferenceService" and the protocol's
// method names.
#ifndef INVARIANT_SERVER_GRPC_INFERENCE_SERVICE_H_
#define INVARIANT_SERVER_GRPC_INFERENCE_SERVICE_H_

#include "inference/grpc_service.grpc.pb.h"
#include "server/handlers/inference_handler.h"

namespace invariant::server {

class InferenceServiceImpl final : public inference::GRPCInferenceService::CallbackService {
 public:
  // `handler` must outlive the service.
  explicit InferenceServiceImpl(const InferenceHandler* handler) : handler_(handler) {}

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
  const InferenceHandler* handler_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_INFERENCE_SERVICE_H_
