#include "server/grpc/feature_service.h"

#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/byte_buffer.h>

#include <deque>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/common/status_util.h"
#include "server/grpc/cancellable_reactor.h"

namespace invariant::server {
namespace {

absl::Time DeadlineOf(const grpc::CallbackServerContext* context) {
  return absl::FromChrono(context->deadline());
}

// The bytes of `request` read, added to the call's record (may be null).
void AddBytesIn(const CallContext& call, const google::protobuf::MessageLite& request) {
  if (call.record != nullptr) call.record->bytes_in += static_cast<int64_t>(request.ByteSizeLong());
}

// Requests of one stream in flight at once (read, being computed, or answered
// but not yet written); reading pauses at this many, or once the requests in
// flight hold this many bytes (so a stream buffers at most about
// kMaxStreamBufferedBytes plus one message, however large its messages are).
// What a request holds after it is parsed is leased from the admission
// budgets under the stream's peer (FeatureHandler's memory lease, handed to
// the request's LeaseBag) until its response is written: a client that never
// reads its answers runs into its connection's share, and its later requests
// are refused, instead of the server holding their answers unbudgeted.
constexpr size_t kMaxStreamInFlight = 64;
constexpr size_t kMaxStreamBufferedBytes = 8 << 20;

// A pipelined bidirectional stream: it keeps reading while earlier requests
// compute (so the requests of one stream are batched together), and writes
// the responses strictly in request order. The first failed request, in
// order, ends the stream with its status after the responses before it; the
// stream is finished only when no computation still refers to it.
//
// Decisions are taken under `mu_`; the gRPC operations they call for
// (StartRead, StartWrite, Finish) are started after the lock is released.
//
// Messages travel as raw bytes and are parsed here: gRPC's typed callback
// streams report a message that does not parse exactly like the client's
// half-close (OnReadDone(false)), which would end the stream with OK. A
// message that does not parse ends the stream with INVALID_ARGUMENT after the
// responses before it.
template <typename Request, typename Response>
class PipelinedStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Answers one request; the admission leases it takes are handed to the
  // LeaseBag, which lives until the response is written.
  using Call =
      std::function<void(const Request&, Response*, absl::Time, DoneFn,
                         const std::shared_ptr<CancelToken>&, const std::shared_ptr<LeaseBag>&)>;

  PipelinedStreamReactor(Call call, absl::Time deadline)
      : call_(std::move(call)), deadline_(deadline), cancel_(std::make_shared<CancelToken>()) {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      actions.read = NextReadLocked();
    }
    Run(actions);
  }

  void OnReadDone(bool ok) override {
    // The slot just read into is this callback's alone until it is queued,
    // so it is parsed without holding the lock.
    std::unique_ptr<Slot> read;
    {
      absl::MutexLock lock(&mu_);
      read = std::move(next_);
    }
    bool parsed = false;
    if (ok) {
      read->bytes = read->wire.Length();
      parsed = grpc::SerializationTraits<Request>::Deserialize(&read->wire, &read->request).ok();
      read->wire.Clear();  // the parsed request is what is held (and leased) from here
    }
    Slot* slot = nullptr;
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      reading_ = false;
      if (!ok || failed_) {  // half-closed (or broken), or stopping after an error
        reads_done_ = true;
      } else {
        ++read_count_;
        buffered_bytes_ += read->bytes;
        if (parsed) {
          slot = read.get();
          ++computing_;
        } else {
          // Answered in order: the responses before it, then this status.
          read->done = true;
          read->status = absl::InvalidArgumentError(
              absl::StrCat("request: stream message ", read_count_, " (", read->bytes,
                           " bytes) does not parse as ", Request::descriptor()->full_name()));
          reads_done_ = true;
        }
        slots_.push_back(std::move(read));
        actions.read = NextReadLocked();
      }
      if (slot == nullptr) PumpLocked(actions);
    }
    Run(actions);
    if (slot != nullptr) {
      call_(
          slot->request, &slot->response, deadline_,
          [this, slot](absl::Status status) { OnComputed(slot, std::move(status)); }, cancel_,
          slot->leases);
    }
  }

  void OnWriteDone(bool ok) override {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        Fail(absl::CancelledError("stream: writing a response failed"));
      } else {
        buffered_bytes_ -= slots_.front()->bytes;
        slots_.pop_front();
        actions.read = NextReadLocked();
      }
      PumpLocked(actions);
    }
    Run(actions);
  }

  // The stream's queued requests leave the batch queue at once.
  void OnCancel() override {
    const std::shared_ptr<CancelToken> token = cancel_;  // outlives a Finish inside Cancel
    token->Cancel(CallCancelledStatus(deadline_));
  }

  void OnDone() override { delete this; }

 private:
  // One request, from its read to its response's write. What it holds is
  // the request (until computed), the response (until serialized), then the
  // serialized response (until written); `leases` (the handler's admission
  // leases) are given back when the slot is destroyed, after the write.
  struct Slot {
    grpc::ByteBuffer wire;  // the request as read, then the response to write
    Request request;
    Response response;
    size_t bytes = 0;  // of the request
    bool done = false;
    absl::Status status;
    std::shared_ptr<LeaseBag> leases = std::make_shared<LeaseBag>();
  };
  struct Actions {
    grpc::ByteBuffer* read = nullptr;
    const grpc::ByteBuffer* write = nullptr;
    bool finish = false;
    absl::Status status;
  };

  void OnComputed(Slot* slot, absl::Status status) {
    // The slot is this computation's alone until `done`; the request is no
    // longer needed, nor the response once serialized.
    slot->request = Request();
    if (status.ok()) {
      bool own_buffer = false;
      slot->wire.Clear();
      status = FromGrpcStatus(
          grpc::SerializationTraits<Response>::Serialize(slot->response, &slot->wire, &own_buffer));
    }
    slot->response = Response();
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      --computing_;
      slot->status = std::move(status);
      slot->done = true;
      PumpLocked(actions);
    }
    Run(actions);
  }

  void Fail(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (failed_) return;
    failed_ = true;
    final_status_ = std::move(status);
  }

  // A read to start now, or null (one at a time, bounded in-flight count).
  grpc::ByteBuffer* NextReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reading_ || reads_done_ || failed_ || finishing_ || slots_.size() >= kMaxStreamInFlight ||
        buffered_bytes_ >= kMaxStreamBufferedBytes) {
      return nullptr;
    }
    reading_ = true;
    next_ = std::make_unique<Slot>();
    return &next_->wire;
  }

  // Writes the next response in order if it is ready, and finishes the
  // stream when everything is written (or after an error, once no
  // computation is pending).
  void PumpLocked(Actions& actions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finishing_) return;
    if (!writing_ && !failed_ && !slots_.empty() && slots_.front()->done) {
      Slot* front = slots_.front().get();
      if (front->status.ok()) {
        writing_ = true;
        actions.write = &front->wire;
      } else {
        Fail(front->status);
      }
    }
    if (!writing_ && computing_ == 0 && (failed_ || (reads_done_ && slots_.empty()))) {
      finishing_ = true;
      actions.finish = true;
      actions.status = final_status_;
    }
  }

  void Run(const Actions& actions) {
    if (actions.read != nullptr) this->StartRead(actions.read);
    if (actions.write != nullptr) this->StartWrite(actions.write);
    if (actions.finish) this->Finish(ToGrpcStatus(actions.status));
  }

  const Call call_;
  const absl::Time deadline_;
  const std::shared_ptr<CancelToken> cancel_;
  absl::Mutex mu_;
  std::deque<std::unique_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);  // read, in order, not yet written
  std::unique_ptr<Slot> next_ ABSL_GUARDED_BY(mu_);               // the slot being read into
  size_t buffered_bytes_ ABSL_GUARDED_BY(mu_) = 0;                // request bytes of `slots_`
  int64_t read_count_ ABSL_GUARDED_BY(mu_) = 0;                   // messages read so far
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  int computing_ ABSL_GUARDED_BY(mu_) = 0;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status final_status_ ABSL_GUARDED_BY(mu_);
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

