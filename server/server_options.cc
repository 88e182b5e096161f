#include "server/server_options.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/error_text.h"
#include "core/base/status_macros.h"
#include "core/model/repository.h"
#include "server/access_log/access_log.h"

namespace invariant::server {
namespace {

// `flag` names a port in lowest..65535.
absl::Status CheckPortFlag(const char* flag, int port, int lowest) {
  if (port >= lowest && port <= 65535) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": expected ", lowest, "..65535, received ", port));
}

// `flag` is at least `least`.
absl::Status CheckAtLeast(const char* flag, int64_t value, int64_t least) {
  if (value >= least) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": expected >= ", least, ", received ", value));
}

absl::Status CheckModelsDir(const ServerOptions& o) {
  if (o.models_dir.empty()) {
    return absl::InvalidArgumentError("models: expected a models directory, received none");
  }
  std::error_code error;
  if (!std::filesystem::is_directory(o.models_dir, error)) {
    // A wrong volume mount must fail loudly, not serve nothing while healthy.
    return absl::NotFoundError(
        absl::StrCat("models: expected an existing directory, received '", o.models_dir, "'"));
  }
  return absl::OkStatus();
}

absl::Status CheckGrpcPort(const ServerOptions& o) { return CheckPortFlag("port", o.port, 0); }

absl::Status CheckModelControl(const ServerOptions& o) {
  if (o.model_control != "poll" && o.model_control != "explicit") {
    return absl::InvalidArgumentError(
        absl::StrCat("model_control: expected poll or explicit, received '", o.model_control, "'"));
  }
  if (o.model_control == "poll" && !o.load_models.empty()) {
    return absl::InvalidArgumentError(
        "load_model: names the models served from the start under --model_control=explicit; "
        "under poll every model directory is served");
  }
  return absl::OkStatus();
}

absl::Status CheckMetricsPort(const ServerOptions& o) {
  return CheckPortFlag("metrics_port", o.metrics_port, -1);
}

absl::Status CheckBatching(const ServerOptions& o) {
  RETURN_IF_ERROR(CheckAtLeast("max_batch_size", o.max_batch_size, 1));
  RETURN_IF_ERROR(CheckAtLeast("max_batch_delay_us", o.max_batch_delay_us, 0));
  if (o.max_queue_rows < 1 || o.max_request_rows < 1 || o.threads < 1 ||
      o.max_message_bytes < 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_queue_rows, max_request_rows, threads: expected >= 1 and max_message_bytes >= 1024, "
        "received ",
        o.max_queue_rows, ", ", o.max_request_rows, ", ", o.threads, ", ", o.max_message_bytes));
  }
  return absl::OkStatus();
}

// The REST front end's port, threads and limits (only when it is on).
absl::Status CheckHttp(const ServerOptions& o) {
  RETURN_IF_ERROR(CheckPortFlag("http_port", o.http_port, -1));
  if (o.http_port >= 0 &&
      (o.http_max_body_bytes < 1 || o.http_threads < 1 || !(o.http_timeout_seconds > 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http_max_body_bytes, http_threads, http_timeout_seconds: expected > 0, received ",
        o.http_max_body_bytes, ", ", o.http_threads, ", ", o.http_timeout_seconds));
  }
  if (o.http_port >= 0 &&
      (o.http_max_connections < 1 || o.http_max_inflight_bytes < o.http_max_body_bytes ||
       !(o.http_idle_timeout_seconds > 0) || !(o.http_header_timeout_seconds > 0) ||
       !(o.http_body_timeout_seconds > 0) || o.http_idle_timeout_seconds > 86400 ||
       o.http_header_timeout_seconds > 86400 || o.http_body_timeout_seconds > 86400)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http_max_connections, http_max_inflight_bytes, http_idle_timeout_seconds, "
        "http_header_timeout_seconds, http_body_timeout_seconds: expected >= 1, "
        ">= http_max_body_bytes, and three durations in (0, 86400], received ",
        o.http_max_connections, ", ", o.http_max_inflight_bytes, ", ", o.http_idle_timeout_seconds,
        ", ", o.http_header_timeout_seconds, ", ", o.http_body_timeout_seconds));
  }
  return absl::OkStatus();
}

absl::Status CheckQueueBytes(const ServerOptions& o) {
  return CheckAtLeast("max_queue_bytes", o.max_queue_bytes, 1);
}

