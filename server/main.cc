// main.cc: invariant-server. Parses flags into ServerOptions (the only place
// flags are read), starts the server, prints ONE ready line
//   invariant-server ready grpc_port=NNNN metrics_port=MMMM
// (followed by " http_port=HHHH" when --http_port turns the REST front end on)
// and then waits for signals: SIGHUP rescans the models, SIGTERM/SIGINT drain
// and exit 0, SIGUSR1 resumes a batcher started with --testonly_start_paused.
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "core/base/signal_waiter.h"
#include "core/base/thread_pool.h"
#include "server/common/auth.h"
#include "server/common/protobuf_log.h"
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
ABSL_FLAG(std::string, model_control, kDefaults.model_control,
          "poll (every model directory is served) | explicit (only --load_model and the models "
          "loaded by the repository extension's load call, until unloaded).");
ABSL_FLAG(std::vector<std::string>, load_model, {},
          "With --model_control=explicit: the models served from the start (comma-separated).");
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
ABSL_FLAG(int64_t, max_queue_bytes, kDefaults.max_queue_bytes,
          "Queued bytes (inputs and outputs of waiting requests, all models) before "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_request_rows, kDefaults.max_request_rows,
          "Rows allowed in one request (capped at --max_queue_rows).");
ABSL_FLAG(int, threads, kDefaults.threads,
          "Batches computed at once; each runs on the compute pool (--compute_threads).");
ABSL_FLAG(bool, testonly_start_paused, false,
          "Tests only: queue requests but start no batch until the process gets SIGUSR1 "
          "(or SIGTERM/SIGINT, whose drain lets the queued batches run).");
ABSL_FLAG(int, compute_threads, 0,
          "Threads of the process-wide compute pool every encoder runs on; 0 = all cores.");
ABSL_FLAG(int, max_message_bytes, kDefaults.max_message_bytes, "gRPC message size limit.");
ABSL_FLAG(int64_t, grpc_memory_quota_bytes, kDefaults.grpc_memory_quota_bytes,
          "gRPC's ResourceQuota: memory its transports may hold (messages being read or "
          "written); past it gRPC closes connections. 0 = gRPC's default (no quota).");
ABSL_FLAG(double, max_audio_clip_seconds, kDefaults.max_audio_clip_seconds,
          "Longest sound clip accepted by a model of sound, in seconds of audio (a model's own "
          "max_clip_seconds may be smaller).");
ABSL_FLAG(int64_t, max_image_pixels, kDefaults.max_image_pixels,
          "Most pixels (width x height, read from the header before decoding) an image file sent "
          "to a model of images may declare (a model's own max_pixels may be smaller).");
ABSL_FLAG(int64_t, max_inflight_bytes, kDefaults.max_inflight_bytes,
          "Admission: bytes all requests in flight may hold (their rows, outputs and encoded "
          "answers, estimated before any work); over it RESOURCE_EXHAUSTED / HTTP 429. 0 = no "
          "limit (docs/operations.md).");
ABSL_FLAG(int64_t, max_connection_inflight_bytes, kDefaults.max_connection_inflight_bytes,
          "Admission: the share of --max_inflight_bytes one gRPC connection may hold. 0 = none.");
ABSL_FLAG(int64_t, max_decode_audio_seconds, kDefaults.max_decode_audio_seconds,
          "Admission: seconds of audio queued for or in decoding, all requests (a clip costs its "
          "length plus the model's clip_seconds). 0 = no limit.");
ABSL_FLAG(int64_t, max_model_bytes, kDefaults.max_model_bytes,
          "Bytes all loaded model versions may state together (bundle, packed copies, compute "
          "workspaces; stated from the manifest before a bundle is read); a load or reload past "
          "it is refused and the served versions stay. 0 = no limit.");
ABSL_FLAG(std::string, access_log, kDefaults.access_log,
          "Request log, one JSON object a line: off | errors | sampled:RATE (errors, plus "
          "the OK calls of sampled traces: the caller's traceparent flag, else a share RATE of "
          "the traces started here) | all.");
ABSL_FLAG(std::string, access_log_file, kDefaults.access_log_file,
          "Where the request log goes: a file, appended to; empty or - = stderr.");
