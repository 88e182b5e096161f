#include "server/handlers/feature_handler.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/base/status_macros.h"
#include "core/rls/linear_model.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

// Method names used as batch keys and metric labels.
constexpr char kFeaturize[] = "Featurize";
constexpr char kPredict[] = "Predict";
constexpr char kFeaturizePredict[] = "FeaturizePredict";

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

absl::StatusOr<Registry::Handle> FeatureHandler::ResolveWithHead(const v1::ModelSpec& spec) const {
  absl::StatusOr<Registry::Handle> handle = Resolve(spec);
  if (!handle.ok()) return handle.status();
  if (!handle->servable->has_head()) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", handle->name, "' version ", handle->version,
                     " has no linear head: expected a model with a head for Predict, received a "
                     "featurize-only model (use Featurize)"));
  }
  return handle;
}

absl::Status FeatureHandler::CheckResponseSize(int64_t rows, int64_t bytes_per_row) const {
  const int64_t budget = std::max<int64_t>(0, max_response_bytes_ - kResponseOverheadBytes);
  const int64_t max_rows = budget / std::max<int64_t>(1, bytes_per_row);
  if (rows <= max_rows) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "inputs: expected at most ", max_rows, " rows so that the response (", bytes_per_row,
      " bytes per row) fits max_message_bytes=", max_response_bytes_, ", received ", rows));
}

absl::StatusOr<std::shared_ptr<Lease>> FeatureHandler::AdmitMemory(int64_t rows, const Model& model,
                                                                   const Method& method,
                                                                   const char* field,
                                                                   const CallContext& call) const {
  auto lease = std::make_shared<Lease>();
  if (admission_.memory == nullptr) return lease;
  // The lease ends when the call does, or when the front end has encoded
  // the answer (CallContext::answer_leases).
  if (call.answer_leases != nullptr) {
    lease = std::shared_ptr<Lease>(new Lease(), [bag = call.answer_leases](Lease* held) {
      bag->Add(std::move(*held));
      delete held;
    });
  }
  const int64_t per_value = 4 + std::max<int64_t>(0, call.copy_bytes_per_value) +
                            std::max<int64_t>(0, call.answer_bytes_per_value);
  const int64_t per_row = 4 * model.input_dim() + method.out_dim * per_value;
  absl::StatusOr<Lease> granted = admission_.memory->Acquire(call.peer, rows * per_row, field, [&] {
    return absl::StrCat("send fewer rows per request (", per_row, " bytes each in flight for ",
                        method.name, " with this model and answer encoding)");
  });
  if (!granted.ok()) return granted.status();
  *lease = *std::move(granted);
  return lease;
}