// The call's connection, for its share of the admission budgets; answers are
// protobuf floats. With `leases` (a unary reactor's), the memory lease lasts
// until gRPC is done with the call, the serialized answer included.
CallContext FeatureServiceImpl::CallOf(const grpc::CallbackServerContext* context,
                                       std::shared_ptr<LeaseBag> leases) const {
  CallContext call;
  if (records_ != nullptr) call.record = records_->Find(context);
  // The record read the peer already (a string gRPC core makes per call).
  call.peer = call.record != nullptr ? call.record->peer : context->peer();
  call.answer_bytes_per_value = 4;
  call.answer_leases = std::move(leases);
  return call;
}

grpc::ServerUnaryReactor* FeatureServiceImpl::Featurize(grpc::CallbackServerContext* context,
                                                        const v1::FeaturizeRequest* request,
                                                        v1::FeaturizeResponse* response) {
  auto* reactor = new CancellableUnaryReactor(DeadlineOf(context));
  CallContext call = CallOf(context, reactor->leases());
  AddBytesIn(call, *request);
  handler_->Featurize(
      *request, response, reactor->deadline(),
      [reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); }, reactor->token(),
      call);
  return reactor;
}

grpc::ServerUnaryReactor* FeatureServiceImpl::Predict(grpc::CallbackServerContext* context,
                                                      const v1::PredictRequest* request,
                                                      v1::PredictResponse* response) {
  auto* reactor = new CancellableUnaryReactor(DeadlineOf(context));
  CallContext call = CallOf(context, reactor->leases());
  AddBytesIn(call, *request);
  handler_->Predict(
      *request, response, reactor->deadline(),
      [reactor](absl::Status status) { reactor->Finish(ToGrpcStatus(status)); }, reactor->token(),
      call);
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* FeatureServiceImpl::StreamFeaturize(
    grpc::CallbackServerContext* context) {
  const FeatureHandler* handler = handler_;
  return new PipelinedStreamReactor<v1::FeaturizeRequest, v1::FeaturizeResponse>(
      [handler, call = CallOf(context)](const v1::FeaturizeRequest& request,
                                        v1::FeaturizeResponse* response, absl::Time deadline,
                                        DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                                        const std::shared_ptr<LeaseBag>& leases) {
        CallContext request_call = call;
        request_call.answer_leases = leases;
        AddBytesIn(request_call, request);
        handler->Featurize(request, response, deadline, std::move(done), cancel, request_call);
      },
      DeadlineOf(context));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* FeatureServiceImpl::StreamPredict(
    grpc::CallbackServerContext* context) {
  const FeatureHandler* handler = handler_;
  return new PipelinedStreamReactor<v1::PredictRequest, v1::PredictResponse>(
      [handler, call = CallOf(context)](const v1::PredictRequest& request,
                                        v1::PredictResponse* response, absl::Time deadline,
                                        DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                                        const std::shared_ptr<LeaseBag>& leases) {
        CallContext request_call = call;
        request_call.answer_leases = leases;
        AddBytesIn(request_call, request);
        handler->Predict(request, response, deadline, std::move(done), cancel, request_call);
      },
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
