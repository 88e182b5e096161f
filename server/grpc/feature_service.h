// feature_service.h: the gRPC FeatureService on the callback API.
//
// Thin handlers: convert the deadline, call FeatureHandler, convert the status
// once (status_util.h), finish. Streams are pipelined: the server keeps
// reading (up to 64 requests or 8 MiB of requests in flight per stream) while
// earlier requests compute, so one stream's requests are batched together;
// responses come one per request, in request order, and the first failed
// request (in order) ends the stream with its status after the responses
// before it. Stream messages are read as raw bytes and parsed here, so a
// message that does not parse ends its stream with INVALID_ARGUMENT (gRPC's
// typed callback streams cannot tell it from the client's half-close and
// would end the stream with OK).
//
// Budgets: a stream request's admission leases (FeatureHandler: rows,
// outputs and the encoded answer, under the call's peer) last until its
// response is written, as a unary call's last until gRPC is done with it, so
// answers a client does not read are held within its connection's share
// (--max_connection_inflight_bytes) and the server's (--max_inflight_bytes);
// past them, its next request ends the stream with RESOURCE_EXHAUSTED after
// the responses before it.
//
// Request log: with `records` (access_log_interceptor.h), each call's record
// goes to the handler in its CallContext and gets the bytes of the requests
// read (a stream's add up).
#ifndef INVARIANT_SERVER_GRPC_FEATURE_SERVICE_H_
#define INVARIANT_SERVER_GRPC_FEATURE_SERVICE_H_

#include "invariant/v1/feature_service.grpc.pb.h"
#include "server/grpc/access_log_interceptor.h"
#include "server/handlers/feature_handler.h"

namespace invariant::server {

// The callback service with the two streams taken as raw bytes.
using FeatureServiceBase =
    v1::FeatureService::WithCallbackMethod_Featurize<v1::FeatureService::WithCallbackMethod_Predict<
        v1::FeatureService::WithRawCallbackMethod_StreamFeaturize<
            v1::FeatureService::WithRawCallbackMethod_StreamPredict<
                v1::FeatureService::WithCallbackMethod_ListModels<
                    v1::FeatureService::WithCallbackMethod_GetModelMetadata<
                        v1::FeatureService::Service>>>>>>;

class FeatureServiceImpl final : public FeatureServiceBase {
 public:
  // `handler` and `records` (null: no request log) must outlive the service.
  explicit FeatureServiceImpl(const FeatureHandler* handler,
                              const GrpcCallRecords* records = nullptr)
      : handler_(handler), records_(records) {}

  grpc::ServerUnaryReactor* Featurize(grpc::CallbackServerContext* context,
                                      const v1::FeaturizeRequest* request,
                                      v1::FeaturizeResponse* response) override;
  grpc::ServerUnaryReactor* Predict(grpc::CallbackServerContext* context,
                                    const v1::PredictRequest* request,
                                    v1::PredictResponse* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StreamFeaturize(
      grpc::CallbackServerContext* context) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StreamPredict(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* context,
                                       const v1::ListModelsRequest* request,
                                       v1::ListModelsResponse* response) override;
  grpc::ServerUnaryReactor* GetModelMetadata(grpc::CallbackServerContext* context,
                                             const v1::GetModelMetadataRequest* request,
                                             v1::GetModelMetadataResponse* response) override;

 private:
  // The call's context for the handler: its peer, its answer's encoding,
  // `leases` (a unary reactor's) and its record.
  CallContext CallOf(const grpc::CallbackServerContext* context,
                     std::shared_ptr<LeaseBag> leases = nullptr) const;

  const FeatureHandler* handler_;
  const GrpcCallRecords* records_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_FEATURE_SERVICE_H_
