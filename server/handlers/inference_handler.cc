#include "server/handlers/inference_handler.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "server/handlers/inference_audio.h"
#include "server/handlers/inference_tensors.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

constexpr char kServerName[] = "invariant-server";

// Field names of the model name and version in each protocol request.
constexpr char kInferNameField[] = "model_name";
constexpr char kInferVersionField[] = "model_version";
constexpr char kNameField[] = "name";
constexpr char kVersionField[] = "version";

// The ready versions of `name`, newest first (empty when the model is unknown).
std::vector<int64_t> ReadyVersions(const Registry& registry, const std::string& name) {
  std::vector<int64_t> ready;
  const auto snapshot = registry.Snapshot();
  auto it = snapshot.find(name);
  if (it == snapshot.end()) return ready;
  for (const auto& info : it->second) {
    if (info.state == VersionState::kReady) ready.push_back(info.version);
  }
  std::sort(ready.rbegin(), ready.rend());
  return ready;
}

// The ready version the protocol's (name, version) strings address.
absl::StatusOr<Registry::Handle> ResolveProtocolModel(const Registry& registry,
                                                      const std::string& name,
                                                      const std::string& version,
                                                      const std::string& name_field,
                                                      const std::string& version_field) {
  absl::StatusOr<v1::ModelSpec> spec =
      ModelSpecFromProtocol(name, version, name_field, version_field);
  if (!spec.ok()) return spec.status();
  absl::Status status = ValidateModelSpec(*spec);
  absl::StatusOr<Registry::Handle> handle =
      status.ok() ? registry.Lookup(spec->name(), spec->version(), spec->version_label())
                  : absl::StatusOr<Registry::Handle>(status);
  if (!handle.ok()) {
    return WithProtocolFieldNames(handle.status(), name_field, version_field, false);
  }
  return handle;
}

// One ModelInfer in flight: the one invariant.v1 handler call it makes and
// its results (both responses when it asked for features and a head output).
struct InferCall {
  const inference::ModelInferRequest* request = nullptr;
  inference::ModelInferResponse* response = nullptr;
  DoneFn done;
  Registry::Handle handle;
  std::vector<std::string> outputs;
  bool raw = false;
  bool featurize = false;
  bool predict = false;
  v1::FeaturizeRequest featurize_request;
  v1::FeaturizeResponse featurize_response;
  v1::PredictRequest predict_request;
  v1::PredictResponse predict_response;

  // The handler call's outcome: assembles the response, or names the
  // protocol's fields in the error.
  void Finished(const absl::Status& status) {
    if (status.ok()) {
      Assemble();
      return done(status);
    }
    done(WithProtocolFieldNames(status, kInferNameField, kInferVersionField, raw,
                                AudioInputIndex(*request)));
  }

  void Assemble() {
    response->set_model_name(handle.name);
    response->set_model_version(absl::StrCat(handle.version));
    response->set_id(request->id());
    for (const std::string& name : outputs) {
      if (name == kFeaturesOutputName) {
        AppendFp32Output(name, featurize_response.num_rows(), featurize_response.feature_dim(),
                         featurize_response.mutable_features(), raw, response);
      } else if (name == kScoresOutputName) {
        AppendFp32Output(name, predict_response.num_rows(), predict_response.output_dim(),
                         predict_response.mutable_scores(), raw, response);
      } else if (name == kPredictedClassOutputName) {
        AppendBytesOutput(name, predict_response.predicted_classes(), raw, response);
      } else if (name == kPredictedIndexOutputName) {
        AppendInt32Output(name, predict_response.mutable_predicted_indices(), raw, response);
      }
    }
  }
};

}  // namespace

absl::Status InferenceHandler::ServerLive(const inference::ServerLiveRequest& /*request*/,
                                          inference::ServerLiveResponse* response) const {
  response->set_live(true);
  return absl::OkStatus();
}

absl::Status InferenceHandler::ServerReady(const inference::ServerReadyRequest& /*request*/,
                                           inference::ServerReadyResponse* response) const {
  response->set_ready(server_ready_ ? server_ready_() : registry_->Serving());
  return absl::OkStatus();
}

absl::Status InferenceHandler::ModelReady(const inference::ModelReadyRequest& request,
                                          inference::ModelReadyResponse* response) const {
  absl::StatusOr<v1::ModelSpec> spec =
      ModelSpecFromProtocol(request.name(), request.version(), kNameField, kVersionField);
  if (!spec.ok()) return spec.status();
  response->set_ready(registry_->Lookup(spec->name(), spec->version(), spec->version_label()).ok());
  return absl::OkStatus();
}

absl::Status InferenceHandler::ServerMetadata(const inference::ServerMetadataRequest& /*request*/,
                                              inference::ServerMetadataResponse* response) const {
  response->set_name(kServerName);
  response->set_version(server_version_);
  return absl::OkStatus();
}

