#include "server/grpc/access_log_interceptor.h"

#include <grpcpp/support/byte_buffer.h>

#include <string>
#include <utility>

#include "absl/time/clock.h"

namespace invariant::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

// The first value of metadata `key`, or empty.
absl::string_view FirstValue(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
                             const char* key) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

class AccessLogInterceptor final : public grpc::experimental::Interceptor {
 public:
  AccessLogInterceptor(grpc::experimental::ServerRpcInfo* info, AccessLog* log,
                       GrpcCallRecords* records)
      : log_(log),
        records_(records),
        context_(info->server_context()),
        record_(std::make_shared<RequestRecord>()) {
    record_->protocol = "grpc";
    record_->method = info->method() != nullptr ? info->method() : "";
  }

  ~AccessLogInterceptor() override {
    if (!closed_) Close(grpc::StatusCode::CANCELLED, "the call ended before its status was sent");
    if (added_) records_->Remove(context_);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      Open(*methods->GetRecvInitialMetadata());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      if (!added_) Open({});
      methods->GetSendInitialMetadata()->emplace(kTraceparentHeader, record_->trace.Traceparent());
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      if (const grpc::ByteBuffer* sent = methods->GetSerializedSendMessage(); sent != nullptr) {
        record_->bytes_out += static_cast<int64_t>(sent->Length());
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      grpc::StatusCode code = status.error_code();
      const absl::Time now = absl::Now();
      if (code != grpc::StatusCode::CANCELLED && code != grpc::StatusCode::DEADLINE_EXCEEDED &&
          context_ != nullptr && context_->IsCancelled()) {
        code = now >= absl::FromChrono(context_->deadline()) ? grpc::StatusCode::DEADLINE_EXCEEDED
                                                             : grpc::StatusCode::CANCELLED;
      }
      Close(code, status.error_message());
    }
    methods->Proceed();
  }

 private:
  // The trace context from the caller's metadata; the record Find-able.
  void Open(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
    record_->trace = NewTraceContext(FirstValue(metadata, kTraceparentHeader),
                                     FirstValue(metadata, kTracestateHeader));
    if (context_ != nullptr) {
      record_->peer = context_->peer();
      records_->Add(context_, record_);
      added_ = true;
    }
  }

  void Close(grpc::StatusCode code, const std::string& message) {
    closed_ = true;
    CallOutcome outcome;
    outcome.code = static_cast<absl::StatusCode>(code);
    outcome.message = message;
    outcome.end = absl::Now();
    log_->Close(*record_, std::move(outcome));
  }

  AccessLog* const log_;
  GrpcCallRecords* const records_;
  grpc::ServerContextBase* const context_;
  const std::shared_ptr<RequestRecord> record_;
  bool added_ = false;
  bool closed_ = false;
};

class AccessLogInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  AccessLogInterceptorFactory(AccessLog* log, GrpcCallRecords* records)
      : log_(log), records_(records) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new AccessLogInterceptor(info, log_, records_);
  }

 private:
  AccessLog* const log_;
  GrpcCallRecords* const records_;
};

}  // namespace

std::shared_ptr<RequestRecord> GrpcCallRecords::Find(const grpc::ServerContextBase* context) const {
  absl::MutexLock lock(&mu_);
  const auto it = records_.find(context);
  return it == records_.end() ? nullptr : it->second;
}

void GrpcCallRecords::Add(const grpc::ServerContextBase* context,
                          std::shared_ptr<RequestRecord> record) {
  absl::MutexLock lock(&mu_);
  records_[context] = std::move(record);
}

void GrpcCallRecords::Remove(const grpc::ServerContextBase* context) {
  absl::MutexLock lock(&mu_);
  records_.erase(context);
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeAccessLogInterceptorFactory(AccessLog* log, GrpcCallRecords* records) {
  return std::make_unique<AccessLogInterceptorFactory>(log, records);
}

}  // namespace invariant::server
