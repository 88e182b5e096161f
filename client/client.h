// client.h: invariant::Client, the C++ client of invariant-server.
//
// One Client owns one gRPC channel, reused by every call (unary, async,
// streaming, health, admin). The public API uses only the standard library,
// gRPC and the generated protobuf messages of invariant/v1/*.proto — no
// Eigen, no Abseil. Every call returns the grpc::Status the server sent (or
// the transport's); the server's error messages name the field, the expected
// and the received value.
//
//   invariant::ClientOptions options;
//   options.deadline = std::chrono::seconds(2);
//   auto client = invariant::Client::Create("127.0.0.1:8500", options);
//   std::vector<float> features;
//   grpc::Status s = client->Featurize("digits", rows, x, &features);
//
// Models of sound (GetModelMetadataResponse.audio set) take clips instead of
// rows: build each v1::AudioClip with WavClip, FloatClip or Int16Clip and call
// FeaturizeClips / PredictClips (one output row per clip). The server decodes,
// resamples and turns each clip into the model's row; this library only packs
// the bytes.
//
// Thread-safety: a Client may be used from any number of threads at once.
#ifndef INVARIANT_CLIENT_CLIENT_H_
#define INVARIANT_CLIENT_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "invariant/v1/feature_service.grpc.pb.h"
#include "invariant/v1/model_admin_service.grpc.pb.h"

namespace invariant {

struct ClientOptions {
  // Deadline of each call, from its start; zero = no deadline.
  std::chrono::milliseconds deadline{10000};
  // TLS: on when `tls` is true. Root certificates (PEM contents; empty = the
  // system roots), and for mTLS the client certificate chain and key (PEM).
  bool tls = false;
  std::string tls_root_certs_pem;
  std::string tls_client_cert_pem;
  std::string tls_client_key_pem;
  // Overrides the host name checked against the server certificate (tests).
  std::string tls_server_name_override;
  // Sent as "authorization: Bearer <token>" on every call when not empty.
  std::string bearer_token;
  // Largest message sent or received.
  int max_message_bytes = 64 << 20;
  // gRPC service config JSON (load balancing, retry policy); empty = none.
  // DefaultRetryServiceConfig() retries UNAVAILABLE on FeatureService.
  std::string service_config_json;
};

// One clip for an audio model (v1::AudioClip; docs/open-inference.md).
//   WavClip    a whole WAV file's bytes (the server decodes it; its own rate wins)
//   FloatClip  mono samples in [−1, 1] at `sample_rate` Hz, sent as float32_le
//   Int16Clip  mono 16-bit PCM samples at `sample_rate` Hz, sent as int16_le
//              (the server scales them by 1/32768, as it does a 16-bit WAV)
// sample_rate 0 means the model's rate. Nothing is checked here: the server
// refuses a bad clip with INVALID_ARGUMENT naming inputs.clips[i].
v1::AudioClip WavClip(std::string wav_bytes);
v1::AudioClip FloatClip(const std::vector<float>& samples, int sample_rate = 0);
v1::AudioClip Int16Clip(const std::vector<int16_t>& samples, int sample_rate = 0);

// A gRPC service config retrying UNAVAILABLE FeatureService calls up to 3
// attempts with exponential backoff (0.05 s → 1 s).
std::string DefaultRetryServiceConfig();

// The result of an asynchronous call.
template <typename Response>
struct CallResult {
  grpc::Status status;
  Response response;
};

// A bidirectional stream: write a request, read its response, in order.
// Not thread-safe; one user at a time. Call Finish() once at the end.
template <typename Request, typename Response>
class Stream {
 public:
  Stream(std::unique_ptr<grpc::ClientContext> context,
         std::unique_ptr<grpc::ClientReaderWriter<Request, Response>> stream)
      : context_(std::move(context)), stream_(std::move(stream)) {}
  // Sends a request; false when the stream is broken (see Finish()).
  bool Write(const Request& request) { return stream_->Write(request); }
  // Reads the next response; false at the end of the stream or on error.
  bool Read(Response* response) { return stream_->Read(response); }
  // Writes `request` and reads its response.
  bool Call(const Request& request, Response* response) { return Write(request) && Read(response); }
  // Half-closes and returns the stream's final status.
  grpc::Status Finish() {
    stream_->WritesDone();
    return stream_->Finish();
  }

