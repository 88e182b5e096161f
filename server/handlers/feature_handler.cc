#include "server/handlers/feature_handler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The v1 form of what the front end kept of each clip.
void AddClipSpeech(const std::vector<audio::ClipSpeech>& speech,
                   google::protobuf::RepeatedPtrField<v1::ClipSpeech>* out) {
  out->Reserve(static_cast<int>(speech.size()));
  for (const audio::ClipSpeech& clip : speech) {
    v1::ClipSpeech* s = out->Add();
    s->set_found(clip.found);
    s->set_start_seconds(clip.start_seconds);
    s->set_end_seconds(clip.end_seconds);
  }
}

}  // namespace

DoneFn FeatureHandler::Observed(const Registry::Handle& handle, DoneFn done,
                                RequestRecord* record) const {
  if (record != nullptr) record->SetModel(handle.name, handle.version);
  if (!observers_.on_request) return done;
  return [on_request = observers_.on_request, name = handle.name, version = handle.version,
          start = Clock::now(), done = std::move(done)](absl::Status status) {
    on_request(name, version, status.ok(), SecondsSince(start));
    done(std::move(status));
  };
}

std::string PredictedClassName(const Model& model, int32_t index) {
  if (index < 0) return "";
  const auto& names = model.manifest().head().class_names();
  return index < names.size() ? names[index] : absl::StrCat(index);
}

absl::StatusOr<Registry::Handle> FeatureHandler::Resolve(const InferRequest& request) const {
  const LookupFieldNames& fields = request.fields.model;
  if (absl::Status s = ValidateModelRef(request.model_name, request.model_version, fields);
      !s.ok()) {
    return s;
  }
  return registry_->Lookup(request.model_name, request.model_version, request.version_label,
                           fields);
}

absl::Status FeatureHandler::CheckResponseSize(int64_t rows, int64_t bytes_per_row,
                                               const std::string& field) const {
  const int64_t budget = std::max<int64_t>(0, max_response_bytes_ - kResponseOverheadBytes);
  const int64_t max_rows = budget / std::max<int64_t>(1, bytes_per_row);
  if (rows <= max_rows) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": expected at most ", max_rows, " rows so that the response (", bytes_per_row,
      " bytes per row) fits max_message_bytes=", max_response_bytes_, ", received ", rows));
}

absl::StatusOr<std::shared_ptr<Lease>> FeatureHandler::AdmitMemory(int64_t rows, const Model& model,
                                                                   const Method& method,
                                                                   const std::string& field,
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
  const int64_t per_row =
      4 * model.input_dim() + std::max(method.out_dim, method.answer_dim) * per_value;
  absl::StatusOr<Lease> granted = admission_.memory->Acquire(call.peer, rows * per_row, field, [&] {
    return absl::StrCat("send fewer rows per request (", per_row, " bytes each in flight for ",
                        method.name, " with this model and answer encoding)");
  });
  if (!granted.ok()) return NoteRefusal(granted.status(), *admission_.memory, method.record.get());
  *lease = *std::move(granted);
  return lease;
}

absl::Status FeatureHandler::NoteRefusal(absl::Status status, const InflightBudget& budget,
                                         RequestRecord* record) {
  if (record != nullptr && !status.ok())
    record->SetAdmission(absl::StrCat("refused:", budget.name()));
  return status;
}

void FeatureHandler::Run(std::shared_ptr<const InferRequest> request,
                         const Registry::Handle& handle, Method method, absl::Time deadline,
                         DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                         const CallContext& call) const {
  const InferFieldNames& names = request->fields;
  const int64_t clips = static_cast<int64_t>(request->clips.size());
  const int64_t images = static_cast<int64_t>(request->images.size());
  if ((clips > 0) + (images > 0) + request->has_rows() > 1) {
    std::vector<std::string> sent;
    if (request->has_rows()) sent.push_back(request->raw_values.empty() ? "values" : "raw_values");
    if (clips > 0) sent.push_back(absl::StrCat(clips, " clips"));
    if (images > 0) sent.push_back(absl::StrCat(images, " images"));
    return done(absl::InvalidArgumentError(
        absl::StrCat(names.inputs,
                     ": expected exactly one of values, raw_values, clips or images, "
                     "received ",
                     absl::StrJoin(sent, " and "))));
  }
  if (handle.servable->image_front_end() != nullptr) {
    return RunImages(std::move(request), handle, std::move(method), deadline, std::move(done),
                     cancel, call);
  }
  if (images > 0) {
    return done(absl::InvalidArgumentError(absl::StrCat(
        names.images, ": expected ",
        handle.servable->audio_front_end() != nullptr
            ? absl::StrCat("clips in ", names.clips, " (the model is a model of sound)")
            : absl::StrCat("rows of input_dim=", handle.servable->input_dim(), " floats in ",
                           names.values, " or ", names.raw_values),
        ": the model has no image front end, so it takes no image files; received ", images,
        " images")));
  }
  if (handle.servable->audio_front_end() == nullptr) {
    return RunRows(std::move(request), handle, std::move(method), deadline, std::move(done), cancel,
                   call);
  }
  RunClips(std::move(request), handle, std::move(method), deadline, std::move(done), cancel, call);
}