ABSL_FLAG(int64_t, access_log_queue_lines, kDefaults.access_log_queue_lines,
          "Lines the request log holds for its writer; past them lines are dropped and counted "
          "(invariant_access_log_lines_total{outcome=\"dropped\"}), never waited for.");
ABSL_FLAG(int64_t, max_decode_image_pixels, kDefaults.max_decode_image_pixels,
          "Admission: pixels that image files declare, queued for or in decoding, all requests. "
          "0 = no limit.");
ABSL_FLAG(int, decode_threads, kDefaults.decode_threads,
          "Threads that decode sound clips and image files (never gRPC's or HTTP's own threads).");
ABSL_FLAG(int64_t, http_max_response_bytes, kDefaults.http_max_response_bytes,
          "Largest REST infer answer, encoded (JSON numbers count 16 bytes); a larger one is "
          "refused before any work (ask for binary outputs). 0 = no limit.");
ABSL_FLAG(int64_t, http_max_inflight_answer_bytes, kDefaults.http_max_inflight_answer_bytes,
          "REST answers held at once (being written or waiting for a slow reader); while spent, "
          "new requests get 503 with Retry-After before their body is read. 0 = no budget.");
ABSL_FLAG(int64_t, http_min_body_bytes_per_second, kDefaults.http_min_body_bytes_per_second,
          "After --http_rate_grace_seconds, a REST body slower than this is cut (408). 0 = off.");
ABSL_FLAG(int64_t, http_min_write_bytes_per_second, kDefaults.http_min_write_bytes_per_second,
          "After --http_rate_grace_seconds, a client reading its answer slower than this is cut. "
          "0 = off.");
ABSL_FLAG(double, http_rate_grace_seconds, kDefaults.http_rate_grace_seconds,
          "Seconds before the minimum REST transfer rates apply.");
ABSL_FLAG(int, http_probe_slots, kDefaults.http_probe_slots,
          "Connections past --http_max_connections still read for a health probe (answered), "
          "others 503.");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (turns TLS on with --tls_key).");
ABSL_FLAG(std::string, tls_key, "", "PEM server private key.");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA for client certificates (mTLS).");
ABSL_FLAG(std::string, admin_token_file, "",
          "File holding the bearer token required by ModelAdmin; empty = no token (then "
          "ModelAdmin is open on a loopback --host and DISABLED on any other, see "
          "--insecure_admin).");
ABSL_FLAG(bool, insecure_admin, false,
          "Open ModelAdmin without a token even on a non-loopback --host (not recommended).");
ABSL_FLAG(std::string, data_token_file, "",
          "File holding the bearer token required by FeatureService and "
          "inference.GRPCInferenceService (and the REST routes of --http_port but health); "
          "empty = no token. Health, reflection and the metrics port are not covered.");
ABSL_FLAG(double, drain_seconds, kDefaults.drain_seconds,
          "On SIGTERM, time given to in-flight calls.");
ABSL_FLAG(int64_t, warmup_rows, kDefaults.warmup_rows,
          "Rows a newly loaded version computes before it is marked ready; 0 = no warmup.");
ABSL_FLAG(double, max_connection_age_seconds, kDefaults.max_connection_age_seconds,
          "> 0: connections are closed after this age so clients rebalance.");
ABSL_FLAG(int, http_port, kDefaults.http_port,
          "Open Inference Protocol over HTTP/JSON (/v2/...) on this port; 0 = pick (printed); "
          "-1 = off.");
ABSL_FLAG(std::string, http_host, "",
          "Bind address of the HTTP/JSON endpoint; empty = the same as --host.");
ABSL_FLAG(int64_t, http_max_body_bytes, kDefaults.http_max_body_bytes,
          "Largest HTTP request body; larger ones are refused with 413.");
ABSL_FLAG(int, http_threads, kDefaults.http_threads,
          "HTTP handler threads (a REST infer call holds one while its body is parsed, not "
          "while it waits for its batch; idle and slow connections hold none).");
ABSL_FLAG(double, http_timeout_seconds, kDefaults.http_timeout_seconds,
          "Deadline of a REST infer call (504 when it passes).");