 private:
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<Request, Response>> stream_;
};

using FeaturizeStream = Stream<v1::FeaturizeRequest, v1::FeaturizeResponse>;
using PredictStream = Stream<v1::PredictRequest, v1::PredictResponse>;

class Client {
 public:
  // A client of `target` ("host:port", or any gRPC target URI). Never null;
  // the channel connects lazily, so a wrong target shows up as UNAVAILABLE.
  static std::unique_ptr<Client> Create(const std::string& target,
                                        const ClientOptions& options = {});
  // A client over an existing channel.
  Client(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options);

  // Unary calls with full requests and responses.
  grpc::Status Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response);
  grpc::Status Predict(const v1::PredictRequest& request, v1::PredictResponse* response);

  // Convenience: `num_rows` rows of `x` (num_rows · input_dim floats, sent as
  // raw little-endian bytes) to the newest version of `model`.
  grpc::Status Featurize(const std::string& model, int64_t num_rows, const std::vector<float>& x,
                         std::vector<float>* features);
  grpc::Status Predict(const std::string& model, int64_t num_rows, const std::vector<float>& x,
                       std::vector<float>* scores,
                       std::vector<std::string>* predicted_classes = nullptr);

  // Convenience for audio models: one output row per clip of `clips`, sent as
  // InputBatch.clips to the newest version of `model`. The caller keeps each
  // request within the server's limits (--max_request_rows clips,
  // --max_message_bytes bytes).
  grpc::Status FeaturizeClips(const std::string& model, const std::vector<v1::AudioClip>& clips,
                              std::vector<float>* features);
  grpc::Status PredictClips(const std::string& model, const std::vector<v1::AudioClip>& clips,
                            std::vector<float>* scores,
                            std::vector<std::string>* predicted_classes = nullptr);

  // Asynchronous calls: the future is ready when the call completes.
  std::future<CallResult<v1::FeaturizeResponse>> FeaturizeAsync(v1::FeaturizeRequest request);
  std::future<CallResult<v1::PredictResponse>> PredictAsync(v1::PredictRequest request);
  // Asynchronous calls with a callback, run on a gRPC thread exactly once
  // (the callback must not block for long).
  void FeaturizeAsync(v1::FeaturizeRequest request,
                      std::function<void(grpc::Status, v1::FeaturizeResponse)> done);
  void PredictAsync(v1::PredictRequest request,
                    std::function<void(grpc::Status, v1::PredictResponse)> done);

  // Streams (the deadline applies to the whole stream).
  std::unique_ptr<FeaturizeStream> OpenFeaturizeStream();
  std::unique_ptr<PredictStream> OpenPredictStream();

  grpc::Status ListModels(v1::ListModelsResponse* response);
  // version 0 = newest ready version.
  grpc::Status GetModelMetadata(const std::string& model, int64_t version,
                                v1::GetModelMetadataResponse* response);
  // The version picked by `spec` (name, and a version or a version label).
  grpc::Status GetModelMetadata(const v1::ModelSpec& spec, v1::GetModelMetadataResponse* response);
  // grpc.health.v1.Health/Check of `service` ("" = liveness,
  // "invariant.v1.FeatureService" = readiness); `serving` is true for SERVING.
  grpc::Status Health(const std::string& service, bool* serving);

  // ModelAdmin (needs options.bearer_token when the server has one).
  grpc::Status ReloadModels(v1::ReloadModelsResponse* response);
  grpc::Status GetModelStatus(const std::string& model, v1::GetModelStatusResponse* response);

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  // A context with the deadline and the token applied, for calls on
  // channel() through other stubs (e.g. the Open Inference Protocol's).
  std::unique_ptr<grpc::ClientContext> NewContext() const;

 private:
  // Predict(request), then the scores and (when not null) the predicted classes.
  grpc::Status PredictInto(const v1::PredictRequest& request, std::vector<float>* scores,
                           std::vector<std::string>* predicted_classes);

  std::shared_ptr<grpc::Channel> channel_;
  ClientOptions options_;
  std::unique_ptr<v1::FeatureService::Stub> features_;
  std::unique_ptr<v1::ModelAdmin::Stub> admin_;
};

}  // namespace invariant

#endif  // INVARIANT_CLIENT_CLIENT_H_
