// access_log_interceptor.h: every gRPC call in the request log
// (server/access_log/access_log.h), with W3C trace context.
//
// A server interceptor (health, reflection and admin calls are logged too)
// that opens a RequestRecord when a call starts: its trace context from the
// call's `traceparent` / `tracestate` metadata (trace_context.h: continued
// when valid, a new trace otherwise), its method path and peer. The call's
// initial metadata carries `traceparent` back to the caller (the trace id,
// and this server's span id for the call), also for calls that fail. The
// bytes of every message sent are added up; when the status is sent the
// record is closed with its code (a call cancelled before, as the client saw
// it: DEADLINE_EXCEEDED once its deadline passed, CANCELLED otherwise, as
// the metrics count it) and the log decides whether to write it.
//
// The services find a call's record with GrpcCallRecords::Find (by its
// ServerContext) and put it in their CallContext, so the handler adds the
// model, rows, admission and timings, and add the bytes of the requests they
// receive. The record is Find-able from before the method handler runs
// until the interceptor goes with the call.
//
// Thread-safety: GrpcCallRecords is thread-safe; each interceptor is used by
// its call only.
#ifndef INVARIANT_SERVER_GRPC_ACCESS_LOG_INTERCEPTOR_H_
#define INVARIANT_SERVER_GRPC_ACCESS_LOG_INTERCEPTOR_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "server/access_log/access_log.h"
#include "server/access_log/request_record.h"

namespace invariant::server {

// The records of the calls in flight, by their ServerContext.
class GrpcCallRecords {
 public:
  // `context`'s record, or null (no log, or not a call in flight).
  std::shared_ptr<RequestRecord> Find(const grpc::ServerContextBase* context) const;
  void Add(const grpc::ServerContextBase* context, std::shared_ptr<RequestRecord> record);
  void Remove(const grpc::ServerContextBase* context);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, std::shared_ptr<RequestRecord>> records_
      ABSL_GUARDED_BY(mu_);
};

// `log` and `records` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeAccessLogInterceptorFactory(AccessLog* log, GrpcCallRecords* records);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_ACCESS_LOG_INTERCEPTOR_H_
