// feature_handler.h: the request logic of both APIs, free of any transport.
//
// The core is Resolve + Infer on a transport-free InferRequest
// (infer_request.h), which invariant.v1's Featurize / Predict (here) and the
// Open Inference Protocol's ModelInfer (inference_handler.h) decode their
// calls into. Each call runs: look the model up in the registry (once) →
// check the input → submit the rows to the batcher in one job → write the
// answer through the front end's sinks. `done` is called exactly
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
// Models of sound (Model::audio_front_end() set) take clips and nothing
// else; every other model takes rows and no clips (INVALID_ARGUMENT naming
// the clips or the values field, as the caller's protocol calls it, and
// what the model takes). The clips'
// cheap checks run on the calling thread (a WAV's header is read, not its
// samples); clips longer than the smaller of the model's max_clip_seconds and
// `max_audio_clip_seconds` are refused there. They are then decoded and put
// through the front end (audio_clips.h) on the admission's clip-decoding
// workers, never on the calling (transport) thread, and the rows go to the
// batcher from there. Models of image files (Model::image_front_end() set)
// take images and nothing else, the same way: each file's header is read
// on the calling thread (its declared pixels held to the smaller of the
// model's max_pixels and `max_image_pixels`, image_files.h) and the files
// are decoded and put through the image front end on the decoding workers.
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
//     per clip) until its decoding ends;
//   * images: a request of image files leases the pixels its files declare
//     (HandlerAdmission::images) and, from the memory budget, the bytes
//     decoding its largest file holds (ImageBatchCost::peak_bytes), both
//     priced from the headers and held until its decoding ends.
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
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "invariant/v1/feature_service.pb.h"
#include "server/access_log/request_record.h"
#include "server/admission/inflight_budget.h"
#include "server/admission/worker_queue.h"
#include "server/batching/batcher.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/handler_observers.h"
#include "server/handlers/image_files.h"
#include "server/handlers/infer_request.h"
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
  // The Open Inference Protocol's tensors came as REST JSON, whose typed
  // data is every datatype's "data" array: errors name inputs[k].data
  // rather than gRPC's inputs[k].contents.<type>_contents.
  bool json_tensor_data = false;
  // The call's record for the access log (request_record.h): the handler
  // adds the model it resolved, the rows and inputs, the admission decision
  // and the decode and batch times. Null: the call is not recorded.
  std::shared_ptr<RequestRecord> record;
};

// The budgets and workers of admission (server/admission/); each may be null.
struct HandlerAdmission {
  InflightBudget* memory = nullptr;  // bytes, from admission to the answer
  InflightBudget* audio = nullptr;   // seconds of audio, queued for or in decoding
  InflightBudget* images = nullptr;  // declared pixels of images, queued for or in decoding
  WorkerQueue* decoders = nullptr;   // decodes clips; null: on the calling thread
  // Called when work stops because its call was cancelled or its deadline
  // passed, with the stage ("decode") and the status; may be empty.
  std::function<void(const char* stage, const absl::Status& status)> on_abandoned;
};

// The server's limits on decoded inputs (each also bounded by the model's own).
struct InputLimits {
  double max_audio_clip_seconds = kDefaultMaxAudioClipSeconds;  // <= 0: the model's only
  int64_t max_image_pixels = kDefaultMaxImagePixels;            // <= 0: the model's only
};

// Where FeatureHandler::Infer writes its answer: the front end's own message
// fields, so nothing is copied after the compute (when both are asked, the
// head scores the features in their sink). Each function is called at most
// once and may be called on any thread.
struct InferSinks {
  // Before the compute: the buffer for rows × feature_dim features; must be
  // set when the request asks for the features.
  std::function<float*(int64_t rows)> features;
  // Before the compute: the buffer for rows × output_dim scores; may be
  // empty when only the predicted classes are wanted.
  std::function<float*(int64_t rows)> scores;
  // After the compute, for a classifier: each row's best output index (the
  // head's ArgmaxRows: NaN never wins, a row of NaN gets −1); may be empty.
  std::function<void(std::vector<int32_t> best)> predicted;
  // After the clips are decoded, for a model of sound with voice activity: what the front end
  // kept of each clip; may be empty. A clip without speech (found false)
  // has NaN features and scores and the predicted index −1.
  std::function<void(const std::vector<audio::ClipSpeech>& speech)> speech;
};

// The class name of output `index` of `model`'s head: its class name, the
// index in decimal when unnamed, "" for −1 (a row of NaN).
std::string PredictedClassName(const Model& model, int32_t index);

