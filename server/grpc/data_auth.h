// data_auth.h: the gRPC port's credentials and the data-path bearer token
// (--data_token_file), checked by gRPC core on a call's request headers,
// before the call reaches the application and before its message is read.
//
// GrpcPortCredentials are the credentials of the gRPC port: plaintext, or TLS
// with optional required client certificates (GrpcPortTls). They are made
// with gRPC's C API (grpc_insecure_server_credentials_create, or
// grpc_ssl_server_credentials_create_with_options) because only there can a
// plaintext port carry an auth metadata processor (gRPC 1.51's C++
// InsecureServerCredentials()->SetAuthMetadataProcessor asserts). With a
// DataTokenGate (RequireDataToken), the processor
// (grpc_server_credentials_set_auth_metadata_processor) runs in core's server
// auth filter on every call's initial metadata, ":path" included, before the
// server matches the call to a method. A refused call ends there: no handler,
// reactor or interceptor sees it and no request message is read, so an
// unauthenticated call costs its headers (plus whatever DATA frames the client
// sent within the HTTP/2 flow-control window before the refusal reached it).
//
// The decision, DataTokenGate::Check, FAILS CLOSED:
//   * a call to one of DataTokenPolicy::open_services (server_grpc.cc: health,
//     both reflection services, and ModelAdmin, whose handlers check the admin
//     token themselves) or open_methods (the repository extension's methods
//     of inference.GRPCInferenceService, admin token too) passes without a
//     data token;
//   * every other call (FeatureService, inference.GRPCInferenceService, any
//     service or method added later, an unknown path) needs exactly one
//     "authorization: Bearer <data token>", compared in constant time
//     (auth.h's CheckBearerToken, never echoed). Otherwise UNAUTHENTICATED,
//     e.g. "authorization: expected metadata 'authorization: Bearer <data
//     token>', received none". A call without exactly one ":path" is refused
//     too (HTTP/2 requires one; core rejects the rest before the gate).
// The processor consumes no metadata: handlers still see "authorization"
// (ModelAdmin compares it with the admin token, which may differ).
//
// Metrics: the metrics interceptor (metrics_interceptor.h) never sees a call
// refused here, so the gate counts it itself, as the interceptor would have:
// grpc_server_started_total and grpc_server_handled_total with
// grpc_code="UNAUTHENTICATED" (grpc_server_handling_seconds observes 0),
// labelled by method for the methods of DataTokenPolicy::labelled and
// "unknown" for every other path, so no client can create a series. Calls
// that pass are counted by the interceptor as usual. Not counted anywhere:
// calls that core refuses before the gate (malformed HTTP/2, oversized
// headers) and connections that fail the TLS handshake.
//
// Errors: MakeGrpcPortCredentials returns INTERNAL if core cannot create the
// credentials; bad TLS material shows when the port is added (the builder's
// port stays 0), as with grpc::SslServerCredentials.
//
// Thread-safety: a DataTokenGate is immutable after construction and Check /
// Admit run concurrently on gRPC core threads (ServerMetrics is thread-safe).
// RequireDataToken must be called before the server is built; the
// credentials keep the gate alive for as long as core holds them.
#ifndef INVARIANT_SERVER_GRPC_DATA_AUTH_H_
#define INVARIANT_SERVER_GRPC_DATA_AUTH_H_

#include <google/protobuf/descriptor.h>
#include <grpc/grpc_security.h>
#include <grpcpp/security/server_credentials.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/metrics/metrics.h"

namespace invariant::server {

struct DataTokenPolicy {
  std::string token;  // not empty
  // Full service names ("grpc.health.v1.Health") whose calls need no data
  // token. Everything else needs it.
  std::vector<std::string> open_services;
  // Full method paths ("/inference.GRPCInferenceService/RepositoryIndex")
  // whose calls need no data token: their handlers check the admin token.
  std::vector<std::string> open_methods;
  // The services whose methods label the refusals by name (null entries are
  // skipped); every other path is counted as "unknown".
  std::vector<const google::protobuf::ServiceDescriptor*> labelled;
  ServerMetrics* metrics = nullptr;  // optional; must outlive the gate
};

class DataTokenGate {
 public:
  // One initial-metadata entry of a call: key (":path", "authorization", ...)
  // and value.
  using Header = std::pair<absl::string_view, absl::string_view>;

  explicit DataTokenGate(DataTokenPolicy policy);

  // OK when the call may proceed, UNAUTHENTICATED (naming the data token)
  // otherwise. No side effects.
  absl::Status Check(absl::Span<const Header> headers) const;
  // Check, and a refusal counted in the metrics.
  absl::Status Admit(absl::Span<const Header> headers) const;

 private:
  struct Labels {
    std::string service;
    std::string method;
    std::string type;
  };

  const DataTokenPolicy policy_;
  std::map<std::string, Labels, std::less<>> labels_;  // by path
  const Labels unknown_;
};

struct GrpcPortTls {
  std::string cert_chain_pem;
  std::string private_key_pem;
  std::string client_ca_pem;  // not empty: client certificates required and verified
};

class GrpcPortCredentials final : public grpc::ServerCredentials {
 public:
  // Use MakeGrpcPortCredentials (which checks that core made them).
  explicit GrpcPortCredentials(const std::optional<GrpcPortTls>& tls);
  ~GrpcPortCredentials() override;

  // Every call except those to the policy's open services needs the data
  // token, checked before the call is matched (see the top of this file).
  void RequireDataToken(std::shared_ptr<const DataTokenGate> gate);

  // Refused (logs and does nothing): C++ processors run after a thread hop
  // and cannot be set on plaintext credentials; use RequireDataToken.
  void SetAuthMetadataProcessor(
      const std::shared_ptr<grpc::AuthMetadataProcessor>& processor) override;

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override;

  friend absl::StatusOr<std::shared_ptr<GrpcPortCredentials>> MakeGrpcPortCredentials(
      const std::optional<GrpcPortTls>& tls);

  grpc_server_credentials* credentials_ = nullptr;  // owned; null if core refused
};

// Plaintext credentials when `tls` is empty, TLS ones otherwise.
absl::StatusOr<std::shared_ptr<GrpcPortCredentials>> MakeGrpcPortCredentials(
    const std::optional<GrpcPortTls>& tls);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_DATA_AUTH_H_