void FeatureHandler::Run(const v1::InputBatch& inputs, const Registry::Handle& handle,
                         Method method, int64_t bytes_per_row, absl::Time deadline, DoneFn done,
                         const std::shared_ptr<CancelToken>& cancel,
                         const CallContext& call) const {
  const Model& model = *handle.servable;
  const int64_t clips = inputs.clips_size();
  const bool has_values = inputs.values_size() > 0;
  const bool has_raw = !inputs.raw_values().empty();
  const char* rows_field = has_raw ? "inputs.raw_values" : "inputs.values";
  if (clips > 0 && (has_values || has_raw)) {
    return done(absl::InvalidArgumentError(
        absl::StrCat("inputs: expected exactly one of values, raw_values or clips, received ",
                     clips, " clips and ", has_raw ? "raw_values" : "values")));
  }
  const audio::AudioFrontEnd* front_end = model.audio_front_end();
  if (front_end == nullptr) {
    if (clips > 0) {
      return done(absl::InvalidArgumentError(absl::StrCat(
          "inputs.clips: expected rows of input_dim=", model.input_dim(),
          " floats in inputs.values or inputs.raw_values (the model is not a model of sound: it "
          "has no audio front end), received ",
          clips, " clips")));
    }
    absl::StatusOr<DecodedRows> rows =
        DecodeInputBatch(inputs, model.input_dim(), max_request_rows_);
    if (!rows.ok()) return done(rows.status());
    if (absl::Status s = CheckResponseSize(rows->num_rows(), bytes_per_row); !s.ok()) {
      return done(s);
    }
    absl::StatusOr<std::shared_ptr<Lease>> memory =
        AdmitMemory(rows->num_rows(), model, method, rows_field, call);
    if (!memory.ok()) return done(memory.status());
    return Submit(std::make_shared<DecodedRows>(*std::move(rows)), handle, std::move(method),
                  *std::move(memory), deadline, std::move(done), cancel);
  }
  if (has_values || has_raw) {
    return done(absl::InvalidArgumentError(absl::StrCat(
        rows_field,
        ": expected clips in inputs.clips (the model is a model of sound: its rows of input_dim=",
        model.input_dim(), " come from its audio front end), received rows")));
  }
  if (clips <= max_request_rows_) {
    // Before any clip is decoded: the response, and the rows the clips become.
    if (absl::Status s = CheckResponseSize(clips, bytes_per_row); !s.ok()) return done(s);
    const int64_t row_bytes = static_cast<int64_t>(sizeof(float)) * model.input_dim();
    const int64_t max_clips = max_response_bytes_ / std::max<int64_t>(1, row_bytes);
    if (clips > max_clips) {
      return done(absl::InvalidArgumentError(absl::StrCat(
          "inputs.clips: expected at most ", max_clips, " clips so that their rows (", row_bytes,
          " bytes each after the audio front end) fit max_message_bytes=", max_response_bytes_,
          ", received ", clips)));
    }
  }
  const double max_clip_seconds = EffectiveMaxClipSeconds(*front_end, max_audio_clip_seconds_);
  const auto ask_less = [front_end] {
    return absl::StrCat(
        "send fewer or shorter clips per request (each clip costs its length plus the model's "
        "clip_seconds=",
        front_end->spec().clip_seconds(), ")");
  };
  if (admission_.audio != nullptr && admission_.audio->limit() > 0) {
    // Before a clip is looked at (a WAV header costs a parse): the clips'
    // spans alone are a lower bound of their cost.
    const auto spans = static_cast<int64_t>(std::ceil(clips * front_end->spec().clip_seconds()));
    if (spans > admission_.audio->limit()) {
      return done(admission_.audio->Acquire(call.peer, spans, "inputs.clips", ask_less).status());
    }
  }
  absl::StatusOr<double> seconds =
      PlanClipBatch(inputs, *front_end, max_request_rows_, max_clip_seconds);
  if (!seconds.ok()) return done(seconds.status());
  absl::StatusOr<std::shared_ptr<Lease>> memory =
      AdmitMemory(clips, model, method, "inputs.clips", call);
  if (!memory.ok()) return done(memory.status());
  auto audio_lease = std::make_shared<Lease>();
  if (admission_.audio != nullptr) {
    // Whole seconds, rounded up: the budget counts in seconds.
    absl::StatusOr<Lease> granted = admission_.audio->Acquire(
        call.peer, static_cast<int64_t>(std::ceil(*seconds)), "inputs.clips", ask_less);
    if (!granted.ok()) return done(granted.status());
    *audio_lease = *std::move(granted);
  }
  auto decode = [this, &inputs, handle, method = std::move(method), memory = *std::move(memory),
                 audio_lease, deadline, done = std::move(done), cancel,
                 max_clip_seconds]() mutable {
    const audio::AudioFrontEnd& front = *handle.servable->audio_front_end();
    auto keep_going = [&]() -> absl::Status {
      if (cancel != nullptr) {
        if (absl::Status reason = cancel->reason(); !reason.ok()) return reason;
      }
      if (absl::Now() >= deadline) {
        return absl::DeadlineExceededError(
            "deadline expired while the request's clips waited to be decoded or were decoded");
      }
      return absl::OkStatus();
    };
    absl::StatusOr<DecodedRows> rows =
        DecodeClipBatch(inputs, front, max_request_rows_, max_clip_seconds, keep_going);
    audio_lease->Release();
    if (!rows.ok()) {
      const absl::StatusCode code = rows.status().code();
      if ((code == absl::StatusCode::kCancelled || code == absl::StatusCode::kDeadlineExceeded) &&
          admission_.on_abandoned) {
        admission_.on_abandoned("decode", rows.status());
      }
      memory.reset();
      return done(rows.status());
    }
    Submit(std::make_shared<DecodedRows>(*std::move(rows)), handle, std::move(method),
           std::move(memory), deadline, std::move(done), cancel);
  };
  if (admission_.decoders == nullptr) return decode();
  admission_.decoders->Post(std::move(decode));
}

void FeatureHandler::Submit(std::shared_ptr<DecodedRows> rows, const Registry::Handle& handle,
                            Method method, std::shared_ptr<Lease> memory, absl::Time deadline,
                            DoneFn done, const std::shared_ptr<CancelToken>& cancel) const {
  const std::shared_ptr<const Model>& model = handle.servable;
  BatchJob job;
  job.key = model.get();
  job.method = method.name;
  job.label = handle.name;
  job.compute = std::move(method.compute);
  job.in_dim = model->input_dim();
  job.out_dim = method.out_dim;
  job.num_rows = rows->num_rows();
  job.x = rows->data();
  job.out = method.prepare(rows->num_rows());
  job.deadline = deadline;
  job.done = [rows, memory = std::move(memory), finish = std::move(method.finish),
              done](absl::Status status) mutable {
    if (status.ok() && finish) finish();
    memory.reset();  // given back, or handed to the front end's answer_leases
    done(status);
  };
  if (absl::Status s = batcher_->Submit(std::move(job), cancel); !s.ok()) done(s);
}

