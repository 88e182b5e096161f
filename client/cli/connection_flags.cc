// The connection flags of invariant-client and invariant-loadgen, defined
// once. This object file is linked only into binaries that call
// ConnectionFlagsFromCommandLine().
#include <string>

#include "absl/flags/flag.h"
#include "client/cli/connection.h"

ABSL_FLAG(double, timeout, 10, "Deadline of each call in seconds; 0 = none.");
ABSL_FLAG(bool, tls, false, "Use TLS with the system roots (implied by the tls_* flags).");
ABSL_FLAG(std::string, tls_ca, "", "PEM file of the root certificates to trust.");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate chain (mTLS, with --tls_key).");
ABSL_FLAG(std::string, tls_key, "", "PEM client private key (mTLS).");
ABSL_FLAG(std::string, tls_server_name, "", "Override of the server name checked by TLS.");
ABSL_FLAG(std::string, token_file, "", "File holding a bearer token sent with every call.");

namespace invariant::cli {

ConnectionFlags ConnectionFlagsFromCommandLine() {
  ConnectionFlags c;
  c.timeout_seconds = absl::GetFlag(FLAGS_timeout);
  c.tls = absl::GetFlag(FLAGS_tls);
  c.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  c.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  c.tls_key = absl::GetFlag(FLAGS_tls_key);
  c.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  c.token_file = absl::GetFlag(FLAGS_token_file);
  return c;
}

}  // namespace invariant::cli
