// main.cc: invariant-server. Parses flags into ServerOptions (the only place
// flags are read), starts the server, prints ONE ready line
//   invariant-server ready grpc_port=NNNN metrics_port=MMMM
// and then waits for signals: SIGHUP rescans the models, SIGTERM/SIGINT drain
// and exit 0.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "core/base/thread_pool.h"
#include "server/server.h"

using invariant::server::ServerOptions;

namespace {
const ServerOptions kDefaults;
}  // namespace

ABSL_FLAG(std::string, models, "", "Models directory: <dir>/<name>/<version>/model.bundle.");
ABSL_FLAG(std::string, host, kDefaults.host, "Bind address (gRPC and metrics).");
ABSL_FLAG(int, port, kDefaults.port, "gRPC port; 0 = pick a free one (printed).");
ABSL_FLAG(std::string, metrics_host, "",
          "Bind address of the metrics endpoint; empty = the same as --host.");
ABSL_FLAG(int, metrics_port, kDefaults.metrics_port,
          "Prometheus /metrics port; 0 = pick (printed); -1 = off.");
ABSL_FLAG(std::string, version_policy, kDefaults.version_policy, "latest | latest:N | all.");
ABSL_FLAG(double, poll_seconds, kDefaults.poll_seconds,
          "Rescan period of the models directory; <= 0 = only SIGHUP / ReloadModels.");
ABSL_FLAG(double, removal_grace_seconds, kDefaults.removal_grace_seconds,
          "How long a removed version keeps serving.");
ABSL_FLAG(bool, batching, kDefaults.batching, "Dynamic batching; false = one compute per request.");
ABSL_FLAG(int64_t, max_batch_size, kDefaults.max_batch_size,
          "Rows per merged compute call; 1 turns batching off.");
ABSL_FLAG(int64_t, max_batch_delay_us, kDefaults.max_batch_delay_us,
          "Longest wait of a request for a fuller batch (microseconds); applies while "
          "a batch is computing (see --batch_wait_when_idle).");
ABSL_FLAG(bool, batch_wait_when_idle, kDefaults.batch_wait_when_idle,
          "Hold a request for max_batch_delay_us even when no batch is computing "
          "(default: an idle server computes at once; merging happens under load).");
ABSL_FLAG(int64_t, max_queue_rows, kDefaults.max_queue_rows,
          "Queued rows per model before RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_request_rows, kDefaults.max_request_rows,
          "Rows allowed in one request (capped at --max_queue_rows).");
ABSL_FLAG(int, threads, kDefaults.threads, "Batcher worker threads.");
ABSL_FLAG(int, compute_threads, 0,
          "Threads of the process-wide compute pool every encoder runs on; 0 = all cores.");
ABSL_FLAG(int, max_message_bytes, kDefaults.max_message_bytes, "gRPC message size limit.");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (turns TLS on with --tls_key).");
ABSL_FLAG(std::string, tls_key, "", "PEM server private key.");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA for client certificates (mTLS).");
ABSL_FLAG(std::string, admin_token_file, "",
          "File holding the bearer token required by ModelAdmin; empty = no token.");
ABSL_FLAG(double, drain_seconds, kDefaults.drain_seconds,
          "On SIGTERM, time given to in-flight calls.");
ABSL_FLAG(double, max_connection_age_seconds, kDefaults.max_connection_age_seconds,
          "> 0: connections are closed after this age so clients rebalance.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("invariant-server --models=DIR [--port=8500] ...");
  // --help lists the flags of this file (absl's default looks for a file
  // named after the binary and finds none: "No flags matched").
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);

  // Signals are taken synchronously by this thread; block them before any
  // other thread starts so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ServerOptions options;
  options.models_dir = absl::GetFlag(FLAGS_models);
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.metrics_host = absl::GetFlag(FLAGS_metrics_host);
  options.version_policy = absl::GetFlag(FLAGS_version_policy);
  options.poll_seconds = absl::GetFlag(FLAGS_poll_seconds);
  options.removal_grace_seconds = absl::GetFlag(FLAGS_removal_grace_seconds);
  options.batching = absl::GetFlag(FLAGS_batching);
  options.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  options.max_batch_delay_us = absl::GetFlag(FLAGS_max_batch_delay_us);
  options.batch_wait_when_idle = absl::GetFlag(FLAGS_batch_wait_when_idle);
  options.max_queue_rows = absl::GetFlag(FLAGS_max_queue_rows);
  options.max_request_rows = absl::GetFlag(FLAGS_max_request_rows);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  options.max_connection_age_seconds = absl::GetFlag(FLAGS_max_connection_age_seconds);
  const std::string token_file = absl::GetFlag(FLAGS_admin_token_file);
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    std::stringstream text;
    text << in.rdbuf();
    options.admin_token = std::string(absl::StripAsciiWhitespace(text.str()));
    if (!in || options.admin_token.empty()) {
      std::cerr << "invariant-server: admin_token_file: expected a readable file holding a "
                   "token, received '"
                << token_file << "'" << std::endl;
      return 2;
    }
  }

  // Before any model loads: packing a bank already uses the pool.
  if (const int threads = absl::GetFlag(FLAGS_compute_threads); threads != 0) {
    if (absl::Status s = invariant::SetDefaultThreadCount(threads); !s.ok()) {
      std::cerr << "invariant-server: compute_threads: " << s.message() << std::endl;
      return 2;
    }
  }
  auto server = invariant::server::Server::Start(options);
  if (!server.ok()) {
    std::cerr << "invariant-server: " << server.status() << std::endl;
    return 1;
  }
  std::printf("invariant-server ready grpc_port=%d metrics_port=%d\n", (*server)->grpc_port(),
              (*server)->metrics_port());
  std::fflush(stdout);

  while (true) {
    int signal_number = 0;
    if (sigwait(&signals, &signal_number) != 0) continue;
    if (signal_number == SIGHUP) {
      std::cerr << "invariant-server: SIGHUP: rescanning models" << std::endl;
      (*server)->Reload();
      continue;
    }
    std::cerr << "invariant-server: signal " << signal_number << ": draining" << std::endl;
    (*server)->Shutdown();
    std::cerr << "invariant-server: stopped" << std::endl;
    return 0;
  }
}