class FeatureHandler {
 public:
  // `registry` and `batcher` must outlive the handler.
  FeatureHandler(const Registry* registry, Batcher* batcher, int64_t max_request_rows,
                 int64_t max_response_bytes = std::numeric_limits<int32_t>::max(),
                 InputLimits limits = {}, HandlerAdmission admission = {},
                 HandlerObservers observers = {})
      : registry_(registry),
        batcher_(batcher),
        max_request_rows_(max_request_rows),
        max_response_bytes_(max_response_bytes),
        max_audio_clip_seconds_(limits.max_audio_clip_seconds),
        max_image_pixels_(limits.max_image_pixels),
        admission_(std::move(admission)),
        observers_(std::move(observers)) {}

  // The core, which both front ends call. Resolve: the ready version
  // `request` names (one registry lookup; errors name request.fields.model).
  absl::StatusOr<Registry::Handle> Resolve(const InferRequest& request) const;
  // `done`, reporting the request's end to HandlerObservers::on_request
  // (handler_observers.h) with the time since this call. Each front end
  // wraps its `done` once, right after Resolve found the version, so every
  // request that reached a model version is counted once, OK or failed
  // (Featurize, Predict, InferenceHandler::ModelInfer). The version is noted
  // in `record` (may be null).
  DoneFn Observed(const Registry::Handle& handle, DoneFn done,
                  RequestRecord* record = nullptr) const;
  // Answers `request` with the model `handle` resolved: checks the input
  // (rows or clips, as the model takes), admits it, decodes clips on the
  // decoding workers, and computes the features and/or the head's outputs
  // in ONE batch job (method "Featurize", "Predict" or "FeaturizePredict":
  // the features computed into their sink and scored there by the head when
  // the job is done), writing them through `sinks`. FAILED_PRECONDITION when the head is
  // asked of a featurize-only model. `request` is held until `done`.
  void Infer(const Registry::Handle& handle, std::shared_ptr<const InferRequest> request,
             InferSinks sinks, absl::Time deadline, DoneFn done,
             const std::shared_ptr<CancelToken>& cancel = nullptr,
             const CallContext& call = {}) const;

