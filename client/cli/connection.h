// connection.h: turns the tools' connection flags into invariant::ClientOptions.
//
// Shared by invariant-client and invariant-loadgen so both accept the same
// --target / --timeout / TLS / token flags with the same meaning:
//   timeout_seconds  deadline of each call; 0 = none; must be >= 0
//   tls              TLS with the system roots (implied by any tls_* file)
//   tls_ca           PEM file of root certificates to trust
//   tls_cert/tls_key PEM client certificate chain and key (mTLS; both or neither)
//   tls_server_name  host name checked against the server certificate
//   token_file       file whose trimmed contents are sent as "Bearer <token>"
// Errors (InvalidArgument) name the flag and the problem, e.g. an unreadable file.
#ifndef INVARIANT_CLIENT_CLI_CONNECTION_H_
#define INVARIANT_CLIENT_CLI_CONNECTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/client.h"

namespace invariant::cli {

struct ConnectionFlags {
  double timeout_seconds = 10;
  bool tls = false;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  std::string token_file;
};

absl::StatusOr<ClientOptions> MakeClientOptions(const ConnectionFlags& flags);

// The values of --timeout, --tls, --tls_ca, --tls_cert, --tls_key,
// --tls_server_name and --token_file (defined in connection_flags.cc, once
// for both tools).
ConnectionFlags ConnectionFlagsFromCommandLine();

// The trimmed contents of a token file; InvalidArgument naming `flag_name`
// when it cannot be read or is empty.
absl::StatusOr<std::string> ReadToken(const std::string& path, const std::string& flag_name);

// The whole file, or InvalidArgument naming `flag_name` and the path.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, const std::string& flag_name);

}  // namespace invariant::cli

#endif  // INVARIANT_CLIENT_CLI_CONNECTION_H_
