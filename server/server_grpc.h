// server_grpc.h: the gRPC port's pieces that Server::Init (server.h) puts
// together, as functions of ServerOptions (server_options.h).
//
//   * MakeCredentials: plaintext, or TLS from the PEM files (NOT_FOUND
//     naming the flag, "tls_cert: cannot read '...'", when one cannot be
//     read); the data token is added later (RequireDataToken, data_auth.h).
//   * ConfigureGrpcPort: the listening address, no SO_REUSEPORT, message
//     limits, gRPC's memory quota and the connection age.
//   * DataTokenPolicyFor: which services and methods the data token covers
//     (fail closed: every one not listed as open).
//   * ServedGrpcServices / GrpcInterceptors: the services the port serves
//     (what reflection lists and the metrics label) and the interceptors
//     (parse errors, then metrics, then the request log when on).
// Nothing here binds or starts. Thread-safe: no state of their own.
#ifndef INVARIANT_SERVER_SERVER_GRPC_H_
#define INVARIANT_SERVER_SERVER_GRPC_H_

#include <grpcpp/server_builder.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/grpc/access_log_interceptor.h"
#include "server/grpc/data_auth.h"
#include "server/metrics/metrics.h"
#include "server/server_options.h"

namespace invariant::server {

absl::StatusOr<std::shared_ptr<GrpcPortCredentials>> MakeCredentials(const ServerOptions& options);

// Adds the listening port (options.host:options.port, its bound port written
// to `*bound_port` when the server starts) and the channel settings.
void ConfigureGrpcPort(const ServerOptions& options,
                       std::shared_ptr<GrpcPortCredentials> credentials, int* bound_port,
                       grpc::ServerBuilder* builder);

// The data token's gate: health, both reflections and ModelAdmin (its own
// admin token) open, and the repository extension's methods (the admin
// token, checked by their handlers); refusals counted in `metrics`.
DataTokenPolicy DataTokenPolicyFor(const std::string& token, ServerMetrics* metrics);

// Full names of every service of the gRPC port.
std::vector<std::string> ServedGrpcServices();

// The parse-error interceptor (before metrics: they see its code), then the
// metrics interceptor labelling the methods of `served` only, then, when
// `access_log` is not null, the request log's (access_log_interceptor.h;
// `records` is where the services find a call's record).
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
GrpcInterceptors(const std::vector<std::string>& served, ServerMetrics* metrics,
                 AccessLog* access_log = nullptr, GrpcCallRecords* records = nullptr);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_SERVER_GRPC_H_