absl::Status InferenceHandler::ModelMetadata(const inference::ModelMetadataRequest& request,
                                             inference::ModelMetadataResponse* response) const {
  absl::StatusOr<Registry::Handle> handle = ResolveProtocolModel(
      *registry_, request.name(), request.version(), kNameField, kVersionField);
  if (!handle.ok()) return handle.status();
  v1::GetModelMetadataResponse metadata;
  FillModelMetadata(handle->name, handle->version, *handle->servable, &metadata,
                    features_->max_audio_clip_seconds());
  FillInferenceModelMetadata(metadata, ReadyVersions(*registry_, handle->name), response);
  return absl::OkStatus();
}

void InferenceHandler::ModelInfer(const inference::ModelInferRequest& request,
                                  inference::ModelInferResponse* response, absl::Time deadline,
                                  DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                                  const CallContext& call_context) const {
  absl::StatusOr<Registry::Handle> handle =
      ResolveProtocolModel(*registry_, request.model_name(), request.model_version(),
                           kInferNameField, kInferVersionField);
  if (!handle.ok()) return done(handle.status());
  v1::GetModelMetadataResponse metadata;
  FillModelMetadata(handle->name, handle->version, *handle->servable, &metadata,
                    features_->max_audio_clip_seconds());
  const InferenceModelShape shape = ShapeFromMetadata(metadata);

  auto call = std::make_shared<InferCall>();
  absl::StatusOr<v1::InputBatch> batch =
      DecodeInferInput(request, shape, features_->max_request_rows(), &call->raw);
  if (!batch.ok()) return done(batch.status());
  absl::StatusOr<std::vector<std::string>> outputs = SelectOutputs(request, shape);
  if (!outputs.ok()) return done(outputs.status());
  if (absl::Status s =
          CheckInferResponseSize(batch->num_rows(), shape, *outputs, max_response_bytes_);
      !s.ok()) {
    return done(s);
  }
  if (call_context.max_answer_bytes > 0) {
    const int64_t per_value = call_context.answer_bytes_per_value;
    const int64_t values = batch->num_rows() * AnswerValuesPerRow(shape, *outputs);
    if (values * per_value > call_context.max_answer_bytes) {
      return done(absl::InvalidArgumentError(
          absl::StrCat("outputs: the answer would take up to ", values * per_value, " bytes (",
                       batch->num_rows(), " rows, ", values, " values of up to ", per_value,
                       " bytes each), over ", call_context.answer_limit_name, "=",
                       call_context.max_answer_bytes, "; ", call_context.answer_hint)));
    }
  }

  call->request = &request;
  call->response = response;
  call->done = std::move(done);
  call->handle = *handle;
  call->outputs = *std::move(outputs);
  for (const std::string& name : call->outputs) {
    if (name == kFeaturesOutputName) {
      call->featurize = true;
    } else {
      call->predict = true;
    }
  }
  // Pin the resolved version, so that the call uses the one resolved here
  // even if a reload changes the newest version in between.
  v1::ModelSpec pinned;
  pinned.set_name(handle->name);
  pinned.set_version(handle->version);
  // One handler call, so one batch job: both outputs of one compute when
  // the call asks for features and a head output.
  auto finished = [call](absl::Status status) { call->Finished(status); };
  if (call->predict) {
    *call->predict_request.mutable_model() = pinned;
    *call->predict_request.mutable_inputs() = *std::move(batch);
    if (call->featurize) {
      features_->FeaturizeAndPredict(call->predict_request, &call->featurize_response,
                                     &call->predict_response, deadline, std::move(finished), cancel,
                                     call_context);
    } else {
      features_->Predict(call->predict_request, &call->predict_response, deadline,
                         std::move(finished), cancel, call_context);
    }
    return;
  }
  *call->featurize_request.mutable_model() = pinned;
  *call->featurize_request.mutable_inputs() = *std::move(batch);
  features_->Featurize(call->featurize_request, &call->featurize_response, deadline,
                       std::move(finished), cancel, call_context);
}

absl::StatusOr<inference::ModelInferResponse> InferenceHandler::ModelInfer(
    const inference::ModelInferRequest& request, absl::Time deadline,
    const std::shared_ptr<CancelToken>& cancel, const CallContext& call) const {
  inference::ModelInferResponse response;
  absl::Status status;
  absl::Notification finished;
  ModelInfer(
      request, &response, deadline,
      [&status, &finished](absl::Status s) {
        status = std::move(s);
        finished.Notify();
      },
      cancel, call);
  finished.WaitForNotification();
  if (!status.ok()) return status;
  return response;
}

}  // namespace invariant::server
