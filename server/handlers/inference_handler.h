// inference_handler.h: the Open Inference Protocol's request logic, free of any transport.
//
// Every method takes a protocol request message and fills the protocol
// response message or returns an absl::Status, so the gRPC service
// (inference_service.h) and an HTTP/JSON front end (after converting the JSON
// body to the request message) share it. ModelInfer is the protocol's front
// end over the same core as invariant.v1 (FeatureHandler::Resolve + Infer):
// one registry lookup; the tensor "input" checked against the loaded model
// and viewed in place in a transport-free InferRequest (inference_tensors.h,
// inference_audio.h); the response's output tensors laid out, then written
// in place by ONE batch job that computes the features and every head
// output asked for (raw when the input came raw). The clip decoding,
// admission, batcher and batch metrics are the core's. Errors keep the
// invariant.v1 codes (NOT_FOUND unknown model/version, INVALID_ARGUMENT
// malformed request, RESOURCE_EXHAUSTED full queue, DEADLINE_EXCEEDED) and
// are produced once, naming the protocol's fields (ProtocolFieldNames).
//
// ServerMetadata lists the extensions the handler serves ("statistics" when
// it has a StatisticsSource); each transport adds its own.
//
// Readiness: ServerLive is always true while the handler answers;
// ServerReady asks `server_ready`; ModelReady is false (not an error) for an
// unknown model or a version that is not ready.
//
// Thread-safety: every method may be called from any thread at once.
#ifndef INVARIANT_SERVER_HANDLERS_INFERENCE_HANDLER_H_
#define INVARIANT_SERVER_HANDLERS_INFERENCE_HANDLER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "inference/grpc_service.pb.h"
#include "server/handlers/feature_handler.h"
#include "server/handlers/model_metadata.h"
#include "server/handlers/statistics_handler.h"

namespace invariant::server {

class InferenceHandler {
 public:
  // `registry` and `features` must outlive the handler. `server_version` is
  // reported by ServerMetadata; `server_ready` answers ServerReady. A request
  // whose response (all its outputs together) would exceed
  // `max_response_bytes` (the server's max_message_bytes) is refused with
  // INVALID_ARGUMENT before anything is computed. `extensions`: the protocol
  // extensions the server serves on every binding, listed by ServerMetadata
  // (e.g. "model_repository"; a binding adds its own, such as REST's
  // "binary_tensor_data"). `statistics` answers the statistics extension
  // (statistics_handler.h), and ServerMetadata then lists "statistics" too;
  // empty: ModelStatistics is UNIMPLEMENTED.
  InferenceHandler(const Registry* registry, const FeatureHandler* features,
                   std::string server_version, std::function<bool()> server_ready,
                   int64_t max_response_bytes = std::numeric_limits<int32_t>::max(),
                   std::vector<std::string> extensions = {}, StatisticsSource statistics = {})
      : registry_(registry),
        features_(features),
        server_version_(std::move(server_version)),
        server_ready_(std::move(server_ready)),
        max_response_bytes_(max_response_bytes),
        extensions_(std::move(extensions)),
        statistics_(std::move(statistics)) {}

  absl::Status ServerLive(const inference::ServerLiveRequest& request,
                          inference::ServerLiveResponse* response) const;
  absl::Status ServerReady(const inference::ServerReadyRequest& request,
                           inference::ServerReadyResponse* response) const;
  absl::Status ModelReady(const inference::ModelReadyRequest& request,
                          inference::ModelReadyResponse* response) const;
  absl::Status ServerMetadata(const inference::ServerMetadataRequest& request,
                              inference::ServerMetadataResponse* response) const;
  absl::Status ModelMetadata(const inference::ModelMetadataRequest& request,
                             inference::ModelMetadataResponse* response) const;
  // The statistics extension (statistics_handler.h).
  absl::Status ModelStatistics(const inference::ModelStatisticsRequest& request,
                               inference::ModelStatisticsResponse* response) const;

  // Asynchronous: `done` runs exactly once (possibly before ModelInfer
  // returns, possibly on a batcher thread); `request` and `response` must
  // stay valid until then.
  // `cancel` (may be null): the call's CancelToken (see feature_handler.h).
  // `call`: the connection and answer encoding, for admission (feature_handler.h).
  void ModelInfer(const inference::ModelInferRequest& request,
                  inference::ModelInferResponse* response, absl::Time deadline, DoneFn done,
                  const std::shared_ptr<CancelToken>& cancel = nullptr,
                  const CallContext& call = {}) const;
  // Blocking form of ModelInfer for callers on their own worker threads
  // (an HTTP server): waits for the outcome. `cancel` (may be null) as above.
  absl::StatusOr<inference::ModelInferResponse> ModelInfer(
      const inference::ModelInferRequest& request, absl::Time deadline,
      const std::shared_ptr<CancelToken>& cancel = nullptr, const CallContext& call = {}) const;

 private:
  const Registry* registry_;
  const FeatureHandler* features_;
  const std::string server_version_;
  const std::function<bool()> server_ready_;
  const int64_t max_response_bytes_;
  const std::vector<std::string> extensions_;
  const StatisticsSource statistics_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_INFERENCE_HANDLER_H_