ABSL_FLAG(int, http_max_connections, kDefaults.http_max_connections,
          "Open HTTP connections at most (capped by the file limit); one more is answered 503.");
ABSL_FLAG(int64_t, http_max_inflight_bytes, kDefaults.http_max_inflight_bytes,
          "Request bodies held at once (read, queued or handled); a request past it gets 503 "
          "before its body is read.");
ABSL_FLAG(double, http_idle_timeout_seconds, kDefaults.http_idle_timeout_seconds,
          "A keep-alive connection with no request for this long is closed.");
ABSL_FLAG(double, http_header_timeout_seconds, kDefaults.http_header_timeout_seconds,
          "Time from a request's first byte to the end of its headers, in all (then 408).");
ABSL_FLAG(double, http_body_timeout_seconds, kDefaults.http_body_timeout_seconds,
          "Time to read a whole request body, and to write an answer, in all (then 408 / close).");

namespace {

// --help lists the flags of this file (absl's default looks for a file
// named after the binary and finds none: "No flags matched").
void ConfigureUsage() {
  absl::SetProgramUsageMessage("invariant-server --models=DIR [--port=8500] ...");
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
}

// Every option but the tokens (ReadTokenFiles), from its flag.
ServerOptions OptionsFromFlags() {
  ServerOptions options;
  options.models_dir = absl::GetFlag(FLAGS_models);
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.metrics_host = absl::GetFlag(FLAGS_metrics_host);
  options.version_policy = absl::GetFlag(FLAGS_version_policy);
  options.poll_seconds = absl::GetFlag(FLAGS_poll_seconds);
  options.model_control = absl::GetFlag(FLAGS_model_control);
  options.load_models = absl::GetFlag(FLAGS_load_model);
  options.removal_grace_seconds = absl::GetFlag(FLAGS_removal_grace_seconds);
  options.batching = absl::GetFlag(FLAGS_batching);
  options.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  options.max_batch_delay_us = absl::GetFlag(FLAGS_max_batch_delay_us);
  options.batch_wait_when_idle = absl::GetFlag(FLAGS_batch_wait_when_idle);
  options.max_queue_rows = absl::GetFlag(FLAGS_max_queue_rows);
  options.max_request_rows = absl::GetFlag(FLAGS_max_request_rows);
  options.max_queue_bytes = absl::GetFlag(FLAGS_max_queue_bytes);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.testonly_start_paused = absl::GetFlag(FLAGS_testonly_start_paused);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.grpc_memory_quota_bytes = absl::GetFlag(FLAGS_grpc_memory_quota_bytes);
  options.max_audio_clip_seconds = absl::GetFlag(FLAGS_max_audio_clip_seconds);
  options.max_image_pixels = absl::GetFlag(FLAGS_max_image_pixels);
  options.max_inflight_bytes = absl::GetFlag(FLAGS_max_inflight_bytes);
  options.max_connection_inflight_bytes = absl::GetFlag(FLAGS_max_connection_inflight_bytes);
  options.max_decode_audio_seconds = absl::GetFlag(FLAGS_max_decode_audio_seconds);
  options.max_decode_image_pixels = absl::GetFlag(FLAGS_max_decode_image_pixels);
  options.decode_threads = absl::GetFlag(FLAGS_decode_threads);
  options.max_model_bytes = absl::GetFlag(FLAGS_max_model_bytes);
  options.access_log = absl::GetFlag(FLAGS_access_log);
  options.access_log_file = absl::GetFlag(FLAGS_access_log_file);
  options.access_log_queue_lines = absl::GetFlag(FLAGS_access_log_queue_lines);
  options.http_max_response_bytes = absl::GetFlag(FLAGS_http_max_response_bytes);
  options.http_max_inflight_answer_bytes = absl::GetFlag(FLAGS_http_max_inflight_answer_bytes);
  options.http_min_body_bytes_per_second = absl::GetFlag(FLAGS_http_min_body_bytes_per_second);
  options.http_min_write_bytes_per_second = absl::GetFlag(FLAGS_http_min_write_bytes_per_second);
  options.http_rate_grace_seconds = absl::GetFlag(FLAGS_http_rate_grace_seconds);
  options.http_probe_slots = absl::GetFlag(FLAGS_http_probe_slots);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  options.max_connection_age_seconds = absl::GetFlag(FLAGS_max_connection_age_seconds);
  options.warmup_rows = absl::GetFlag(FLAGS_warmup_rows);
  options.http_port = absl::GetFlag(FLAGS_http_port);
  options.http_host = absl::GetFlag(FLAGS_http_host);
  options.http_max_body_bytes = absl::GetFlag(FLAGS_http_max_body_bytes);
  options.http_threads = absl::GetFlag(FLAGS_http_threads);
  options.http_timeout_seconds = absl::GetFlag(FLAGS_http_timeout_seconds);
  options.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  options.http_max_inflight_bytes = absl::GetFlag(FLAGS_http_max_inflight_bytes);
  options.http_idle_timeout_seconds = absl::GetFlag(FLAGS_http_idle_timeout_seconds);
  options.http_header_timeout_seconds = absl::GetFlag(FLAGS_http_header_timeout_seconds);
  options.http_body_timeout_seconds = absl::GetFlag(FLAGS_http_body_timeout_seconds);
  options.insecure_admin = absl::GetFlag(FLAGS_insecure_admin);
  return options;
}

// The tokens of --admin_token_file and --data_token_file into `options`;
// false (the reason printed) when a file cannot be read.
bool ReadTokenFiles(ServerOptions* options) {
  for (const auto& [flag, path, token] :
       {std::tuple("admin_token_file", absl::GetFlag(FLAGS_admin_token_file),
                   &options->admin_token),
        std::tuple("data_token_file", absl::GetFlag(FLAGS_data_token_file),
                   &options->data_token)}) {
    if (path.empty()) continue;
    absl::StatusOr<std::string> read = invariant::server::ReadTokenFile(flag, path);
    if (!read.ok()) {
      std::cerr << "invariant-server: " << read.status().message() << std::endl;
      return false;
    }
    *token = *std::move(read);
  }
  return true;
}

void PrintReadyLine(const invariant::server::Server& server) {
  std::printf("invariant-server ready grpc_port=%d metrics_port=%d", server.grpc_port(),
              server.metrics_port());
  if (server.http_port() >= 0) std::printf(" http_port=%d", server.http_port());
  std::printf("\n");
  std::fflush(stdout);
}

// Answers signals until SIGTERM or SIGINT, then drains; the exit code.
int ServeUntilStopped(invariant::server::Server& server, invariant::SignalWaiter& signals) {
  while (true) {
    const int signal_number = signals.Wait();
    if (signal_number == SIGUSR1) {
      std::cerr << "invariant-server: SIGUSR1: resuming the clip decoders and the batcher"
                << std::endl;
      server.ResumeBatcherForTesting();
      continue;
    }
    if (signal_number == SIGHUP) {
      std::cerr << "invariant-server: SIGHUP: rescanning models" << std::endl;
      server.Reload();
      continue;
    }
    std::cerr << "invariant-server: signal " << signal_number << ": draining" << std::endl;
    server.Shutdown();
    std::cerr << "invariant-server: stopped" << std::endl;
    return 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Buffers of 1 MiB and more (request bodies, large batches) are mapped and
  // unmapped on their own, so a burst of large requests leaves no resident
  // heap behind (glibc would otherwise raise this threshold as they are freed).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock would
  // update a global lock graph to detect deadlocks (a debugging aid, about
  // 3 % of a batch-1 call's CPU here); the tests keep it on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  ConfigureUsage();
  absl::ParseCommandLine(argc, argv);

  // Signals are handed to this thread through a pipe (core/base/signal_waiter.h):
  // whichever thread the kernel delivers them to, none ends the process.
  auto signals = invariant::SignalWaiter::Install({SIGTERM, SIGINT, SIGHUP, SIGUSR1});
  if (!signals.ok()) {
    std::cerr << "invariant-server: " << signals.status() << std::endl;
    return 1;
  }

  ServerOptions options = OptionsFromFlags();
  if (!ReadTokenFiles(&options)) return 2;
  // Bad requests (e.g. a model name that is not UTF-8) must not flood the log.
  invariant::server::InstallProtobufLogThrottle();

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
  PrintReadyLine(**server);
  return ServeUntilStopped(**server, **signals);
}