void FeatureHandler::Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                               absl::Time deadline, DoneFn done,
                               const std::shared_ptr<CancelToken>& cancel,
                               const CallContext& call) const {
  absl::StatusOr<Registry::Handle> handle = Resolve(request.model());
  if (!handle.ok()) return done(handle.status());
  std::shared_ptr<const Model> model = handle->servable;
  Method method;
  method.name = kFeaturize;
  method.out_dim = model->feature_dim();
  method.compute = [model](int64_t n, const float* x, float* out) { model->Featurize(n, x, out); };
  method.prepare = [response, name = handle->name, version = handle->version, model](int64_t rows) {
    response->set_model_name(name);
    response->set_model_version(version);
    response->set_num_rows(rows);
    response->set_feature_dim(model->feature_dim());
    response->mutable_features()->Resize(static_cast<int>(rows * model->feature_dim()), 0.0f);
    return response->mutable_features()->mutable_data();
  };
  Run(request.inputs(), *handle, std::move(method), 4 * model->feature_dim(), deadline,
      std::move(done), cancel, call);
}

void FeatureHandler::Predict(const v1::PredictRequest& request, v1::PredictResponse* response,
                             absl::Time deadline, DoneFn done,
                             const std::shared_ptr<CancelToken>& cancel,
                             const CallContext& call) const {
  absl::StatusOr<Registry::Handle> handle = ResolveWithHead(request.model());
  if (!handle.ok()) return done(handle.status());
  std::shared_ptr<const Model> model = handle->servable;
  Method method;
  method.name = kPredict;
  method.out_dim = model->output_dim();
  method.compute = [model](int64_t n, const float* x, float* out) { model->Predict(n, x, out); };
  method.prepare = [response, name = handle->name, version = handle->version, model](int64_t rows) {
    response->set_model_name(name);
    response->set_model_version(version);
    response->set_num_rows(rows);
    response->set_output_dim(model->output_dim());
    response->set_task(model->task());
    response->mutable_scores()->Resize(static_cast<int>(rows * model->output_dim()), 0.0f);
    return response->mutable_scores()->mutable_data();
  };
  method.finish = [model, response] { FillPredictedClasses(*model, response); };
  Run(request.inputs(), *handle, std::move(method), PredictBytesPerRow(*model), deadline,
      std::move(done), cancel, call);
}

void FeatureHandler::FeaturizeAndPredict(const v1::PredictRequest& request,
                                         v1::FeaturizeResponse* features,
                                         v1::PredictResponse* scores, absl::Time deadline,
                                         DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                                         const CallContext& call) const {
  absl::StatusOr<Registry::Handle> handle = ResolveWithHead(request.model());
  if (!handle.ok()) return done(handle.status());
  std::shared_ptr<const Model> model = handle->servable;
  const int64_t f = model->feature_dim(), t = model->output_dim();
  // Rows of [features | scores] from one compute, split into the two
  // responses once computed.
  auto rows_out = std::make_shared<std::vector<float>>();
  Method method;
  method.name = kFeaturizePredict;
  method.out_dim = f + t;
  method.compute = [model](int64_t n, const float* x, float* out) {
    model->FeaturizeAndPredict(n, x, out);
  };
  method.prepare = [features, scores, rows_out, name = handle->name, version = handle->version,
                    model, f, t](int64_t rows) {
    features->set_model_name(name);
    features->set_model_version(version);
    features->set_num_rows(rows);
    features->set_feature_dim(f);
    scores->set_model_name(name);
    scores->set_model_version(version);
    scores->set_num_rows(rows);
    scores->set_output_dim(t);
    scores->set_task(model->task());
    rows_out->assign(static_cast<size_t>(rows * (f + t)), 0.0f);
    return rows_out->data();
  };
  method.finish = [features, scores, rows_out, model, f, t] {
    const int64_t rows = features->num_rows();
    features->mutable_features()->Resize(static_cast<int>(rows * f), 0.0f);
    scores->mutable_scores()->Resize(static_cast<int>(rows * t), 0.0f);
    float* phi = features->mutable_features()->mutable_data();
    float* sc = scores->mutable_scores()->mutable_data();
    for (int64_t i = 0; i < rows; ++i) {
      const float* row = rows_out->data() + i * (f + t);
      std::copy_n(row, f, phi + i * f);
      std::copy_n(row + f, t, sc + i * t);
    }
    rows_out->clear();
    rows_out->shrink_to_fit();
    FillPredictedClasses(*model, scores);
  };
  // The combined rows are split into the two responses: one more copy of
  // every value in flight.
  CallContext priced = call;
  priced.copy_bytes_per_value += 4;
  Run(request.inputs(), *handle, std::move(method), 4 * f + PredictBytesPerRow(*model), deadline,
      std::move(done), cancel, priced);
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
