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
// naming inputs.clips / inputs.values and what the model takes). The clips
// are checked, decoded and put through the front end on the calling thread
// (audio_clips.h), before the batcher, after the response size and the
// size of their rows (each clip's row, like a request of rows, must fit
// max_response_bytes) are checked; clips longer than the smaller of the
// model's max_clip_seconds and `max_audio_clip_seconds` are refused.
#ifndef INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_
#define INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "invariant/v1/feature_service.pb.h"
#include "server/batching/batcher.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/model_metadata.h"

namespace invariant::server {

using DoneFn = std::function<void(absl::Status)>;

class FeatureHandler {
 public:
  // `registry` and `batcher` must outlive the handler.
  FeatureHandler(const Registry* registry, Batcher* batcher, int64_t max_request_rows,
                 int64_t max_response_bytes = std::numeric_limits<int32_t>::max(),
                 double max_audio_clip_seconds = kDefaultMaxAudioClipSeconds)
      : registry_(registry),
        batcher_(batcher),
        max_request_rows_(max_request_rows),
        max_response_bytes_(max_response_bytes),
        max_audio_clip_seconds_(max_audio_clip_seconds) {}

  void Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                 absl::Time deadline, DoneFn done,
                 const std::shared_ptr<CancelToken>& cancel = nullptr) const;
  // FAILED_PRECONDITION when the model has no head.
  void Predict(const v1::PredictRequest& request, v1::PredictResponse* response,
               absl::Time deadline, DoneFn done,
               const std::shared_ptr<CancelToken>& cancel = nullptr) const;
  absl::Status ListModels(v1::ListModelsResponse* response) const;
  // The most rows one request may carry (as configured).
  int64_t max_request_rows() const { return max_request_rows_; }
  // The server's limit on a clip's length in seconds (<= 0: the model's only).
  double max_audio_clip_seconds() const { return max_audio_clip_seconds_; }
  absl::Status GetModelMetadata(const v1::GetModelMetadataRequest& request,
                                v1::GetModelMetadataResponse* response) const;

 private:
  absl::StatusOr<Registry::Handle> Resolve(const v1::ModelSpec& spec) const;
  // INVALID_ARGUMENT when `rows` rows of `bytes_per_row` exceed max_response_bytes_.
  absl::Status CheckResponseSize(int64_t rows, int64_t bytes_per_row) const;
  // The rows of `inputs` for `model` (rows as sent, or clips through the
  // model's front end), with the response size (`bytes_per_row`) checked.
  absl::StatusOr<DecodedRows> DecodeInputs(const v1::InputBatch& inputs, const Model& model,
                                           int64_t bytes_per_row) const;

  const Registry* registry_;
  Batcher* batcher_;
  const int64_t max_request_rows_;
  const int64_t max_response_bytes_;
  const double max_audio_clip_seconds_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_FEATURE_HANDLER_H_