  // invariant.v1, decoded into an InferRequest (InferRequestOfV1) and answered by Infer.
  void Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                 absl::Time deadline, DoneFn done,
                 const std::shared_ptr<CancelToken>& cancel = nullptr,
                 const CallContext& call = {}) const;
  // FAILED_PRECONDITION when the model has no head.
  void Predict(const v1::PredictRequest& request, v1::PredictResponse* response,
               absl::Time deadline, DoneFn done,
               const std::shared_ptr<CancelToken>& cancel = nullptr,
               const CallContext& call = {}) const;
  absl::Status ListModels(v1::ListModelsResponse* response) const;
  // The most rows one request may carry (as configured).
  int64_t max_request_rows() const { return max_request_rows_; }
  // The server's limit on a clip's length in seconds (<= 0: the model's only).
  double max_audio_clip_seconds() const { return max_audio_clip_seconds_; }
  // The server's limit on an image's declared pixels (<= 0: the model's only).
  int64_t max_image_pixels() const { return max_image_pixels_; }
  absl::Status GetModelMetadata(const v1::GetModelMetadataRequest& request,
                                v1::GetModelMetadataResponse* response) const;

 private:
  // What one batch job computes: its name (batch key and metric label), the
  // width of its output, how it sizes the output for `rows` rows (returning
  // the buffer), and what it does once computed.
  struct Method {
    const char* name;
    int64_t out_dim = 0;
    int64_t answer_dim = 0;  // values per row the answer holds, when more than out_dim
    RowComputeFn compute;
    std::function<float*(int64_t rows)> prepare;
    std::function<void()> finish;                                       // may be empty
    std::function<void(const std::vector<audio::ClipSpeech>&)> speech;  // may be empty
    std::shared_ptr<RequestRecord> record;  // the call's (CallContext::record); may be null
  };

  // The batch job's method for what `request` asks of `model`, writing through `sinks`.
  static Method MethodFor(const InferRequest& request, std::shared_ptr<const Model> model,
                          InferSinks sinks);
  // INVALID_ARGUMENT naming `field` when `rows` rows of `bytes_per_row` exceed max_response_bytes_.
  absl::Status CheckResponseSize(int64_t rows, int64_t bytes_per_row,
                                 const std::string& field) const;
  // Checks, admits, decodes (clips on the decoding workers) and submits
  // `request`'s input to the batcher for `method`; `done` runs once.
  void Run(std::shared_ptr<const InferRequest> request, const Registry::Handle& handle,
           Method method, absl::Time deadline, DoneFn done,
           const std::shared_ptr<CancelToken>& cancel, const CallContext& call) const;
  // Run for a model without an audio front end (rows only), and for a model
  // of sound (clips only; decoded on the decoding workers).
  void RunRows(std::shared_ptr<const InferRequest> request, const Registry::Handle& handle,
               Method method, absl::Time deadline, DoneFn done,
               const std::shared_ptr<CancelToken>& cancel, const CallContext& call) const;
  void RunClips(std::shared_ptr<const InferRequest> request, const Registry::Handle& handle,
                Method method, absl::Time deadline, DoneFn done,
                const std::shared_ptr<CancelToken>& cancel, const CallContext& call) const;
  // Run for a model of image files (images only; decoded on the decoding
  // workers; feature_handler_images.cc).
  void RunImages(std::shared_ptr<const InferRequest> request, const Registry::Handle& handle,
                 Method method, absl::Time deadline, DoneFn done,
                 const std::shared_ptr<CancelToken>& cancel, const CallContext& call) const;
  // Before any of `request`'s `count` encoded inputs (`inputs`: "clips" or
  // "images", in the field `field`, for the model's `kind` front end:
  // "audio" or "image") is decoded: its response and the rows they become
  // fit max_response_bytes_ (checked for at most max_request_rows_ inputs;
  // the batch planners refuse more).
  absl::Status CheckDecodedCount(const InferRequest& request, const Model& model, int64_t count,
                                 const std::string& field, const char* inputs,
                                 const char* kind) const;
  // What the decoding workers ask before each input: the call's
  // cancellation, then its deadline (DEADLINE_EXCEEDED saying the `inputs`
  // waited or were being decoded).
  static std::function<absl::Status()> KeepGoing(const std::shared_ptr<CancelToken>& cancel,
                                                 absl::Time deadline, const char* inputs);
  // After a decoding of `handle`'s inputs (`rows`) that took `seconds`: OK reported
  // to HandlerObservers::on_input (true); a cancelled or expired one to
  // HandlerAdmission::on_abandoned ("decode"); false for any error.
  // The decode's time and rows are added to `record` (may be null).
  bool RecordDecoding(const absl::StatusOr<DecodedRows>& rows, const Registry::Handle& handle,
                      double seconds, RequestRecord* record) const;
  // `status` of an admission budget: a refusal noted in `record` (may be null)
  // as "refused:<budget>"; returned as it is.
  static absl::Status NoteRefusal(absl::Status status, const InflightBudget& budget,
                                  RequestRecord* record);
  // On a decoding worker: `request`'s images → rows, the leases given back, then Submit.
  void DecodeImagesAndSubmit(std::shared_ptr<const InferRequest> request,
                             const Registry::Handle& handle, Method method,
                             std::shared_ptr<Lease> memory,
                             std::shared_ptr<std::vector<Lease>> decoding, absl::Time deadline,
                             DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                             int64_t max_pixels) const;
  // On a decoding worker: `request`'s clips → rows (the deadline and `cancel`
  // asked before each clip), the audio lease given back, the speech reported
  // to method.speech, then Submit.
  void DecodeClipsAndSubmit(std::shared_ptr<const InferRequest> request,
                            const Registry::Handle& handle, Method method,
                            std::shared_ptr<Lease> memory,
                            const std::shared_ptr<Lease>& audio_lease, absl::Time deadline,
                            DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                            double max_clip_seconds) const;
  // The memory lease of `rows` rows of `model` for `method` (see above).
  absl::StatusOr<std::shared_ptr<Lease>> AdmitMemory(int64_t rows, const Model& model,
                                                     const Method& method, const std::string& field,
                                                     const CallContext& call) const;
  // Hands decoded rows to the batcher; the leases and `request` are held until `done`.
  // The outputs of the rows in `blank_rows` (clips without speech) are set to
  // NaN once computed, before method.finish.
  void Submit(std::shared_ptr<DecodedRows> rows, std::shared_ptr<const InferRequest> request,
              const Registry::Handle& handle, Method method, std::shared_ptr<Lease> memory,
              absl::Time deadline, DoneFn done, const std::shared_ptr<CancelToken>& cancel,
              std::vector<int64_t> blank_rows = {}) const;

  const Registry* registry_;
  Batcher* batcher_;
  const int64_t max_request_rows_;
  const int64_t max_response_bytes_;
  const double max_audio_clip_seconds_;
  const int64_t max_image_pixels_;
  const HandlerAdmission admission_;
  const HandlerObservers observers_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_
