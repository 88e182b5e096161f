#include "server/handlers/repository_handler.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/base/error_text.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

absl::Status CheckRepositoryName(const std::string& repository_name) {
  if (repository_name.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "repository_name: expected '' (the server serves one models directory), received '",
      EchoInput(repository_name), "'"));
}

template <typename Parameters>
absl::Status CheckNoParameters(const Parameters& parameters) {
  if (parameters.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "parameters.", EchoInput(parameters.begin()->first),
      ": expected no parameters (a model is loaded from its bundle under the models directory; "
      "configs and files sent in the request are not supported)"));
}

// The request's repository, model name and parameters.
template <typename Request>
absl::Status CheckModelRequest(const Request& request) {
  if (absl::Status s = CheckRepositoryName(request.repository_name()); !s.ok()) return s;
  if (absl::Status s =
          ValidateModelRef(request.model_name(), 0, {"model_name", "model_version", ""});
      !s.ok()) {
    return s;
  }
  return CheckNoParameters(request.parameters());
}

}  // namespace

absl::Status RepositoryHandler::Index(const inference::RepositoryIndexRequest& request,
                                      inference::RepositoryIndexResponse* response) const {
  if (absl::Status s = CheckRepositoryName(request.repository_name()); !s.ok()) return s;
  for (const RepositoryEntry& entry : registry_->Index(request.ready())) {
    inference::RepositoryIndexResponse::ModelIndex* model = response->add_models();
    model->set_name(entry.name);
    if (entry.version > 0) model->set_version(absl::StrCat(entry.version));
    model->set_state(entry.state);
    model->set_reason(entry.reason);
  }
  return absl::OkStatus();
}

absl::Status RepositoryHandler::Load(const inference::RepositoryModelLoadRequest& request,
                                     inference::RepositoryModelLoadResponse* /*response*/) const {
  if (absl::Status s = CheckModelRequest(request); !s.ok()) return s;
  absl::Status status = registry_->LoadModel(request.model_name());
  if (on_change_) on_change_();
  return status;
}

absl::Status RepositoryHandler::Unload(
    const inference::RepositoryModelUnloadRequest& request,
    inference::RepositoryModelUnloadResponse* /*response*/) const {
  if (absl::Status s = CheckModelRequest(request); !s.ok()) return s;
  std::vector<std::weak_ptr<const void>> in_use;
  absl::Status status = registry_->UnloadModel(request.model_name(), &in_use);
  if (on_change_) on_change_();
  // Drain: the calls in flight hold the bits; answer once they have ended.
  const absl::Time deadline = absl::Now() + drain_timeout_;
  const auto alive = [&in_use] {
    for (const auto& bits : in_use) {
      if (!bits.expired()) return true;
    }
    return false;
  };
  while (status.ok() && alive() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  return status;
}

}  // namespace invariant::server
