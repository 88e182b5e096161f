// server_builders.h: what Server::Init (server.h) gives each subsystem, as
// functions of ServerOptions (server_options.h) and the metrics, one per
// subsystem, so each can be checked on its own.
//
// Every function here only builds options and observers: nothing starts,
// binds or loads. The observers record into `metrics` (never null; it must
// outlive what holds them) and, for the registry, write the server's log
// lines. The options are assumed valid (ValidateOptions). Thread-safe: no
// state of their own.
#ifndef INVARIANT_SERVER_SERVER_BUILDERS_H_
#define INVARIANT_SERVER_SERVER_BUILDERS_H_

#include <string>

#include "server/admission/inflight_budget.h"
#include "server/admission/model_memory_budget.h"
#include "server/admission/worker_queue.h"
#include "server/batching/batcher.h"
#include "server/common/auth.h"
#include "server/handlers/feature_handler.h"
#include "server/handlers/handler_observers.h"
#include "server/handlers/model_metadata.h"
#include "server/http/http_server.h"
#include "server/lifecycle/registry.h"
#include "server/lifecycle/version_policy.h"
#include "server/metrics/metrics.h"
#include "server/server_options.h"

namespace invariant::server {

// Writes "invariant-server: <line>" to stderr: the server's log.
void LogLine(const std::string& line);

// The models root, version policy, removal grace and model control.
RegistryOptions RegistryOptionsFor(const ServerOptions& options, VersionPolicy policy);
// Loads a version's bundle; one that resolves outside options.models_dir
// (a symlink) is refused; one whose stated bytes (model_footprint.h) `memory`
// (may be null) refuses is refused from its manifest, before the bundle is
// read, and a version loaded holds its reservation for as long as it lives;
// a loaded one answers options.warmup_rows rows (model_warmup.h) before the
// registry marks it ready.
Registry::Loader ModelLoaderFor(const ServerOptions& options, ModelMemoryBudget* memory = nullptr);
// Each version ready, failed or unloaded: a log line and its metrics.
Registry::Observers RegistryObserversFor(ServerMetrics* metrics);

// Batching on unless --batching=false or max_batch_size 1; the queue
// limits; every batch, wait and abandoned request recorded in `metrics`.
BatcherOptions BatcherOptionsFor(const ServerOptions& options, ServerMetrics* metrics);

// The memory budget ("max_inflight_bytes"; one connection's share
// max_connection_inflight_bytes) and the audio budget
// ("max_decode_audio_seconds"; one connection may hold half of it) and the
// image budget ("max_decode_image_pixels"; likewise).
InflightBudgetOptions MemoryBudgetOptionsFor(const ServerOptions& options, ServerMetrics* metrics);
InflightBudgetOptions AudioBudgetOptionsFor(const ServerOptions& options, ServerMetrics* metrics);
InflightBudgetOptions ImageBudgetOptionsFor(const ServerOptions& options, ServerMetrics* metrics);
// How much lower the clip decoders' CPU priority is than the transport's.
inline constexpr int kDecoderNice = 10;
// The handler's admission over the budgets and decoders (which must outlive
// it); abandoned decodings recorded in `metrics`.
HandlerAdmission HandlerAdmissionFor(InflightBudget* memory, InflightBudget* audio,
                                     InflightBudget* images, WorkerQueue* decoders,
                                     ServerMetrics* metrics);
// Every request's outcome, decoding and writing time, into `metrics`.
HandlerObservers HandlerObserversFor(ServerMetrics* metrics);

// What the access plan (auth.h) is made of: the bind address, TLS, tokens.
AccessInputs AccessInputsFor(const ServerOptions& options);

// The REST front end's HTTP server: its address (http_host, else host),
// threads, limits and timeouts (seconds rounded up to milliseconds), its own
// errors in JSON (RestInferenceService::ErrorResponse).
HttpServerOptions HttpServerOptionsFor(const ServerOptions& options);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_SERVER_BUILDERS_H_
