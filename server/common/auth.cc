#include "server/common/auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/file.h"

namespace invariant::server {

bool ConstantTimeEquals(absl::string_view presented, absl::string_view expected) {
  // One round per byte of `presented`, each reading one byte of `expected`
  // (cycling through it), whatever the contents: no early exit, and no round
  // count that depends on `expected`. The lengths' difference goes into the
  // accumulator, so a prefix of `expected` (or a longer value) never matches.
  // `diff` is volatile so that the compiler cannot stop at the first
  // difference (the result is known from there on).
  volatile size_t diff = presented.size() ^ expected.size();
  const size_t n = expected.size();
  size_t j = 0;
  for (size_t i = 0; i < presented.size(); ++i) {
    const unsigned char e = n == 0 ? 0 : static_cast<unsigned char>(expected[j]);
    diff = diff | (static_cast<unsigned char>(presented[i]) ^ e);
    j = j + 1 == n ? 0 : j + 1;
  }
  return diff == 0;
}

absl::Status CheckBearerToken(const std::string& token, const std::string* authorization,
                              absl::string_view what) {
  if (token.empty()) return absl::OkStatus();
  if (authorization == nullptr) {
    return absl::UnauthenticatedError(absl::StrCat(
        "authorization: expected metadata 'authorization: Bearer <", what, ">', received none"));
  }
  if (!ConstantTimeEquals(*authorization, "Bearer " + token)) {
    return absl::UnauthenticatedError(absl::StrCat("authorization: expected 'Bearer <", what,
                                                   ">', received a different credential"));
  }
  return absl::OkStatus();
}

absl::Status CheckCallToken(const std::string& token, const grpc::CallbackServerContext& context,
                            absl::string_view what) {
  if (token.empty()) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return CheckBearerToken(token, nullptr, what);
  const std::string value(it->second.data(), it->second.size());
  return CheckBearerToken(token, &value, what);
}

bool IsLoopbackHost(absl::string_view host) {
  if (absl::AsciiStrToLower(host) == "localhost") return true;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

absl::StatusOr<std::string> ReadTokenFile(absl::string_view flag, const std::string& path) {
  std::optional<std::string> text = ReadWholeFile(path);
  std::string token = text.has_value() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected a readable file holding a token, received '", path, "'"));
  }
  return token;
}

AccessPlan PlanAccess(const AccessInputs& in) {
  AccessPlan plan;
  const bool loopback = IsLoopbackHost(in.host);
  if (in.has_admin_token) {
    plan.admin = AdminAccess::kToken;
  } else if (loopback) {
    plan.admin = AdminAccess::kOpen;
  } else if (in.insecure_admin) {
    plan.admin = AdminAccess::kOpen;
    plan.warnings.push_back(absl::StrCat(
        "WARNING: ModelAdmin is OPEN to anyone who can reach ", in.host,
        " (--insecure_admin without --admin_token_file): any client can trigger reloads and read "
        "load errors"));
  } else {
    plan.admin = AdminAccess::kDisabled;
    plan.warnings.push_back(absl::StrCat(
        "WARNING: ModelAdmin is DISABLED: the server binds ", in.host,
        " (not loopback) without --admin_token_file; every ModelAdmin call answers "
        "PERMISSION_DENIED. Give --admin_token_file (or --insecure_admin to open it anyway); "
        "SIGHUP and --poll_seconds still reload"));
  }
  if (!loopback && !in.tls && (in.has_admin_token || in.has_data_token)) {
    plan.warnings.push_back(absl::StrCat(
        "WARNING: bearer tokens are accepted over PLAINTEXT on ", in.host,
        ": anyone on the network path can read and replay them; give --tls_cert and --tls_key"));
  }
  return plan;
}

absl::Status AdminDisabledError() {
  return absl::PermissionDeniedError(
      "ModelAdmin: disabled on this server: it binds a non-loopback address without "
      "--admin_token_file (start it with --admin_token_file, or --insecure_admin)");
}

absl::Status CheckAdmin(AdminAccess access, const std::string& token,
                        const std::string* authorization) {
  switch (access) {
    case AdminAccess::kOpen:
      return absl::OkStatus();
    case AdminAccess::kDisabled:
      return AdminDisabledError();
    case AdminAccess::kToken:
      break;
  }
  if (token.empty()) return absl::InternalError("admin access by token without a token");
  return CheckBearerToken(token, authorization, "admin token");
}

absl::Status CheckAdminCall(AdminAccess access, const std::string& token,
                            const grpc::CallbackServerContext& context) {
  if (access != AdminAccess::kToken || token.empty()) return CheckAdmin(access, token, nullptr);
  return CheckCallToken(token, context, "admin token");
}

}  // namespace invariant::server
