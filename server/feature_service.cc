#include "server/feature_service.h"

#include <functional>

#include "server/status_util.h"

namespace invariant::server {
namespace {

absl::Time DeadlineOf(const grpc::CallbackServerContext* context) {
  return absl::FromChrono(context->deadline());
}

// A bidirectional stream that answers each request before reading the next.
template <typename Request, typename Response>
class SequentialStreamReactor final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  using Call = std::function<void(const Request&, Response*, absl::Time, DoneFn)>;

  SequentialStreamReactor(Call call, absl::Time deadline)
      : call_(std::move(call)), deadline_(deadline) {
    this->StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed: every request was answered
      this->Finish(grpc::Status::OK);
      return;
    }
    response_.Clear();
    call_(request_, &response_, deadline_, [this](absl::Status status) {
      if (status.ok()) {
        this->StartWrite(&response_);
      } else {
        this->Finish(ToGrpcStatus(status));
      }
    });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      this->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "stream: the write failed"));
      return;
    }
    this->StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  const Call call_;
  const absl::Time deadline_;
  Request request_;
  Response response_;
};

}  // namespace

grpc::ServerUnaryReactor* FeatureServiceImpl::Featurize(grpc::CallbackServerContext* context,
                                                        const v1::FeaturizeRequest* request,
                                                        v1::FeaturizeResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  handler_->Featurize(*request, response, DeadlineOf(context),
                      [reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); });
  return reactor;
}

grpc::ServerUnaryReactor* FeatureServiceImpl::Predict(grpc::CallbackServerContext* context,
                                                      const v1::PredictRequest* request,
                                                      v1::PredictResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  handler_->Predict(*request, response, DeadlineOf(context),
                    [reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); });
  return reactor;
}

grpc::ServerBidiReactor<v1::FeaturizeRequest, v1::FeaturizeResponse>*
FeatureServiceImpl::StreamFeaturize(grpc::CallbackServerContext* context) {
  const FeatureHandler* handler = handler_;
  return new SequentialStreamReactor<v1::FeaturizeRequest, v1::FeaturizeResponse>(
      [handler](const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                absl::Time deadline,
                DoneFn done) { handler->Featurize(request, response, deadline, std::move(done)); },
      DeadlineOf(context));
}

grpc::ServerBidiReactor<v1::PredictRequest, v1::PredictResponse>* FeatureServiceImpl::StreamPredict(
    grpc::CallbackServerContext* context) {
  const FeatureHandler* handler = handler_;
  return new SequentialStreamReactor<v1::PredictRequest, v1::PredictResponse>(
      [handler](const v1::PredictRequest& request, v1::PredictResponse* response,
                absl::Time deadline,
                DoneFn done) { handler->Predict(request, response, deadline, std::move(done)); },
      DeadlineOf(context));
}

grpc::ServerUnaryReactor* FeatureServiceImpl::ListModels(grpc::CallbackServerContext* context,
                                                         const v1::ListModelsRequest* /*request*/,
                                                         v1::ListModelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(handler_->ListModels(response)));
  return reactor;
}

grpc::ServerUnaryReactor* FeatureServiceImpl::GetModelMetadata(
    grpc::CallbackServerContext* context, const v1::GetModelMetadataRequest* request,
    v1::GetModelMetadataResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(handler_->GetModelMetadata(*request, response)));
  return reactor;
}

}  // namespace invariant::server