absl::Status CheckClipsAndWarmup(const ServerOptions& o) {
  if (!(o.max_audio_clip_seconds > 0 && o.max_audio_clip_seconds <= 86400)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_audio_clip_seconds: expected seconds in (0, 86400], received ",
                     o.max_audio_clip_seconds));
  }
  if (o.max_image_pixels < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_image_pixels: expected at least 1 pixel, received ", o.max_image_pixels));
  }
  if (o.warmup_rows < 0 || o.warmup_rows > o.max_request_rows) {
    return absl::InvalidArgumentError(absl::StrCat("warmup_rows: expected 0..max_request_rows (",
                                                   o.max_request_rows, "), received ",
                                                   o.warmup_rows));
  }
  return absl::OkStatus();
}

// The REST front end's answer budget and minimum transfer rates.
absl::Status CheckHttpRates(const ServerOptions& o) {
  if (o.http_max_inflight_answer_bytes < 0 || o.http_min_body_bytes_per_second < 0 ||
      o.http_min_write_bytes_per_second < 0 || !(o.http_rate_grace_seconds >= 0) ||
      o.http_rate_grace_seconds > 86400 || o.http_probe_slots < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http_max_inflight_answer_bytes, http_min_body_bytes_per_second, "
        "http_min_write_bytes_per_second, http_rate_grace_seconds, http_probe_slots: expected >= 0 "
        "(and seconds <= 86400), received ",
        o.http_max_inflight_answer_bytes, ", ", o.http_min_body_bytes_per_second, ", ",
        o.http_min_write_bytes_per_second, ", ", o.http_rate_grace_seconds, ", ",
        o.http_probe_slots));
  }
  return absl::OkStatus();
}

absl::Status CheckGrpcMemoryQuota(const ServerOptions& o) {
  if (o.grpc_memory_quota_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grpc_memory_quota_bytes: expected >= 0 (0 = none), received ", o.grpc_memory_quota_bytes));
  }
  return absl::OkStatus();
}

// The admission budgets (server/admission/) and the clip decoders.
absl::Status CheckAdmission(const ServerOptions& o) {
  if (o.max_inflight_bytes < 0 || o.max_connection_inflight_bytes < 0 ||
      o.max_decode_audio_seconds < 0 || o.max_decode_image_pixels < 0 ||
      o.http_max_response_bytes < 0 || o.decode_threads < 1 || o.decode_threads > 256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_inflight_bytes, max_connection_inflight_bytes, max_decode_audio_seconds, "
        "max_decode_image_pixels, http_max_response_bytes, decode_threads: expected >= 0 (0 = no "
        "limit) and decode_threads in 1..256, received ",
        o.max_inflight_bytes, ", ", o.max_connection_inflight_bytes, ", ",
        o.max_decode_audio_seconds, ", ", o.max_decode_image_pixels, ", ",
        o.http_max_response_bytes, ", ", o.decode_threads));
  }
  return absl::OkStatus();
}

absl::Status CheckTls(const ServerOptions& o) {
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "tls_cert/tls_key: expected both or neither, received only one");
  }
  if (!o.tls_client_ca_file.empty() && o.tls_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "tls_client_ca: expected together with tls_cert and tls_key, received alone");
  }
  return absl::OkStatus();
}

absl::Status CheckModelBytes(const ServerOptions& o) {
  if (o.max_model_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_model_bytes: expected >= 0 (0 = no limit), received ", o.max_model_bytes));
  }
  return absl::OkStatus();
}

absl::Status CheckAccessLog(const ServerOptions& o) {
  AccessLogOptions log;
  RETURN_IF_ERROR(ParseAccessLogMode(o.access_log, &log));
  if (o.access_log_queue_lines < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "access_log_queue_lines: expected at least 1, received ", o.access_log_queue_lines));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateOptions(const ServerOptions& options) {
  // In this order: the first rule broken is the one reported.
  for (absl::Status (*check)(const ServerOptions&) :
       {CheckModelsDir, CheckGrpcPort, CheckModelControl, CheckMetricsPort, CheckBatching,
        CheckHttp, CheckQueueBytes, CheckClipsAndWarmup, CheckHttpRates, CheckGrpcMemoryQuota,
        CheckAdmission, CheckTls, CheckModelBytes, CheckAccessLog}) {
    RETURN_IF_ERROR(check(options));
  }
  return absl::OkStatus();
}

absl::Status CheckStartupModelsExist(const ServerOptions& o) {
  if (o.load_models.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<std::string>> names = ListModelNames(o.models_dir);
  if (!names.ok()) return names.status();
  for (const std::string& wanted : o.load_models) {
    if (std::find(names->begin(), names->end(), wanted) == names->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "load_model: model '", EchoInput(wanted),
          "' is not a model directory of --models=", o.models_dir,
          " (it holds: ", names->empty() ? "nothing" : absl::StrJoin(*names, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace invariant::server