void FeatureHandler::RunRows(std::shared_ptr<const InferRequest> request,
                             const Registry::Handle& handle, Method method, absl::Time deadline,
                             DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                             const CallContext& call) const {
  const Model& model = *handle.servable;
  const InferFieldNames& names = request->fields;
  const int64_t clips = static_cast<int64_t>(request->clips.size());
  const std::string& rows_field = request->raw_values.empty() ? names.values : names.raw_values;
  if (clips > 0) {
    return done(absl::InvalidArgumentError(
        absl::StrCat(names.clips, ": expected rows of input_dim=", model.input_dim(), " floats in ",
                     names.values, " or ", names.raw_values,
                     " (the model is not a model of sound: it has no audio front end), received ",
                     clips, " clips")));
  }
  absl::StatusOr<DecodedRows> rows = DecodeRows(*request, model.input_dim(), max_request_rows_);
  if (!rows.ok()) return done(rows.status());
  if (method.record != nullptr) method.record->rows += rows->num_rows();
  if (request->response_bytes_per_row > 0) {
    if (absl::Status s =
            CheckResponseSize(rows->num_rows(), request->response_bytes_per_row, names.inputs);
        !s.ok()) {
      return done(s);
    }
  }
  absl::StatusOr<std::shared_ptr<Lease>> memory =
      AdmitMemory(rows->num_rows(), model, method, rows_field, call);
  if (!memory.ok()) return done(memory.status());
  Submit(std::make_shared<DecodedRows>(*std::move(rows)), std::move(request), handle,
         std::move(method), *std::move(memory), deadline, std::move(done), cancel);
}

absl::Status FeatureHandler::CheckDecodedCount(const InferRequest& request, const Model& model,
                                               int64_t count, const std::string& field,
                                               const char* inputs, const char* kind) const {
  if (count > max_request_rows_) return absl::OkStatus();  // the batch planners refuse them
  // Before any input is decoded: the response, and the rows the inputs become.
  if (request.response_bytes_per_row > 0) {
    RETURN_IF_ERROR(
        CheckResponseSize(count, request.response_bytes_per_row, request.fields.inputs));
  }
  const int64_t row_bytes = static_cast<int64_t>(sizeof(float)) * model.input_dim();
  const int64_t max_count = max_response_bytes_ / std::max<int64_t>(1, row_bytes);
  if (count > max_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": expected at most ", max_count, " ", inputs, " so that their rows (", row_bytes,
        " bytes each after the ", kind, " front end) fit max_message_bytes=", max_response_bytes_,
        ", received ", count));
  }
  return absl::OkStatus();
}

bool FeatureHandler::RecordDecoding(const absl::StatusOr<DecodedRows>& rows,
                                    const Registry::Handle& handle, double seconds,
                                    RequestRecord* record) const {
  const absl::Status& status = rows.status();
  if (record != nullptr) {
    record->decode_ns += static_cast<int64_t>(seconds * 1e9);
    if (status.ok()) record->rows += rows->num_rows();
  }
  if (status.ok()) {
    if (observers_.on_input) observers_.on_input(handle.name, handle.version, seconds);
    return true;
  }
  const absl::StatusCode code = status.code();
  if ((code == absl::StatusCode::kCancelled || code == absl::StatusCode::kDeadlineExceeded) &&
      admission_.on_abandoned) {
    admission_.on_abandoned("decode", status);
  }
  return false;
}

