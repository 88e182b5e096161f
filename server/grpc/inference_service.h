// inference_service.h: the gRPC inference.GRPCInferenceService (Open Inference Protocol).
//
// Thin handlers on the callback API: each converts the deadline, calls
// InferenceHandler (inference_handler.h, where all request logic lives) or,
// for the repository extension, RepositoryHandler (repository_handler.h)
// after the admin gate (auth.h CheckAdminCall: these calls pass the data
// token gate, data_auth.h, and need the admin token instead), converts the
// status once (status_util.h) and finishes. Repository loads and unloads
// never block a callback thread: the call is finished from the repository's
// own threads once the bundle has loaded or the model has drained. Served on the same
// port and server as invariant.v1, so the metrics interceptor counts its
// calls under grpc_service="inference.GRPCInferenceService" and the protocol's
// method names.
#ifndef INVARIANT_SERVER_GRPC_INFERENCE_SERVICE_H_
#define INVARIANT_SERVER_GRPC_INFERENCE_SERVICE_H_

#include <string>
#include <utility>

#include "inference/grpc_service.grpc.pb.h"
#include "server/common/auth.h"
#include "server/grpc/access_log_interceptor.h"
#include "server/handlers/inference_handler.h"
#include "server/handlers/repository_handler.h"

namespace invariant::server {

class InferenceServiceImpl final : public inference::GRPCInferenceService::CallbackService {
 public:
  // `handler` and `repository` (null: the repository extension answers
  // UNIMPLEMENTED) must outlive the service; `admin_token` is used with
  // AdminAccess::kToken only; `records` (null: no request log) give ModelInfer
  // its call's record.
  explicit InferenceServiceImpl(const InferenceHandler* handler,
                                const RepositoryHandler* repository = nullptr,
                                AdminAccess admin = AdminAccess::kDisabled,
                                std::string admin_token = "",
                                const GrpcCallRecords* records = nullptr)
      : handler_(handler),
        repository_(repository),
        admin_(admin),
        admin_token_(std::move(admin_token)),
        records_(records) {}

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
  // The statistics extension (data token, like ModelMetadata).
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;

  // The repository extension (admin token).
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override;

 private:
  // Runs `call` after the admin gate, or answers UNIMPLEMENTED without a repository.
  template <typename Call>
  grpc::ServerUnaryReactor* Admin(grpc::CallbackServerContext* context, Call call) const;
  // The same gate, for a call answered later: `start` gets the function that
  // finishes the call (from any thread), so no gRPC thread waits for a load
  // or a drain.
  template <typename Start>
  grpc::ServerUnaryReactor* AdminLater(grpc::CallbackServerContext* context, Start start) const;

  const InferenceHandler* handler_;
  const RepositoryHandler* repository_;
  const AdminAccess admin_;
  const std::string admin_token_;
  const GrpcCallRecords* records_;  // null: no request log (access_log_interceptor.h)
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_INFERENCE_SERVICE_H_
