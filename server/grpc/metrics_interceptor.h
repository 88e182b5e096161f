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
//
// Bounded labels: the path of a call ("/package.Service/Method") is chosen
// by the client, served or not. Only the methods of the services given to
// MakeMetricsInterceptorFactory are labelled by name; every other call (an
// unknown service or method, whatever its path) is counted under the one
// label set grpc_service="unknown", grpc_method="unknown",
// grpc_type="unknown" (kUnknownRpcLabel). The set of series is therefore
// fixed when the server starts, and every series is created then at 0: no
// client can make /metrics grow.
//
// Thread-safety: the factory and its interceptors share only immutable
// labels and the (thread-safe) ServerMetrics.
#ifndef INVARIANT_SERVER_GRPC_METRICS_INTERCEPTOR_H_
#define INVARIANT_SERVER_GRPC_METRICS_INTERCEPTOR_H_

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <vector>

#include "server/metrics/metrics.h"

namespace invariant::server {

// The grpc_service, grpc_method and grpc_type of a call to a method the
// server does not serve.
inline constexpr char kUnknownRpcLabel[] = "unknown";

// The grpc_type label of `method`: "unary", "client_stream", "server_stream"
// or "bidi_stream".
const char* MethodTypeName(const google::protobuf::MethodDescriptor& method);

// Makes one MetricsInterceptor per call; `metrics` must outlive the server.
// `services` are the served services (null entries are skipped): their
// methods are the only grpc_service / grpc_method values besides "unknown".
// Creates their series and the "unknown" ones (each code) at 0.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeMetricsInterceptorFactory(
    const std::vector<const google::protobuf::ServiceDescriptor*>& services,
    ServerMetrics* metrics);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_METRICS_INTERCEPTOR_H_
