// server_process.h: runs the REAL invariant-server binary for a test.
//
// Start() launches the binary (path from INVARIANT_SERVER_BINARY) with
// --host=127.0.0.1 --port=0 --metrics_port=0 plus the given flags, reads its
// stdout until the ready line "invariant-server ready grpc_port=N
// metrics_port=M[ http_port=H]" (bounded wait), and returns the ports. The server's stderr
// goes to a file for diagnostics. The destructor kills a server still running.
#ifndef INVARIANT_TESTS_INTEGRATION_SERVER_PROCESS_H_
#define INVARIANT_TESTS_INTEGRATION_SERVER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace invariant::testing_server {

class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the server; `stderr_path` receives its log.
  absl::Status Start(const std::vector<std::string>& flags, const std::string& stderr_path,
                     absl::Duration ready_timeout = absl::Seconds(60));

  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  // The REST port (the ready line's http_port=), or -1 without --http_port.
  int http_port() const { return http_port_; }
  std::string target() const { return "127.0.0.1:" + std::to_string(grpc_port_); }
  // The server's process id (-1 before Start).
  pid_t pid() const { return pid_; }

  // Sends `signal` to the server.
  void Signal(int signal);
  // Waits for the server to exit; its exit code, or -1 when it did not exit in
  // time (it is then killed) or died from a signal.
  int WaitForExit(absl::Duration timeout);
  // The server's stderr so far.
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  int grpc_port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = -1;
  std::string stderr_path_;
};

// Sends `request` (raw bytes) to 127.0.0.1:<port>, half-closes when asked
// (some servers, e.g. Prometheus, cancel a request whose client half-closed),
// and returns everything the server wrote until it closed (possibly empty).
absl::StatusOr<std::string> HttpExchange(int port, const std::string& request,
                                         absl::Duration timeout = absl::Seconds(10),
                                         bool half_close = true);

// GET http://127.0.0.1:<port><path>; the body, or an error.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path,
                                    absl::Duration timeout = absl::Seconds(10));

// The value of the sample of metric `name` whose labels include every
// `label="value"` in `labels` (no labels: also a sample without any), from a
// Prometheus text exposition; -1 if absent.
double MetricValue(const std::string& text, const std::string& name,
                   const std::vector<std::string>& labels);

// A TCP port free on 127.0.0.1 at the time of the call.
int FreePort();

}  // namespace invariant::testing_server

#endif  // INVARIANT_TESTS_INTEGRATION_SERVER_PROCESS_H_
