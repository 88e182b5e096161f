// admin_service.h: the gRPC ModelAdmin service (reload, per-version status).
//
// Access (auth.h): with AdminAccess::kToken every call must carry the
// metadata "authorization: Bearer <token>" (compared in constant time) or is
// refused with UNAUTHENTICATED before anything runs; with kDisabled every
// call is PERMISSION_DENIED; kOpen lets every caller in.
// ReloadModels queues the call on a ReloadCoalescer (reload_coalescer.h): one
// rescan at a time on one worker thread, concurrent calls share a rescan, and
// each call answers when the rescan it joined is done.
#ifndef INVARIANT_SERVER_GRPC_ADMIN_SERVICE_H_
#define INVARIANT_SERVER_GRPC_ADMIN_SERVICE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "invariant/v1/model_admin_service.grpc.pb.h"
#include "server/common/auth.h"
#include "server/handlers/model_metadata.h"
#include "server/lifecycle/reload_coalescer.h"

namespace invariant::server {

class ModelAdminImpl final : public v1::ModelAdmin::CallbackService {
 public:
  // `reload` rescans the models now; `registry` must outlive the service.
  // `token` is used with AdminAccess::kToken only. `on_reload_queued` is the
  // coalescer's test hook (reload_coalescer.h).
  ModelAdminImpl(AdminAccess access, std::string token, std::function<ScanReport()> reload,
                 const Registry* registry,
                 std::function<void(size_t queued)> on_reload_queued = nullptr)
      : access_(access),
        token_(std::move(token)),
        reloads_(std::move(reload), std::move(on_reload_queued)),
        registry_(registry) {}

  grpc::ServerUnaryReactor* ReloadModels(grpc::CallbackServerContext* context,
                                         const v1::ReloadModelsRequest* request,
                                         v1::ReloadModelsResponse* response) override;
  grpc::ServerUnaryReactor* GetModelStatus(grpc::CallbackServerContext* context,
                                           const v1::GetModelStatusRequest* request,
                                           v1::GetModelStatusResponse* response) override;

  // Rescans run for ReloadModels so far.
  int64_t reload_runs() const { return reloads_.runs(); }

 private:
  absl::Status Authorize(const grpc::CallbackServerContext* context) const;

  const AdminAccess access_;
  const std::string token_;
  ReloadCoalescer reloads_;
  const Registry* registry_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_ADMIN_SERVICE_H_
