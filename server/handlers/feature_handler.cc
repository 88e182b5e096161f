#include "server/handlers/feature_handler.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/rls/linear_model.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

// Method names used as batch keys and metric labels.
constexpr char kFeaturize[] = "Featurize";
constexpr char kPredict[] = "Predict";

// Bytes a response row takes on the wire, bounded from above: packed floats,
// and for classifiers the predicted index and the longest class name.
constexpr int64_t kResponseOverheadBytes = 1024;  // names, dims, message framing

int64_t PredictBytesPerRow(const Model& model) {
  int64_t bytes = 4 * model.output_dim();
  if (model.task() == v1::TASK_CLASSIFICATION) {
    size_t longest = 0;
    for (const auto& name : model.manifest().head().class_names()) {
      longest = std::max(longest, name.size());
    }
    bytes += 16 + static_cast<int64_t>(std::max<size_t>(longest, 20));  // index, tag, length
  }
  return bytes;
}

// Fills the argmax index and class name of every row of a classifier (the
// head's ArgmaxRows: NaN never wins; a row of only NaN gets index -1 and an
// empty class name).
void FillPredictedClasses(const Model& model, v1::PredictResponse* response) {
  if (model.task() != v1::TASK_CLASSIFICATION) return;
  const auto& names = model.manifest().head().class_names();
  for (int32_t best :
       ArgmaxRows(response->num_rows(), response->output_dim(), response->scores().data())) {
    response->add_predicted_indices(best);
    if (best < 0) {
      response->add_predicted_classes("");
    } else {
      response->add_predicted_classes(best < names.size() ? names[best] : absl::StrCat(best));
    }
  }
}

}  // namespace

absl::StatusOr<Registry::Handle> FeatureHandler::Resolve(const v1::ModelSpec& spec) const {
  if (absl::Status s = ValidateModelSpec(spec); !s.ok()) return s;
  return registry_->Lookup(spec.name(), spec.version(), spec.version_label());
}

absl::Status FeatureHandler::CheckResponseSize(int64_t rows, int64_t bytes_per_row) const {
  const int64_t budget = std::max<int64_t>(0, max_response_bytes_ - kResponseOverheadBytes);
  const int64_t max_rows = budget / std::max<int64_t>(1, bytes_per_row);
  if (rows <= max_rows) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "inputs: expected at most ", max_rows, " rows so that the response (", bytes_per_row,
      " bytes per row) fits max_message_bytes=", max_response_bytes_, ", received ", rows));
}

absl::StatusOr<DecodedRows> FeatureHandler::DecodeInputs(const v1::InputBatch& inputs,
                                                         const Model& model,
                                                         int64_t bytes_per_row) const {
  const int64_t clips = inputs.clips_size();
  const bool has_values = inputs.values_size() > 0;
  const bool has_raw = !inputs.raw_values().empty();
  const char* rows_field = has_raw ? "inputs.raw_values" : "inputs.values";
  if (clips > 0 && (has_values || has_raw)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs: expected exactly one of values, raw_values or clips, received ",
                     clips, " clips and ", has_raw ? "raw_values" : "values"));
  }
  const audio::AudioFrontEnd* front_end = model.audio_front_end();
  if (front_end == nullptr) {
    if (clips > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs.clips: expected rows of input_dim=", model.input_dim(),
          " floats in inputs.values or inputs.raw_values (the model is not a model of sound: it "
          "has no audio front end), received ",
          clips, " clips"));
    }
    ASSIGN_OR_RETURN(DecodedRows rows,
                     DecodeInputBatch(inputs, model.input_dim(), max_request_rows_));
    RETURN_IF_ERROR(CheckResponseSize(rows.num_rows(), bytes_per_row));
    return rows;
  }
  if (has_values || has_raw) {
    return absl::InvalidArgumentError(absl::StrCat(
        rows_field,
        ": expected clips in inputs.clips (the model is a model of sound: its rows of input_dim=",
        model.input_dim(), " come from its audio front end), received rows"));
  }
  if (clips <= max_request_rows_) {
    // Before any clip is decoded: the response, and the rows the clips become.
    RETURN_IF_ERROR(CheckResponseSize(clips, bytes_per_row));
    const int64_t row_bytes = static_cast<int64_t>(sizeof(float)) * model.input_dim();
    const int64_t max_clips = max_response_bytes_ / std::max<int64_t>(1, row_bytes);
    if (clips > max_clips) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs.clips: expected at most ", max_clips, " clips so that their rows (", row_bytes,
          " bytes each after the audio front end) fit max_message_bytes=", max_response_bytes_,
          ", received ", clips));
    }
  }
  return DecodeClipBatch(inputs, *front_end, max_request_rows_,
                         EffectiveMaxClipSeconds(*front_end, max_audio_clip_seconds_));
}

