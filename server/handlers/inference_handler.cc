#include "server/handlers/inference_handler.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "server/handlers/inference_tensors.h"

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

// The protocol's (name, version) strings as a request's model reference,
// naming the request's fields.
absl::Status SetProtocolModel(const std::string& name, const std::string& version,
                              const std::string& name_field, const std::string& version_field,
                              InferRequest* request) {
  absl::StatusOr<v1::ModelSpec> spec =
      ModelSpecFromProtocol(name, version, name_field, version_field);
  if (!spec.ok()) return spec.status();
  request->model_name = spec->name();
  request->model_version = spec->version();
  request->version_label = spec->version_label();
  request->fields.model = {name_field, version_field, version_field};
  return absl::OkStatus();
}

// The response's output tensors, written in place by the one batch job.
InferSinks ProtocolSinks(const std::vector<std::string>& outputs, const InferenceModelShape& shape,
                         std::shared_ptr<const Model> model, bool raw,
                         inference::ModelInferResponse* response) {
  InferSinks sinks;
  int class_output = -1, index_output = -1, status_output = -1, seconds_output = -1;
  for (int i = 0; i < static_cast<int>(outputs.size()); ++i) {
    const std::string& name = outputs[i];
    if (name == kClipStatusOutputName) status_output = i;
    if (name == kSpeechSecondsOutputName) seconds_output = i;
    if (name == kFeaturesOutputName) {
      sinks.features = [i, raw, response, dim = shape.feature_dim](int64_t rows) {
        return SizeFp32Output(i, rows * dim, raw, response);
      };
    } else if (name == kScoresOutputName) {
      sinks.scores = [i, raw, response, dim = shape.output_dim](int64_t rows) {
        return SizeFp32Output(i, rows * dim, raw, response);
      };
    } else if (name == kPredictedClassOutputName) {
      class_output = i;
    } else if (name == kPredictedIndexOutputName) {
      index_output = i;
    }
  }
  if (class_output >= 0 || index_output >= 0) {
    sinks.predicted = [class_output, index_output, raw, response,
                       model = std::move(model)](std::vector<int32_t> best) {
      if (index_output >= 0) FillInt32Output(index_output, best, raw, response);
      if (class_output >= 0) {
        std::vector<std::string> names;
        names.reserve(best.size());
        for (int32_t index : best) names.push_back(PredictedClassName(*model, index));
        FillBytesOutput(class_output, names, raw, response);
      }
    };
  }
  if (status_output >= 0 || seconds_output >= 0) {
    sinks.speech = [status_output, seconds_output, raw,
                    response](const std::vector<audio::ClipSpeech>& speech) {
      const auto n = static_cast<int64_t>(speech.size());
      if (status_output >= 0) {
        std::vector<std::string> status;
        for (const audio::ClipSpeech& clip : speech) {
          status.push_back(clip.found ? kClipStatusOk : kClipStatusNoSpeech);
        }
        FillBytesOutput(status_output, status, raw, response);
      }
      if (seconds_output >= 0) {
        float* seconds = SizeFp32Output(seconds_output, 2 * n, raw, response);
        for (int64_t i = 0; i < n; ++i) {
          seconds[2 * i] = static_cast<float>(speech[i].start_seconds);
          seconds[2 * i + 1] = static_cast<float>(speech[i].end_seconds);
        }
      }
    };
  }
  return sinks;
}

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
  for (const std::string& extension : extensions_) response->add_extensions(extension);
  if (statistics_) response->add_extensions("statistics");
  return absl::OkStatus();
}

absl::Status InferenceHandler::ModelStatistics(const inference::ModelStatisticsRequest& request,
                                               inference::ModelStatisticsResponse* response) const {
  if (!statistics_) {
    return absl::UnimplementedError("the statistics extension is not served");
  }
  return AnswerModelStatistics(*registry_, statistics_, request, response);
}

