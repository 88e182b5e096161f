#include "client/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <cstring>

#include "grpc/health/v1/health.grpc.pb.h"

namespace invariant {
namespace {

std::string RawBytes(const std::vector<float>& x) {
  return std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
}

// Little-endian bytes of `value`'s `n` low bytes, whatever the host's order.
void AppendLittleEndian(uint32_t value, int n, std::string* out) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

template <typename Request>
void FillClips(const std::string& model, const std::vector<v1::AudioClip>& clips,
               Request* request) {
  request->mutable_model()->set_name(model);
  request->mutable_inputs()->set_num_rows(static_cast<int64_t>(clips.size()));
  request->mutable_inputs()->mutable_clips()->Assign(clips.begin(), clips.end());
}

}  // namespace

v1::AudioClip WavClip(std::string wav_bytes) {
  v1::AudioClip clip;
  clip.set_wav(std::move(wav_bytes));
  return clip;
}

v1::AudioClip FloatClip(const std::vector<float>& samples, int sample_rate) {
  std::string bytes;
  bytes.reserve(samples.size() * 4);
  for (float x : samples) {
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof(bits));
    AppendLittleEndian(bits, 4, &bytes);
  }
  v1::AudioClip clip;
  clip.set_float32_le(std::move(bytes));
  clip.set_sample_rate(sample_rate);
  return clip;
}

v1::AudioClip Int16Clip(const std::vector<int16_t>& samples, int sample_rate) {
  std::string bytes;
  bytes.reserve(samples.size() * 2);
  for (int16_t x : samples) AppendLittleEndian(static_cast<uint16_t>(x), 2, &bytes);
  v1::AudioClip clip;
  clip.set_int16_le(std::move(bytes));
  clip.set_sample_rate(sample_rate);
  return clip;
}

std::string DefaultRetryServiceConfig() {
  return R"({
  "methodConfig": [{
    "name": [{"service": "invariant.v1.FeatureService"}],
    "retryPolicy": {
      "maxAttempts": 3,
      "initialBackoff": "0.05s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
})";
}

std::unique_ptr<Client> Client::Create(const std::string& target, const ClientOptions& options) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_root_certs_pem;
    ssl.pem_cert_chain = options.tls_client_cert_pem;
    ssl.pem_private_key = options.tls_client_key_pem;
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  if (!options.service_config_json.empty()) args.SetServiceConfigJSON(options.service_config_json);
  if (!options.tls_server_name_override.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name_override);
  }
  return std::make_unique<Client>(grpc::CreateCustomChannel(target, credentials, args), options);
}

Client::Client(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options)
    : channel_(std::move(channel)),
      options_(options),
      features_(v1::FeatureService::NewStub(channel_)),
      admin_(v1::ModelAdmin::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientContext> Client::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (options_.deadline.count() > 0) {
    context->set_deadline(std::chrono::system_clock::now() + options_.deadline);
  }
  if (!options_.bearer_token.empty()) {
    context->AddMetadata("authorization", "Bearer " + options_.bearer_token);
  }
  return context;
}

grpc::Status Client::Featurize(const v1::FeaturizeRequest& request,
                               v1::FeaturizeResponse* response) {
  return features_->Featurize(NewContext().get(), request, response);
}

grpc::Status Client::Predict(const v1::PredictRequest& request, v1::PredictResponse* response) {
  return features_->Predict(NewContext().get(), request, response);
}

grpc::Status Client::Featurize(const std::string& model, int64_t num_rows,
                               const std::vector<float>& x, std::vector<float>* features) {
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name(model);
  request.mutable_inputs()->set_num_rows(num_rows);
  request.mutable_inputs()->set_raw_values(RawBytes(x));
  v1::FeaturizeResponse response;
  grpc::Status status = Featurize(request, &response);
  if (status.ok()) features->assign(response.features().begin(), response.features().end());
  return status;
}

grpc::Status Client::PredictInto(const v1::PredictRequest& request, std::vector<float>* scores,
                                 std::vector<std::string>* predicted_classes) {
  v1::PredictResponse response;
  grpc::Status status = Predict(request, &response);
  if (!status.ok()) return status;
  scores->assign(response.scores().begin(), response.scores().end());
  if (predicted_classes != nullptr) {
    predicted_classes->assign(response.predicted_classes().begin(),
                              response.predicted_classes().end());
  }
  return status;
}

grpc::Status Client::Predict(const std::string& model, int64_t num_rows,
                             const std::vector<float>& x, std::vector<float>* scores,
                             std::vector<std::string>* predicted_classes) {
  v1::PredictRequest request;
  request.mutable_model()->set_name(model);
  request.mutable_inputs()->set_num_rows(num_rows);
  request.mutable_inputs()->set_raw_values(RawBytes(x));
  return PredictInto(request, scores, predicted_classes);
}

