// auth.h: bearer tokens and the server's access decisions.
//
// Two optional tokens guard the gRPC port: the admin token (ModelAdmin) and
// the data token (FeatureService and inference.GRPCInferenceService). A
// caller presents one as the metadata "authorization: Bearer <token>"; it is
// compared in constant time and never echoed. grpc.health.v1 and reflection
// stay open (Kubernetes gRPC probes cannot send metadata), and so does the
// metrics port. The REST port checks the data token itself (rest_service.h).
//
// PlanAccess decides, from the bind address and the flags, whether ModelAdmin
// is open, token-protected or disabled, and which warnings the server logs at
// startup (see docs/security.md for the reasoning):
//   * a loopback bind without an admin token: ModelAdmin open (local use);
//   * a non-loopback bind without an admin token: ModelAdmin DISABLED (every
//     call PERMISSION_DENIED) unless insecure_admin is set, with a warning;
//   * any token over plaintext on a non-loopback bind: a warning.
#ifndef INVARIANT_SERVER_COMMON_AUTH_H_
#define INVARIANT_SERVER_COMMON_AUTH_H_

#include <grpcpp/server_context.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace invariant::server {

// True when `presented` equals `expected`, in time that depends only on
// presented.size() (the caller's own input): the loop runs once per byte of
// `presented` and never exits early, and a length mismatch is folded into the
// result instead of returned at once, so neither the position of the first
// difference nor the length of `expected` shows in the timing.
bool ConstantTimeEquals(absl::string_view presented, absl::string_view expected);

// OK when `authorization` is "Bearer <token>" (or `token` is empty),
// UNAUTHENTICATED otherwise, naming what was expected but never the token.
// `what` names the token in the message ("admin token", "data token").
absl::Status CheckBearerToken(const std::string& token, const std::string* authorization,
                              absl::string_view what = "token");

// CheckBearerToken against the call's "authorization" metadata.
absl::Status CheckCallToken(const std::string& token, const grpc::CallbackServerContext& context,
                            absl::string_view what);

// True for addresses that only the local machine can reach: 127.0.0.0/8,
// ::1 (bracketed or not), ::ffff:127.x.y.z and "localhost". Everything else,
// including 0.0.0.0, :: and host names, is treated as reachable from outside.
bool IsLoopbackHost(absl::string_view host);

// The trimmed contents of a token file; INVALID_ARGUMENT naming `flag` when
// the file cannot be read or holds no token.
absl::StatusOr<std::string> ReadTokenFile(absl::string_view flag, const std::string& path);

enum class AdminAccess {
  kOpen,      // no token, loopback bind (or insecure_admin)
  kToken,     // every call needs the admin token
  kDisabled,  // non-loopback bind without a token: every call PERMISSION_DENIED
};

struct AccessPlan {
  AdminAccess admin = AdminAccess::kOpen;
  std::vector<std::string> warnings;  // logged once at startup
};

struct AccessInputs {
  std::string host;  // the gRPC bind address
  bool tls = false;
  bool has_admin_token = false;
  bool has_data_token = false;
  bool insecure_admin = false;  // explicit opt-in to an open ModelAdmin on any address
};

AccessPlan PlanAccess(const AccessInputs& in);

// The status of every ModelAdmin call while it is disabled.
absl::Status AdminDisabledError();

// The admin gate of ModelAdmin and of the repository extension (both
// ports): OK with kOpen, AdminDisabledError with kDisabled, and with kToken
// CheckBearerToken of `authorization` (null: none sent) against `token`.
absl::Status CheckAdmin(AdminAccess access, const std::string& token,
                        const std::string* authorization);
// CheckAdmin against the call's "authorization" metadata.
absl::Status CheckAdminCall(AdminAccess access, const std::string& token,
                            const grpc::CallbackServerContext& context);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_COMMON_AUTH_H_
