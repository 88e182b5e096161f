#include "client/cli/connection.h"

#include <chrono>
#include <cmath>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/base/file.h"

namespace invariant::cli {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, const std::string& flag_name) {
  std::optional<std::string> bytes = ::invariant::ReadWholeFile(path);
  if (!bytes.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag_name, ": cannot read the file '", path, "'"));
  }
  return *std::move(bytes);
}

absl::StatusOr<ClientOptions> MakeClientOptions(const ConnectionFlags& flags) {
  ClientOptions options;
  if (!(flags.timeout_seconds >= 0) || !std::isfinite(flags.timeout_seconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--timeout: expected seconds >= 0 (0 = no deadline), got ", flags.timeout_seconds));
  }
  options.deadline =
      std::chrono::milliseconds(static_cast<int64_t>(std::llround(flags.timeout_seconds * 1000)));
  if (flags.timeout_seconds > 0 && options.deadline.count() == 0) {
    options.deadline = std::chrono::milliseconds(1);
  }
  options.tls = flags.tls || !flags.tls_ca.empty() || !flags.tls_cert.empty() ||
                !flags.tls_key.empty() || !flags.tls_server_name.empty();
  if (flags.tls_cert.empty() != flags.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key: expected both (mTLS) or neither, got only one");
  }
  if (!flags.tls_ca.empty()) {
    auto pem = ReadWholeFile(flags.tls_ca, "tls_ca");
    if (!pem.ok()) return pem.status();
    options.tls_root_certs_pem = *std::move(pem);
  }
  if (!flags.tls_cert.empty()) {
    auto cert = ReadWholeFile(flags.tls_cert, "tls_cert");
    if (!cert.ok()) return cert.status();
    auto key = ReadWholeFile(flags.tls_key, "tls_key");
    if (!key.ok()) return key.status();
    options.tls_client_cert_pem = *std::move(cert);
    options.tls_client_key_pem = *std::move(key);
  }
  options.tls_server_name_override = flags.tls_server_name;
  if (!flags.token_file.empty()) {
    auto token = ReadToken(flags.token_file, "token_file");
    if (!token.ok()) return token.status();
    options.bearer_token = *std::move(token);
  }
  return options;
}

absl::StatusOr<std::string> ReadToken(const std::string& path, const std::string& flag_name) {
  auto text = ReadWholeFile(path, flag_name);
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag_name, ": expected a token, the file '", path, "' is empty"));
  }
  return token;
}

}  // namespace invariant::cli