grpc::Status Client::FeaturizeClips(const std::string& model,
                                    const std::vector<v1::AudioClip>& clips,
                                    std::vector<float>* features) {
  v1::FeaturizeRequest request;
  FillClips(model, clips, &request);
  v1::FeaturizeResponse response;
  grpc::Status status = Featurize(request, &response);
  if (status.ok()) features->assign(response.features().begin(), response.features().end());
  return status;
}

grpc::Status Client::PredictClips(const std::string& model, const std::vector<v1::AudioClip>& clips,
                                  std::vector<float>* scores,
                                  std::vector<std::string>* predicted_classes) {
  v1::PredictRequest request;
  FillClips(model, clips, &request);
  return PredictInto(request, scores, predicted_classes);
}

namespace {

// The state of one asynchronous unary call, alive until its callback.
template <typename Request, typename Response>
struct AsyncCall {
  std::unique_ptr<grpc::ClientContext> context;
  Request request;
  Response response;
};

}  // namespace

void Client::FeaturizeAsync(v1::FeaturizeRequest request,
                            std::function<void(grpc::Status, v1::FeaturizeResponse)> done) {
  auto call = std::make_shared<AsyncCall<v1::FeaturizeRequest, v1::FeaturizeResponse>>();
  call->context = NewContext();
  call->request = std::move(request);
  features_->async()->Featurize(call->context.get(), &call->request, &call->response,
                                [call, done = std::move(done)](grpc::Status status) {
                                  done(status, std::move(call->response));
                                });
}

std::future<CallResult<v1::FeaturizeResponse>> Client::FeaturizeAsync(
    v1::FeaturizeRequest request) {
  auto promise = std::make_shared<std::promise<CallResult<v1::FeaturizeResponse>>>();
  auto future = promise->get_future();
  FeaturizeAsync(std::move(request),
                 [promise](grpc::Status status, v1::FeaturizeResponse response) {
                   promise->set_value({status, std::move(response)});
                 });
  return future;
}

void Client::PredictAsync(v1::PredictRequest request,
                          std::function<void(grpc::Status, v1::PredictResponse)> done) {
  auto call = std::make_shared<AsyncCall<v1::PredictRequest, v1::PredictResponse>>();
  call->context = NewContext();
  call->request = std::move(request);
  features_->async()->Predict(call->context.get(), &call->request, &call->response,
                              [call, done = std::move(done)](grpc::Status status) {
                                done(status, std::move(call->response));
                              });
}

std::future<CallResult<v1::PredictResponse>> Client::PredictAsync(v1::PredictRequest request) {
  auto promise = std::make_shared<std::promise<CallResult<v1::PredictResponse>>>();
  auto future = promise->get_future();
  PredictAsync(std::move(request), [promise](grpc::Status status, v1::PredictResponse response) {
    promise->set_value({status, std::move(response)});
  });
  return future;
}

std::unique_ptr<FeaturizeStream> Client::OpenFeaturizeStream() {
  auto context = NewContext();
  auto stream = features_->StreamFeaturize(context.get());
  return std::make_unique<FeaturizeStream>(std::move(context), std::move(stream));
}

std::unique_ptr<PredictStream> Client::OpenPredictStream() {
  auto context = NewContext();
  auto stream = features_->StreamPredict(context.get());
  return std::make_unique<PredictStream>(std::move(context), std::move(stream));
}

grpc::Status Client::ListModels(v1::ListModelsResponse* response) {
  return features_->ListModels(NewContext().get(), v1::ListModelsRequest(), response);
}

grpc::Status Client::GetModelMetadata(const std::string& model, int64_t version,
                                      v1::GetModelMetadataResponse* response) {
  v1::GetModelMetadataRequest request;
  request.mutable_model()->set_name(model);
  request.mutable_model()->set_version(version);
  return features_->GetModelMetadata(NewContext().get(), request, response);
}

grpc::Status Client::GetModelMetadata(const v1::ModelSpec& spec,
                                      v1::GetModelMetadataResponse* response) {
  v1::GetModelMetadataRequest request;
  *request.mutable_model() = spec;
  return features_->GetModelMetadata(NewContext().get(), request, response);
}

grpc::Status Client::Health(const std::string& service, bool* serving) {
  auto stub = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(NewContext().get(), request, &response);
  *serving = status.ok() && response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  return status;
}

grpc::Status Client::ReloadModels(v1::ReloadModelsResponse* response) {
  return admin_->ReloadModels(NewContext().get(), v1::ReloadModelsRequest(), response);
}

grpc::Status Client::GetModelStatus(const std::string& model,
                                    v1::GetModelStatusResponse* response) {
  v1::GetModelStatusRequest request;
  request.set_model_name(model);
  return admin_->GetModelStatus(NewContext().get(), request, response);
}

}  // namespace invariant
