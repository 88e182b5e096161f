// feature_handler.h: the request logic of FeatureService, free of gRPC.
//
// Each call runs: validate the request → look the model up in the registry →
// submit the rows to the batcher → fill the response. `done` is called exactly
// once with the outcome — synchronously when the request is refused before
// queueing or computed inline on an idle server, otherwise from a batcher
// thread — and the request and response must stay valid until then. The
// handler holds the model's shared_ptr for the whole call, so a hot reload
// never frees a model a request still uses.
//
// Cancellation: `cancel` (may be null) is the call's CancelToken; cancelling
// it (gRPC's OnCancel) takes the request out of the batch queue at once and
// `done` runs with the token's status.
//
// Limits: at most `max_request_rows` rows per request, and a request whose
// response would exceed `max_response_bytes` (the server's max_message_bytes)
// is refused with INVALID_ARGUMENT before any output memory is allocated, so
// a small request cannot make the server allocate a huge response.
//
// Models of sound (Model::audio_front_end() set) take InputBatch.clips and
// nothing else; every other model takes rows and no clips (INVALID_ARGUMENT
// naming inputs.clips / inputs.values and what the model takes). The clips'
// cheap checks run on the calling thread (a WAV's header is read, not its
// samples); clips longer than the smaller of the model's max_clip_seconds and
// `max_audio_clip_seconds` are refused there. They are then decoded and put
// through the front end (audio_clips.h) on the admission's clip-decoding
// workers, never on the calling (transport) thread, and the rows go to the
// batcher from there.
//
// Admission by cost, before any heavy work (HandlerAdmission; every budget
// may be absent):
//   * memory: a request leases the bytes it will hold until its answer is
//     handed back: its rows (num_rows · input_dim · 4), its outputs
//     (num_rows · out_dim · 4) and their encoded answer
//     (num_rows · out_dim · CallContext::answer_bytes_per_value), under the
//     call's peer (one connection's share);
//   * audio: a request of clips leases the seconds of audio it will decode
//     (PlanClipBatch: its clips' lengths plus the front end's clip_seconds
//     per clip) until its decoding ends.
// Over a budget: RESOURCE_EXHAUSTED ("retry later"), or INVALID_ARGUMENT
// naming the field when the request alone exceeds the budget.
//
// Deadline and cancellation reach the decoding: a clip-decoding task that
// starts after the deadline, or whose call was cancelled, does nothing, and
// one running stops at its next clip; `done` then runs with
// DEADLINE_EXCEEDED or the token's status, and HandlerAdmission::on_abandoned
// counts it ("decode").
#ifndef INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_
#define INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "invariant/v1/feature_service.pb.h"
#include "server/admission/inflight_budget.h"
#include "server/admission/worker_queue.h"
#include "server/batching/batcher.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/model_metadata.h"

namespace invariant::server {

using DoneFn = std::function<void(absl::Status)>;

// What a front end knows of one call that the handler's admission needs.
struct CallContext {
  // The connection the call came on (gRPC's peer), for its share of the
  // budgets; empty: no share of its own.
  std::string peer;
  // Bytes one output value takes in the answer once the front end has
  // encoded it (4 for protobuf floats and binary tensors; up to 16 in JSON),
  // and in the copies the front end makes before encoding (4 for the Open
  // Inference Protocol's response message, 0 for invariant.v1's).
  int64_t answer_bytes_per_value = 4;
  int64_t copy_bytes_per_value = 0;
  // > 0: the largest encoded answer (answer_bytes_per_value per value) the
  // front end will write; a larger one is refused before any work with
  // INVALID_ARGUMENT naming `answer_limit_name` and `answer_hint` (how to ask
  // for less). Checked by InferenceHandler::ModelInfer.
  int64_t max_answer_bytes = 0;
  const char* answer_limit_name = "";
  const char* answer_hint = "";
  // When set, the memory lease is handed over here when the call ends
  // instead of given back, for the front end to give back once its answer
  // is encoded.
  std::shared_ptr<LeaseBag> answer_leases;
};

// The budgets and workers of admission (server/admission/); each may be null.
struct HandlerAdmission {
  InflightBudget* memory = nullptr;  // bytes, from admission to the answer
  InflightBudget* audio = nullptr;   // seconds of audio, queued for or in decoding
  WorkerQueue* decoders = nullptr;   // decodes clips; null: on the calling thread
  // Called when work stops because its call was cancelled or its deadline
  // passed, with the stage ("decode") and the status; may be empty.
  std::function<void(const char* stage, const absl::Status& status)> on_abandoned;
};

class FeatureHandler {
 public:
  // `registry` and `batcher` must outlive the handler.
  FeatureHandler(const Registry* registry, Batcher* batcher, int64_t max_request_rows,
                 int64_t max_response_bytes = std::numeric_limits<int32_t>::max(),
                 double max_audio_clip_seconds = kDefaultMaxAudioClipSeconds,
                 HandlerAdmission admission = {})
      : registry_(registry),
        batcher_(batcher),
        max_request_rows_(max_request_rows),
        max_response_bytes_(max_response_bytes),
        max_audio_clip_seconds_(max_audio_clip_seconds),
        admission_(std::move(admission)) {}