absl::Status InferenceHandler::ModelMetadata(const inference::ModelMetadataRequest& request,
                                             inference::ModelMetadataResponse* response) const {
  InferRequest model;
  if (absl::Status s =
          SetProtocolModel(request.name(), request.version(), kNameField, kVersionField, &model);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Registry::Handle> handle = features_->Resolve(model);
  if (!handle.ok()) return handle.status();
  v1::GetModelMetadataResponse metadata;
  FillModelMetadata(handle->name, handle->version, *handle->servable, &metadata,
                    features_->max_audio_clip_seconds(), features_->max_image_pixels());
  FillInferenceModelMetadata(metadata, ShapeOfModel(*handle->servable),
                             ReadyVersions(*registry_, handle->name), response);
  return absl::OkStatus();
}

void InferenceHandler::ModelInfer(const inference::ModelInferRequest& request,
                                  inference::ModelInferResponse* response, absl::Time deadline,
                                  DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                                  const CallContext& call_context) const {
  auto infer = std::make_shared<InferRequest>();
  if (absl::Status s = SetProtocolModel(request.model_name(), request.model_version(),
                                        kInferNameField, kInferVersionField, infer.get());
      !s.ok()) {
    return done(s);
  }
  absl::StatusOr<Registry::Handle> handle = features_->Resolve(*infer);
  if (!handle.ok()) return done(handle.status());
  done = features_->Observed(*handle, std::move(done), call_context.record.get());
  const InferenceModelShape shape = ShapeOfModel(*handle->servable);
  if (absl::Status s = DecodeInferInput(request, shape, features_->max_request_rows(), infer.get(),
                                        call_context.json_tensor_data);
      !s.ok()) {
    return done(s);
  }
  const int64_t rows = infer->declared_rows;
  absl::StatusOr<std::vector<std::string>> outputs = SelectOutputs(request, shape);
  if (!outputs.ok()) return done(outputs.status());
  if (absl::Status s = CheckInferResponseSize(rows, shape, *outputs, max_response_bytes_);
      !s.ok()) {
    return done(s);
  }
  if (call_context.max_answer_bytes > 0) {
    const int64_t per_value = call_context.answer_bytes_per_value;
    const int64_t values = rows * AnswerValuesPerRow(shape, *outputs);
    if (values * per_value > call_context.max_answer_bytes) {
      return done(absl::InvalidArgumentError(
          absl::StrCat("outputs: the answer would take up to ", values * per_value, " bytes (",
                       rows, " rows, ", values, " values of up to ", per_value,
                       " bytes each), over ", call_context.answer_limit_name, "=",
                       call_context.max_answer_bytes, "; ", call_context.answer_hint)));
    }
  }
  for (const std::string& name : *outputs) {
    if (name == kFeaturesOutputName) {
      infer->features = true;
    } else if (name != kClipStatusOutputName && name != kSpeechSecondsOutputName) {
      infer->head = true;
    }
  }
  // The response is laid out now and filled in place by the one batch job
  // that computes the features and the head's outputs together.
  const bool raw = infer->raw;
  response->set_model_name(handle->name);
  response->set_model_version(absl::StrCat(handle->version));
  response->set_id(request.id());
  AddOutputTensors(*outputs, rows, shape, raw, response);
  InferSinks sinks = ProtocolSinks(*outputs, shape, handle->servable, raw, response);
  if (!infer->features && !infer->head) {
    // Only the clips' speech is asked for: the features are computed into a
    // buffer of ours, held until the call is done.
    auto scratch = std::make_shared<std::vector<float>>();
    sinks.features = [scratch, dim = shape.feature_dim](int64_t rows) {
      scratch->assign(static_cast<size_t>(rows * dim), 0.0f);
      return scratch->data();
    };
    done = [scratch, done = std::move(done)](absl::Status status) { done(std::move(status)); };
  }
  features_->Infer(*handle, std::move(infer), std::move(sinks), deadline, std::move(done), cancel,
                   call_context);
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
