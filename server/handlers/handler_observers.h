// handler_observers.h: what FeatureHandler reports of each request, for the
// per-model statistics (server/common/model_statistics.h), without knowing
// who listens: the server passes functions in (server_builders.cc), so the handlers
// stay free of gRPC and of the metrics.
//
// Each function may be empty and may be called from any thread (the calling
// transport thread, a clip-decoding worker, a batcher worker) at once with
// others; it must be quick and must not call into the handler. `model` and
// `version` are the version a lookup resolved to (a name from the models
// directory, never the string a client sent), so the set of keys is bounded
// by the models served.
#ifndef INVARIANT_SERVER_HANDLERS_HANDLER_OBSERVERS_H_
#define INVARIANT_SERVER_HANDLERS_HANDLER_OBSERVERS_H_

#include <cstdint>
#include <functional>
#include <string>

namespace invariant::server {

struct HandlerObservers {
  // A request ended, `ok` or with an error, `seconds` after its handler
  // began (FeatureHandler::Observed: once the model was looked up). Called
  // once per request, before the front end's `done`.
  std::function<void(const std::string& model, int64_t version, bool ok, double seconds)>
      on_request;
  // A request's clips were decoded into rows (models of sound) in `seconds`.
  std::function<void(const std::string& model, int64_t version, double seconds)> on_input;
  // A request's outputs were written after its compute in `seconds`
  // (requests answered OK only).
  std::function<void(const std::string& model, int64_t version, double seconds)> on_output;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_HANDLER_OBSERVERS_H_
