// metrics_interceptor.h: grpc_server_* metrics for every RPC the server handles.
//
// A server interceptor (so health, reflection and admin calls are counted
// too) that records grpc_server_started_total when a call starts and
// grpc_server_handled_total / grpc_server_handling_seconds when its status is
// sent, labelled by service, method, type and code (e.g. "OK", "NOT_FOUND").
// A call cancelled before its status went out is counted as the client saw
// it: DEADLINE_EXCEEDED once its deadline passed, CANCELLED otherwise. A
// client's own deadline timer starts before the server's (which counts from
// the request's arrival), so a call whose client deadline fired may arrive
// as a cancel just before the server's deadline and be counted CANCELLED.
#ifndef INVARIANT_SERVER_METRICS_INTERCEPTOR_H_
#define INVARIANT_SERVER_METRICS_INTERCEPTOR_H_

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>

#include "server/metrics.h"

namespace invariant::server {

// Creates every grpc_server_* series of `service`'s methods (each code) at 0,
// labelled as the interceptor labels them.
void InitializeRpcMetrics(const google::protobuf::ServiceDescriptor& service,
                          ServerMetrics* metrics);

// Makes one MetricsInterceptor per call; `metrics` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeMetricsInterceptorFactory(ServerMetrics* metrics);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_METRICS_INTERCEPTOR_H_