std::function<absl::Status()> FeatureHandler::KeepGoing(const std::shared_ptr<CancelToken>& cancel,
                                                        absl::Time deadline, const char* inputs) {
  return [cancel, deadline, inputs]() -> absl::Status {
    if (cancel != nullptr) {
      if (absl::Status reason = cancel->reason(); !reason.ok()) return reason;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("deadline expired while the request's ",
                                                      inputs,
                                                      " waited to be decoded or were decoded"));
    }
    return absl::OkStatus();
  };
}

void FeatureHandler::RunClips(std::shared_ptr<const InferRequest> request,
                              const Registry::Handle& handle, Method method, absl::Time deadline,
                              DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                              const CallContext& call) const {
  const Model& model = *handle.servable;
  const audio::AudioFrontEnd* front_end = model.audio_front_end();
  const InferFieldNames& names = request->fields;
  const int64_t clips = static_cast<int64_t>(request->clips.size());
  if (request->has_rows()) {
    const std::string& rows_field = request->raw_values.empty() ? names.values : names.raw_values;
    return done(absl::InvalidArgumentError(
        absl::StrCat(rows_field, ": expected clips in ", names.clips,
                     " (the model is a model of sound: its rows of input_dim=", model.input_dim(),
                     " come from its audio front end), received rows")));
  }
  if (method.record != nullptr) method.record->inputs += clips;
  if (absl::Status s = CheckDecodedCount(*request, model, clips, names.clips, "clips", "audio");
      !s.ok()) {
    return done(s);
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
      return done(
          NoteRefusal(admission_.audio->Acquire(call.peer, spans, names.clips, ask_less).status(),
                      *admission_.audio, method.record.get()));
    }
  }
  absl::StatusOr<double> seconds =
      PlanClipBatch(*request, *front_end, max_request_rows_, max_clip_seconds);
  if (!seconds.ok()) return done(seconds.status());
  absl::StatusOr<std::shared_ptr<Lease>> memory =
      AdmitMemory(clips, model, method, names.clips, call);
  if (!memory.ok()) return done(memory.status());
  auto audio_lease = std::make_shared<Lease>();
  if (admission_.audio != nullptr) {
    // Whole seconds, rounded up: the budget counts in seconds.
    absl::StatusOr<Lease> granted = admission_.audio->Acquire(
        call.peer, static_cast<int64_t>(std::ceil(*seconds)), names.clips, ask_less);
    if (!granted.ok()) {
      return done(NoteRefusal(granted.status(), *admission_.audio, method.record.get()));
    }
    *audio_lease = *std::move(granted);
  }
  auto decode = [this, request, handle, method = std::move(method), memory = *std::move(memory),
                 audio_lease, deadline, done = std::move(done), cancel,
                 max_clip_seconds]() mutable {
    DecodeClipsAndSubmit(std::move(request), handle, std::move(method), std::move(memory),
                         audio_lease, deadline, std::move(done), cancel, max_clip_seconds);
  };
  if (admission_.decoders == nullptr) return decode();
  admission_.decoders->Post(std::move(decode));
}

void FeatureHandler::DecodeClipsAndSubmit(
    std::shared_ptr<const InferRequest> request, const Registry::Handle& handle, Method method,
    std::shared_ptr<Lease> memory, const std::shared_ptr<Lease>& audio_lease, absl::Time deadline,
    DoneFn done, const std::shared_ptr<CancelToken>& cancel, double max_clip_seconds) const {
  const audio::AudioFrontEnd& front = *handle.servable->audio_front_end();
  const std::function<absl::Status()> keep_going = KeepGoing(cancel, deadline, "clips");
  const Clock::time_point decode_start = Clock::now();
  std::vector<audio::ClipSpeech> speech;
  absl::StatusOr<DecodedRows> rows =
      DecodeClipBatch(*request, front, max_request_rows_, max_clip_seconds, keep_going, &speech);
  audio_lease->Release();
  if (!RecordDecoding(rows, handle, SecondsSince(decode_start), method.record.get())) {
    memory.reset();
    return done(rows.status());
  }
  std::vector<int64_t> blank_rows;
  for (size_t i = 0; i < speech.size(); ++i) {
    if (!speech[i].found) blank_rows.push_back(static_cast<int64_t>(i));
  }
  if (method.speech && front.spec().voice_activity().enabled()) method.speech(speech);
  Submit(std::make_shared<DecodedRows>(*std::move(rows)), std::move(request), handle,
         std::move(method), std::move(memory), deadline, std::move(done), cancel,
         std::move(blank_rows));
}

