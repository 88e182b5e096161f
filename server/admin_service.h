// admin_service.h: the gRPC ModelAdmin service (reload, per-version status).
//
// When `token` is not empty every call must carry the metadata
// "authorization: Bearer <token>"; otherwise it is refused with
// UNAUTHENTICATED before anything runs. The comparison takes constant time.
// ReloadModels runs the rescan on its own thread (not a gRPC callback thread)
// and answers when it is done.
#ifndef INVARIANT_SERVER_ADMIN_SERVICE_H_
#define INVARIANT_SERVER_ADMIN_SERVICE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "invariant/v1/model_admin_service.grpc.pb.h"
#include "server/model_metadata.h"

namespace invariant::server {

// OK when `authorization` is "Bearer <token>" (or `token` is empty),
// UNAUTHENTICATED otherwise, naming what was expected but never the token.
absl::Status CheckBearerToken(const std::string& token, const std::string* authorization);

class ModelAdminImpl final : public v1::ModelAdmin::CallbackService {
 public:
  // `reload` rescans the models now; `registry` must outlive the service.
  ModelAdminImpl(std::string token, std::function<ScanReport()> reload, const Registry* registry)
      : token_(std::move(token)), reload_(std::move(reload)), registry_(registry) {}

  grpc::ServerUnaryReactor* ReloadModels(grpc::CallbackServerContext* context,
                                         const v1::ReloadModelsRequest* request,
                                         v1::ReloadModelsResponse* response) override;
  grpc::ServerUnaryReactor* GetModelStatus(grpc::CallbackServerContext* context,
                                           const v1::GetModelStatusRequest* request,
                                           v1::GetModelStatusResponse* response) override;

 private:
  absl::Status Authorize(const grpc::CallbackServerContext* context) const;

  const std::string token_;
  const std::function<ScanReport()> reload_;
  const Registry* registry_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ADMIN_SERVICE_H_