void FeatureHandler::Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                               absl::Time deadline, DoneFn done,
                               const std::shared_ptr<CancelToken>& cancel) const {
  absl::StatusOr<Registry::Handle> handle = Resolve(request.model());
  if (!handle.ok()) return done(handle.status());
  std::shared_ptr<const Model> model = handle->servable;
  absl::StatusOr<DecodedRows> rows =
      DecodeInputs(request.inputs(), *model, 4 * model->feature_dim());
  if (!rows.ok()) return done(rows.status());
  auto decoded = std::make_shared<DecodedRows>(*std::move(rows));
  response->set_model_name(handle->name);
  response->set_model_version(handle->version);
  response->set_num_rows(decoded->num_rows());
  response->set_feature_dim(model->feature_dim());
  response->mutable_features()->Resize(static_cast<int>(decoded->num_rows() * model->feature_dim()),
                                       0.0f);
  BatchJob job;
  job.key = model.get();
  job.method = kFeaturize;
  job.label = handle->name;
  job.compute = [model](int64_t n, const float* x, float* out) { model->Featurize(n, x, out); };
  job.in_dim = model->input_dim();
  job.out_dim = model->feature_dim();
  job.num_rows = decoded->num_rows();
  job.x = decoded->data();
  job.out = response->mutable_features()->mutable_data();
  job.deadline = deadline;
  job.done = [decoded, done](absl::Status status) { done(status); };
  if (absl::Status s = batcher_->Submit(std::move(job), cancel); !s.ok()) done(s);
}

void FeatureHandler::Predict(const v1::PredictRequest& request, v1::PredictResponse* response,
                             absl::Time deadline, DoneFn done,
                             const std::shared_ptr<CancelToken>& cancel) const {
  absl::StatusOr<Registry::Handle> handle = Resolve(request.model());
  if (!handle.ok()) return done(handle.status());
  std::shared_ptr<const Model> model = handle->servable;
  if (!model->has_head()) {
    return done(absl::FailedPreconditionError(
        absl::StrCat("model '", handle->name, "' version ", handle->version,
                     " has no linear head: expected a model with a head for Predict, received a "
                     "featurize-only model (use Featurize)")));
  }
  absl::StatusOr<DecodedRows> rows =
      DecodeInputs(request.inputs(), *model, PredictBytesPerRow(*model));
  if (!rows.ok()) return done(rows.status());
  auto decoded = std::make_shared<DecodedRows>(*std::move(rows));
  response->set_model_name(handle->name);
  response->set_model_version(handle->version);
  response->set_num_rows(decoded->num_rows());
  response->set_output_dim(model->output_dim());
  response->set_task(model->task());
  response->mutable_scores()->Resize(static_cast<int>(decoded->num_rows() * model->output_dim()),
                                     0.0f);
  BatchJob job;
  job.key = model.get();
  job.method = kPredict;
  job.label = handle->name;
  job.compute = [model](int64_t n, const float* x, float* out) { model->Predict(n, x, out); };
  job.in_dim = model->input_dim();
  job.out_dim = model->output_dim();
  job.num_rows = decoded->num_rows();
  job.x = decoded->data();
  job.out = response->mutable_scores()->mutable_data();
  job.deadline = deadline;
  job.done = [decoded, model, response, done](absl::Status status) {
    if (status.ok()) FillPredictedClasses(*model, response);
    done(status);
  };
  if (absl::Status s = batcher_->Submit(std::move(job), cancel); !s.ok()) done(s);
}

absl::Status FeatureHandler::ListModels(v1::ListModelsResponse* response) const {
  FillModelList(*registry_, response);
  return absl::OkStatus();
}

absl::Status FeatureHandler::GetModelMetadata(const v1::GetModelMetadataRequest& request,
                                              v1::GetModelMetadataResponse* response) const {
  absl::StatusOr<Registry::Handle> handle = Resolve(request.model());
  if (!handle.ok()) return handle.status();
  FillModelMetadata(handle->name, handle->version, *handle->servable, response,
                    max_audio_clip_seconds_);
  return absl::OkStatus();
}

}  // namespace invariant::server