  void Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                 absl::Time deadline, DoneFn done,
                 const std::shared_ptr<CancelToken>& cancel = nullptr,
                 const CallContext& call = {}) const;
  // FAILED_PRECONDITION when the model has no head.
  void Predict(const v1::PredictRequest& request, v1::PredictResponse* response,
               absl::Time deadline, DoneFn done,
               const std::shared_ptr<CancelToken>& cancel = nullptr,
               const CallContext& call = {}) const;
  // The features and the head's outputs of the same rows in one batch job,
  // the features computed once (an Open Inference Protocol call asking for
  // both): `features` and `scores` are filled as Featurize and Predict fill
  // theirs, with the same bits; the model and inputs are `request`'s.
  // FAILED_PRECONDITION when the model has no head.
  void FeaturizeAndPredict(const v1::PredictRequest& request, v1::FeaturizeResponse* features,
                           v1::PredictResponse* scores, absl::Time deadline, DoneFn done,
                           const std::shared_ptr<CancelToken>& cancel = nullptr,
                           const CallContext& call = {}) const;
  absl::Status ListModels(v1::ListModelsResponse* response) const;
  // The most rows one request may carry (as configured).
  int64_t max_request_rows() const { return max_request_rows_; }
  // The server's limit on a clip's length in seconds (<= 0: the model's only).
  double max_audio_clip_seconds() const { return max_audio_clip_seconds_; }
  absl::Status GetModelMetadata(const v1::GetModelMetadataRequest& request,
                                v1::GetModelMetadataResponse* response) const;

 private:
  // What one method does with the rows: its name (batch key and metric
  // label), the width of its output, how it sizes the response for `rows`
  // rows (returning the output buffer), and what it fills in once computed.
  struct Method {
    const char* name;
    int64_t out_dim = 0;
    RowComputeFn compute;
    std::function<float*(int64_t rows)> prepare;
    std::function<void()> finish;  // may be empty
  };

  absl::StatusOr<Registry::Handle> Resolve(const v1::ModelSpec& spec) const;
  // The model `spec` names, which must have a head (FAILED_PRECONDITION
  // naming the featurize-only model otherwise).
  absl::StatusOr<Registry::Handle> ResolveWithHead(const v1::ModelSpec& spec) const;
  // INVALID_ARGUMENT when `rows` rows of `bytes_per_row` exceed max_response_bytes_.
  absl::Status CheckResponseSize(int64_t rows, int64_t bytes_per_row) const;
  // Checks, admits, decodes (clips on the decoding workers) and submits
  // `inputs` to the batcher for `method`; `done` runs once.
  void Run(const v1::InputBatch& inputs, const Registry::Handle& handle, Method method,
           int64_t bytes_per_row, absl::Time deadline, DoneFn done,
           const std::shared_ptr<CancelToken>& cancel, const CallContext& call) const;
  // The memory lease of `rows` rows of `model` for `method` (see above).
  absl::StatusOr<std::shared_ptr<Lease>> AdmitMemory(int64_t rows, const Model& model,
                                                     const Method& method, const char* field,
                                                     const CallContext& call) const;
  // Hands decoded rows to the batcher; the leases are held until `done`.
  void Submit(std::shared_ptr<DecodedRows> rows, const Registry::Handle& handle, Method method,
              std::shared_ptr<Lease> memory, absl::Time deadline, DoneFn done,
              const std::shared_ptr<CancelToken>& cancel) const;

  const Registry* registry_;
  Batcher* batcher_;
  const int64_t max_request_rows_;
  const int64_t max_response_bytes_;
  const double max_audio_clip_seconds_;
  const HandlerAdmission admission_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_