void FeatureHandler::Submit(std::shared_ptr<DecodedRows> rows,
                            std::shared_ptr<const InferRequest> request,
                            const Registry::Handle& handle, Method method,
                            std::shared_ptr<Lease> memory, absl::Time deadline, DoneFn done,
                            const std::shared_ptr<CancelToken>& cancel,
                            std::vector<int64_t> blank_rows) const {
  const std::shared_ptr<const Model>& model = handle.servable;
  BatchJob job;
  job.key = model.get();
  job.method = method.name;
  job.label = handle.name;
  job.version = handle.version;
  job.compute = std::move(method.compute);
  job.in_dim = model->input_dim();
  job.out_dim = method.out_dim;
  job.num_rows = rows->num_rows();
  job.x = rows->data();
  job.out = method.prepare(rows->num_rows());
  job.deadline = deadline;
  if (method.record != nullptr) job.times = method.record->batch_times;
  job.done = [rows, request = std::move(request), memory = std::move(memory),
              finish = std::move(method.finish), done, on_output = observers_.on_output,
              name = handle.name, version = handle.version, out = job.out, out_dim = job.out_dim,
              blank_rows = std::move(blank_rows)](absl::Status status) mutable {
    if (status.ok()) {
      for (const int64_t row : blank_rows) {
        std::fill_n(out + row * out_dim, out_dim, std::numeric_limits<float>::quiet_NaN());
      }
      const Clock::time_point start = Clock::now();
      if (finish) finish();
      if (on_output) on_output(name, version, SecondsSince(start));
    }
    memory.reset();  // given back, or handed to the front end's answer_leases
    done(status);
  };
  RequestRecord* record = method.record.get();
  if (record != nullptr) record->SetAdmission("admitted");
  if (absl::Status s = batcher_->Submit(std::move(job), cancel); !s.ok()) {
    if (record != nullptr && absl::IsResourceExhausted(s))
      record->SetAdmission("refused:batch_queue");
    done(s);
  }
}

FeatureHandler::Method FeatureHandler::MethodFor(const InferRequest& request,
                                                 std::shared_ptr<const Model> model,
                                                 InferSinks sinks) {
  const int64_t f = model->feature_dim(), t = model->output_dim();
  Method method;
  method.speech = std::move(sinks.speech);
  if (!request.head) {
    method.name = kFeaturize;
    method.out_dim = f;
    method.compute = [model](int64_t n, const float* x, float* out) {
      model->Featurize(n, x, out);
    };
    method.prepare = std::move(sinks.features);
    return method;
  }
  // The scores go to their sink, or to a buffer of ours when only the
  // predicted classes are wanted. With the features as well, the batch job
  // computes the features straight into their sink and the head scores them
  // there once the job is done: rows are scored one at a time
  // (ApplyLinearModel), so the scores have the bits Predict gives, and
  // nothing is copied.
  struct Outputs {
    int64_t rows = 0;
    float* features = nullptr;
    float* scores = nullptr;
    std::vector<float> own_scores;
  };
  auto state = std::make_shared<Outputs>();
  const bool both = request.features;
  method.name = both ? kFeaturizePredict : kPredict;
  method.out_dim = both ? f : t;
  method.answer_dim = both ? f + t : t;
  if (both) {
    method.compute = [model](int64_t n, const float* x, float* out) {
      model->Featurize(n, x, out);
    };
  } else {
    method.compute = [model](int64_t n, const float* x, float* out) { model->Predict(n, x, out); };
  }
  method.prepare = [state, both, t, sinks](int64_t n) {
    state->rows = n;
    if (sinks.scores) {
      state->scores = sinks.scores(n);
    } else {
      state->own_scores.assign(static_cast<size_t>(n * t), 0.0f);
      state->scores = state->own_scores.data();
    }
    if (!both) return state->scores;
    state->features = sinks.features(n);
    return state->features;
  };
  method.finish = [state, both, t, model, predicted = std::move(sinks.predicted)] {
    if (both) ApplyLinearModel(model->head(), state->rows, state->features, state->scores);
    if (predicted && model->task() == v1::TASK_CLASSIFICATION) {
      predicted(ArgmaxRows(state->rows, t, state->scores));
    }
  };
  return method;
}

