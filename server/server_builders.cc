#include "server/server_builders.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/model/encoder_kinds.h"
#include "core/model/repository.h"
#include "server/handlers/model_warmup.h"
#include "server/rest/rest_service.h"

namespace invariant::server {

void LogLine(const std::string& line) { std::cerr << "invariant-server: " << line << std::endl; }

RegistryOptions RegistryOptionsFor(const ServerOptions& options, VersionPolicy policy) {
  RegistryOptions registry;
  registry.root = options.models_dir;
  registry.policy = policy;
  registry.removal_grace = absl::Seconds(options.removal_grace_seconds);
  registry.explicit_control = options.model_control == "explicit";
  registry.startup_models = options.load_models;
  return registry;
}

Registry::Loader ModelLoaderFor(const ServerOptions& options, ModelMemoryBudget* memory) {
  // A bundle (or version directory) that is a symlink out of the models root
  // is refused: its failure (with the resolved path) goes to the log and to
  // ModelAdmin, never to the data path. A loaded version answers warmup rows
  // before it is marked ready.
  return [root = options.models_dir, warmup_rows = options.warmup_rows,
          memory](const std::string& path) -> absl::StatusOr<std::shared_ptr<const Model>> {
    ASSIGN_OR_RETURN(std::string resolved, ResolveInsideRoot(root, path));
    std::shared_ptr<const void> reservation;
    ModelLoadOptions load;
    if (memory != nullptr) {
      load.admit = [memory, &resolved, &reservation](const ModelFootprint& f) -> absl::Status {
        const int threads = DefaultThreadPool().num_threads();
        ASSIGN_OR_RETURN(
            reservation,
            memory->Reserve(resolved, static_cast<int64_t>(f.total(threads)),
                            absl::StrCat("bundle ", f.bundle, ", packed ", f.packed, ", workspace ",
                                         f.workspace, " × ", threads, " compute threads")));
        return absl::OkStatus();
      };
    }
    absl::StatusOr<std::shared_ptr<const Model>> model = Model::Load(resolved, load);
    if (!model.ok()) return model;
    RETURN_IF_ERROR(WarmUp(resolved, **model, warmup_rows));
    if (reservation == nullptr) return model;
    // The reservation lives as long as the version: a shared_ptr that owns both.
    auto held =
        std::make_shared<std::pair<std::shared_ptr<const Model>, std::shared_ptr<const void>>>(
            *std::move(model), std::move(reservation));
    return std::shared_ptr<const Model>(held, held->first.get());
  };
}

Registry::Observers RegistryObserversFor(ServerMetrics* metrics) {
  Registry::Observers observers;
  observers.on_ready = [metrics](const std::string& name, int64_t version, const Model& model) {
    // The bytes it states (model_footprint.h), as --max_model_bytes counts them.
    const uint64_t bytes = model.footprint().total(DefaultThreadPool().num_threads());
    LogLine(absl::StrCat("model '", name, "' version ", version, " ready (",
                         EncoderKindName(model.manifest().encoder()), ", ", bytes, " bytes)"));
    metrics->ModelReady(name, version, EncoderKindName(model.manifest().encoder()), bytes);
  };
  observers.on_failed = [metrics](const std::string& name, int64_t version,
                                  const absl::Status& error) {
    LogLine(absl::StrCat("model '", name, "' version ", version,
                         " failed to load: ", error.ToString()));
    metrics->ModelLoadFailed(name);
  };
  observers.on_unloaded = [metrics](const std::string& name, int64_t version) {
    LogLine(absl::StrCat("model '", name, "' version ", version, " unloaded"));
    metrics->ModelUnloaded(name, version);
  };
  return observers;
}

BatcherOptions BatcherOptionsFor(const ServerOptions& options, ServerMetrics* metrics) {
  BatcherOptions batcher;
  batcher.enabled = options.batching && options.max_batch_size > 1;
  batcher.max_batch_rows = options.max_batch_size;
  batcher.max_batch_delay = absl::Microseconds(options.max_batch_delay_us);
  batcher.max_queue_rows = options.max_queue_rows;
  batcher.max_queue_bytes = options.max_queue_bytes;
  batcher.max_concurrent_batches = options.threads;
  batcher.wait_when_idle = options.batch_wait_when_idle;
  batcher.start_paused = options.testonly_start_paused;
  // One call records both the Prometheus series and the per-version
  // statistics (metrics.h), so the two never disagree.
  batcher.observers.on_batch = [metrics](const std::string& model, int64_t version,
                                         const std::string& method, int64_t rows, double seconds) {
    metrics->BatchComputed(model, version, method, rows, seconds);
  };
  batcher.observers.on_dequeue = [metrics](const std::string& model, int64_t version,
                                           double seconds) {
    metrics->Dequeued(model, version, seconds);
  };
  batcher.observers.on_queue_rows = [metrics](const std::string& model, int64_t rows) {
    metrics->QueueRows(model, rows);
  };
  batcher.observers.on_abandoned = [metrics](const std::string&, const absl::Status& status) {
    metrics->Abandoned("queue", status);
  };
  return batcher;
}

InflightBudgetOptions MemoryBudgetOptionsFor(const ServerOptions& options, ServerMetrics* metrics) {
  InflightBudgetOptions memory;
  memory.name = "max_inflight_bytes";
  memory.limit = options.max_inflight_bytes;
  memory.per_key_limit = options.max_connection_inflight_bytes;
  memory.on_refused = [metrics](const char* reason) {
    metrics->AdmissionRefused("memory", reason);
  };
  memory.on_change = [metrics](int64_t bytes) { metrics->Inflight("memory", bytes); };
  return memory;
}

namespace {

// A budget of work queued for or in decoding: flag `name`, counted in
// `unit`, recorded in `metrics` under `label`; one connection may hold half
// of it.
InflightBudgetOptions DecodeBudgetOptions(const char* name, const char* unit, int64_t limit,
                                          const char* label, ServerMetrics* metrics) {
  InflightBudgetOptions budget;
  budget.name = name;
  budget.unit = unit;
  budget.limit = limit;
  budget.per_key_limit = std::max<int64_t>(1, limit / 2);
  budget.on_refused = [metrics, label](const char* reason) {
    metrics->AdmissionRefused(label, reason);
  };
  budget.on_change = [metrics, label](int64_t units) { metrics->Inflight(label, units); };
  return budget;
}

}  // namespace

InflightBudgetOptions AudioBudgetOptionsFor(const ServerOptions& options, ServerMetrics* metrics) {
  return DecodeBudgetOptions("max_decode_audio_seconds", "seconds of audio",
                             options.max_decode_audio_seconds, "audio", metrics);
}

InflightBudgetOptions ImageBudgetOptionsFor(const ServerOptions& options, ServerMetrics* metrics) {
  return DecodeBudgetOptions("max_decode_image_pixels", "pixels", options.max_decode_image_pixels,
                             "image", metrics);
}

HandlerAdmission HandlerAdmissionFor(InflightBudget* memory, InflightBudget* audio,
                                     InflightBudget* images, WorkerQueue* decoders,
                                     ServerMetrics* metrics) {
  HandlerAdmission admission;
  admission.memory = memory;
  admission.audio = audio;
  admission.images = images;
  admission.decoders = decoders;
  admission.on_abandoned = [metrics](const char* stage, const absl::Status& status) {
    metrics->Abandoned(stage, status);
  };
  return admission;
}

HandlerObservers HandlerObserversFor(ServerMetrics* metrics) {
  HandlerObservers observers;
  observers.on_request = [metrics](const std::string& model, int64_t version, bool ok,
                                   double seconds) {
    metrics->RequestEnded(model, version, ok, seconds);
  };
  observers.on_input = [metrics](const std::string& model, int64_t version, double seconds) {
    metrics->InputDecoded(model, version, seconds);
  };
  observers.on_output = [metrics](const std::string& model, int64_t version, double seconds) {
    metrics->OutputWritten(model, version, seconds);
  };
  return observers;
}

AccessInputs AccessInputsFor(const ServerOptions& options) {
  AccessInputs access;
  access.host = options.host;
  access.tls = !options.tls_cert_file.empty();
  access.has_admin_token = !options.admin_token.empty();
  access.has_data_token = !options.data_token.empty();
  access.insecure_admin = options.insecure_admin;
  return access;
}

HttpServerOptions HttpServerOptionsFor(const ServerOptions& options) {
  HttpServerOptions http;
  http.host = options.http_host.empty() ? options.host : options.http_host;
  http.port = options.http_port;
  http.threads = options.http_threads;
  http.max_body_bytes = static_cast<size_t>(options.http_max_body_bytes);
  http.max_inflight_body_bytes = options.http_max_inflight_bytes;
  http.max_connections = options.http_max_connections;
  const auto ms = [](double seconds) { return static_cast<int>(std::ceil(seconds * 1000)); };
  http.idle_timeout_ms = ms(options.http_idle_timeout_seconds);
  http.header_timeout_ms = ms(options.http_header_timeout_seconds);
  http.body_timeout_ms = ms(options.http_body_timeout_seconds);
  http.write_timeout_ms = ms(options.http_body_timeout_seconds);
  http.error_response = &RestInferenceService::ErrorResponse;
  http.max_answer_bytes = options.http_max_inflight_answer_bytes;
  http.min_body_bytes_per_second = options.http_min_body_bytes_per_second;
  http.min_write_bytes_per_second = options.http_min_write_bytes_per_second;
  http.rate_grace_ms = ms(options.http_rate_grace_seconds);
  http.probe_slots = options.http_probe_slots;
  return http;
}

}  // namespace invariant::server
