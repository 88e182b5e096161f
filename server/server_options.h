// server_options.h: every knob of invariant-server (ServerOptions) and the
// checks run on them before anything starts.
//
// ValidateOptions checks the options alone (and that the models directory
// exists) and returns the first rule broken, INVALID_ARGUMENT (NOT_FOUND for
// a missing models directory) naming the flag ("port: expected 0..65535,
// received 70000"); the rules are checked in a fixed order, so the same
// options always get the same answer. CheckStartupModelsExist checks that
// every --load_model names a model directory (Server::Init runs it once the
// registry exists). Both are pure functions of their arguments and the file
// system: thread-safe. Flags are parsed in main.cc only.
#ifndef INVARIANT_SERVER_SERVER_OPTIONS_H_
#define INVARIANT_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace invariant::server {

// Every knob of the server, with its default (the flag of the same name in main.cc).
struct ServerOptions {
  std::string models_dir;                 // MODELS/<name>/<version>/model.bundle; required
  std::string host = "0.0.0.0";           // gRPC and metrics bind address
  int port = 8500;                        // gRPC port; 0 = pick a free one
  int metrics_port = 9102;                // Prometheus /metrics port; 0 = pick; -1 = off
  std::string metrics_host;               // metrics bind address; empty = `host`
  std::string version_policy = "latest";  // latest | latest:N | all
  double poll_seconds = 30;               // rescan period; <= 0 = only on demand
  // "poll": every model directory is served; "explicit": only `load_models`
  // and the models loaded by RepositoryModelLoad (until unloaded).
  std::string model_control = "poll";
  std::vector<std::string> load_models;  // explicit: served from the start
  double removal_grace_seconds = 30;     // a removed version serves this long
  bool batching = true;                  // false = compute each request inline
  int64_t max_batch_size = 64;           // rows per compute call (1 = batching off)
  int64_t max_batch_delay_us = 500;      // oldest request's wait for a fuller batch, while busy
  int64_t max_queue_rows = 65536;        // queued rows per model before RESOURCE_EXHAUSTED
  int64_t max_queue_bytes = 256 << 20;   // queued input+output bytes, all models, likewise
  int64_t max_request_rows = 65536;      // rows per request (capped at max_queue_rows)
  bool batch_wait_when_idle = false;     // true: wait for max_batch_delay even when idle
  int threads = 2;                       // batches computed at once (each on the compute pool)
  bool testonly_start_paused =
      false;  // tests: no batch starts until ResumeBatcherForTesting or Shutdown
  int max_message_bytes = 64 << 20;  // gRPC receive/send limit
  // gRPC's ResourceQuota: memory its transports may hold; 0 = gRPC's default.
  int64_t grpc_memory_quota_bytes = int64_t{1} << 30;
  std::string tls_cert_file;  // PEM; with tls_key_file turns TLS on
  std::string tls_key_file;
  std::string tls_client_ca_file;         // PEM; requires and verifies client certificates (mTLS)
  std::string admin_token;                // empty = no admin token (see insecure_admin)
  bool insecure_admin = false;            // no admin token on a non-loopback host: open, not off
  std::string data_token;                 // empty = FeatureService/inference unauthenticated
  double drain_seconds = 10;              // graceful shutdown budget
  double max_connection_age_seconds = 0;  // > 0: clients reconnect (rebalance) after this
  // Open Inference Protocol over HTTP/JSON (rest_service.h), on a port of its own.
  int http_port = -1;                      // 0 = pick a free one; -1 = off
  std::string http_host;                   // HTTP bind address; empty = `host`
  int64_t http_max_body_bytes = 16 << 20;  // larger request bodies are refused with 413
  int http_threads =
      8;  // HTTP handler threads (they read requests; an infer waits for its batch on none)
  double http_timeout_seconds = 30;             // deadline of a REST infer call
  int http_max_connections = 10000;             // open HTTP connections; more get 503
  int64_t http_max_inflight_bytes = 256 << 20;  // request bodies held at once; more get 503
  // Answers written or waiting for a slow reader, at once; while spent, new
  // requests get 503 before their body is read. 0 = no budget.
  int64_t http_max_inflight_answer_bytes = int64_t{256} << 20;
  // After http_rate_grace_seconds, a body must arrive and an answer be read
  // at these rates (bytes/s), else the connection is cut. 0 = off.
  int64_t http_min_body_bytes_per_second = 8 << 10;
  int64_t http_min_write_bytes_per_second = 32 << 10;
  double http_rate_grace_seconds = 5;
  int http_probe_slots = 64;                // connections past the cap read for a health probe
  double http_idle_timeout_seconds = 60;    // keep-alive wait for a request's first byte
  double http_header_timeout_seconds = 10;  // first byte to the end of the headers, in all
  double http_body_timeout_seconds = 30;    // the whole body, in all; also each answer's write
  int64_t warmup_rows = 8;                // rows a new version answers before it is ready; 0 = off
  double max_audio_clip_seconds = 30;     // longest clip a model of sound is sent (and the model's)
  int64_t max_image_pixels = 50'000'000;  // most pixels an image file may declare (and the model's)
  // Admission by cost (server/admission/, feature_handler.h): bytes requests
  // hold from admission to their answer (rows, outputs, encoded answer), all
  // calls; one connection's share; seconds of audio queued for or in
  // decoding (a clip costs its length plus the model's clip_seconds); the
  // threads that decode clips (off gRPC's and HTTP's threads). 0 = no limit.
  int64_t max_inflight_bytes = int64_t{512} << 20;
  int64_t max_connection_inflight_bytes = int64_t{256} << 20;
  int64_t max_decode_audio_seconds = 3600;
  // Pixels image files declare, queued for or in decoding, all requests.
  int64_t max_decode_image_pixels = 200'000'000;
  int decode_threads = 1;
  int64_t http_max_response_bytes = 64 << 20;  // one REST answer, encoded; 0 = no limit
  // The request log (server/access_log/access_log.h): off | errors |
  // sampled:RATE | all; its file ("" or "-": stderr); the lines it may queue
  // for its writer before it drops them.
  // Bytes all loaded model versions may state together (model_footprint.h:
  // bundle, packed copies, compute workspaces); a load past it is refused
  // from the manifest and the served versions stay. 0 = no limit.
  int64_t max_model_bytes = 0;
  std::string access_log = "off";
  std::string access_log_file;
  int64_t access_log_queue_lines = 8192;
};

// OK, or the first rule `options` break (see above).
absl::Status ValidateOptions(const ServerOptions& options);

// OK when every one of options.load_models is a model directory under
// options.models_dir; else INVALID_ARGUMENT naming it and listing what the
// directory holds (a typo is refused at start, not served as a model that
// never becomes ready).
absl::Status CheckStartupModelsExist(const ServerOptions& options);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_SERVER_OPTIONS_H_