void FeatureHandler::Infer(const Registry::Handle& handle,
                           std::shared_ptr<const InferRequest> request, InferSinks sinks,
                           absl::Time deadline, DoneFn done,
                           const std::shared_ptr<CancelToken>& cancel,
                           const CallContext& call) const {
  const std::shared_ptr<const Model>& model = handle.servable;
  if (request->head && !model->has_head()) {
    return done(absl::FailedPreconditionError(
        absl::StrCat("model '", handle.name, "' version ", handle.version,
                     " has no linear head: expected a model with a head for Predict, received a "
                     "featurize-only model (use Featurize)")));
  }
  Method method = MethodFor(*request, model, std::move(sinks));
  method.record = call.record;
  Run(std::move(request), handle, std::move(method), deadline, std::move(done), cancel, call);
}

void FeatureHandler::Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                               absl::Time deadline, DoneFn done,
                               const std::shared_ptr<CancelToken>& cancel,
                               const CallContext& call) const {
  auto infer = std::make_shared<InferRequest>(InferRequestOfV1(request.model(), request.inputs()));
  infer->features = true;
  absl::StatusOr<Registry::Handle> handle = Resolve(*infer);
  if (!handle.ok()) return done(handle.status());
  done = Observed(*handle, std::move(done), call.record.get());
  std::shared_ptr<const Model> model = handle->servable;
  infer->response_bytes_per_row = 4 * model->feature_dim();
  InferSinks sinks;
  sinks.features = [response, name = handle->name, version = handle->version, model](int64_t rows) {
    response->set_model_name(name);
    response->set_model_version(version);
    response->set_num_rows(rows);
    response->set_feature_dim(model->feature_dim());
    response->mutable_features()->Resize(static_cast<int>(rows * model->feature_dim()), 0.0f);
    return response->mutable_features()->mutable_data();
  };
  sinks.speech = [response](const std::vector<audio::ClipSpeech>& speech) {
    AddClipSpeech(speech, response->mutable_speech());
  };
  Infer(*handle, std::move(infer), std::move(sinks), deadline, std::move(done), cancel, call);
}

void FeatureHandler::Predict(const v1::PredictRequest& request, v1::PredictResponse* response,
                             absl::Time deadline, DoneFn done,
                             const std::shared_ptr<CancelToken>& cancel,
                             const CallContext& call) const {
  auto infer = std::make_shared<InferRequest>(InferRequestOfV1(request.model(), request.inputs()));
  infer->head = true;
  absl::StatusOr<Registry::Handle> handle = Resolve(*infer);
  if (!handle.ok()) return done(handle.status());
  done = Observed(*handle, std::move(done), call.record.get());
  std::shared_ptr<const Model> model = handle->servable;
  infer->response_bytes_per_row = PredictBytesPerRow(*model);
  InferSinks sinks;
  sinks.scores = [response, name = handle->name, version = handle->version, model](int64_t rows) {
    response->set_model_name(name);
    response->set_model_version(version);
    response->set_num_rows(rows);
    response->set_output_dim(model->output_dim());
    response->set_task(model->task());
    response->mutable_scores()->Resize(static_cast<int>(rows * model->output_dim()), 0.0f);
    return response->mutable_scores()->mutable_data();
  };
  sinks.predicted = [response, model](std::vector<int32_t> best) {
    for (int32_t index : best) {
      response->add_predicted_indices(index);
      response->add_predicted_classes(PredictedClassName(*model, index));
    }
  };
  sinks.speech = [response](const std::vector<audio::ClipSpeech>& speech) {
    AddClipSpeech(speech, response->mutable_speech());
  };
  Infer(*handle, std::move(infer), std::move(sinks), deadline, std::move(done), cancel, call);
}

absl::Status FeatureHandler::ListModels(v1::ListModelsResponse* response) const {
  FillModelList(*registry_, response);
  return absl::OkStatus();
}

absl::Status FeatureHandler::GetModelMetadata(const v1::GetModelMetadataRequest& request,
                                              v1::GetModelMetadataResponse* response) const {
  absl::StatusOr<Registry::Handle> handle =
      Resolve(InferRequestOfV1(request.model(), v1::InputBatch::default_instance()));
  if (!handle.ok()) return handle.status();
  FillModelMetadata(handle->name, handle->version, *handle->servable, response,
                    max_audio_clip_seconds_, max_image_pixels_);
  return absl::OkStatus();
}

}  // namespace invariant::server
