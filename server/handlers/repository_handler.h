// repository_handler.h: the Open Inference Protocol's model repository
// extension (Triton's RepositoryIndex, RepositoryModelLoad,
// RepositoryModelUnload), free of any transport.
//
// Index lists every model directory under the models root and every model
// the registry knows, each version with its state (READY, LOADING,
// UNAVAILABLE with the reason: the load error, "unloaded by request", or not
// loaded); `ready` keeps the READY ones. Load and Unload are
// Registry::LoadModel / UnloadModel (registry.h): under
// --model_control=explicit only (FAILED_PRECONDITION naming model_control
// otherwise); loading is the staged, verified path of a reload (a corrupt
// bundle is refused with its reason, in the answer and in the index, while
// the version serving keeps serving); unloading takes the model out of
// lookups at once; the calls in flight finish on the bits they hold, and
// Unload answers once they have (drained), or after `drain_timeout` with OK
// and the bits freed when the last call ends.
//
// Access is the transport's business: both front ends check the admin token
// (auth.h CheckAdmin) before calling these. The answers may name files of
// the models directory (load errors), as ModelAdmin.GetModelStatus does.
//
// Errors: INVALID_ARGUMENT naming the field: repository_name (the server has
// one repository: expected ""), model_name (empty, too long), parameters.<key>
// (no parameter is supported: loading from files sent in the request is not);
// NOT_FOUND naming model_name for a model the root does not hold.
// Threads: Load and Unload never block the calling (transport) thread. They
// check the request there, then run on the handler's own worker thread (one:
// loads and unloads are serialized with rescans anyway), and `done` is
// called once with the outcome: on the calling thread for a request refused
// by its checks, else on the worker, or, for an unload with calls in flight,
// on the drain thread once they have ended (it looks every 5 ms while an
// unload drains, and sleeps otherwise). Stop() (the server's shutdown)
// answers the drains still waiting at once with OK (their bits are freed
// when their last call ends) and refuses later calls with UNAVAILABLE.
// Thread-safety: every method may be called from any thread.
#ifndef INVARIANT_SERVER_HANDLERS_REPOSITORY_HANDLER_H_
#define INVARIANT_SERVER_HANDLERS_REPOSITORY_HANDLER_H_

#include <functional>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "inference/grpc_service.pb.h"
#include "server/handlers/model_metadata.h"

namespace invariant::server {

class RepositoryWork;  // the worker and drain threads (repository_handler.cc)

class RepositoryHandler {
 public:
  using DoneFn = std::function<void(absl::Status)>;

  // `registry` must outlive the handler; `on_change` (may be empty) runs
  // after every load or unload that reached the registry (health, metrics).
  explicit RepositoryHandler(Registry* registry, std::function<void()> on_change = {},
                             absl::Duration drain_timeout = absl::Seconds(30));
  // Stops (as Stop), waits for the load or unload running, then joins.
  ~RepositoryHandler();
  RepositoryHandler(const RepositoryHandler&) = delete;
  RepositoryHandler& operator=(const RepositoryHandler&) = delete;

  absl::Status Index(const inference::RepositoryIndexRequest& request,
                     inference::RepositoryIndexResponse* response) const;
  // The answers carry nothing but the status, passed to `done`.
  void Load(const inference::RepositoryModelLoadRequest& request, DoneFn done) const;
  void Unload(const inference::RepositoryModelUnloadRequest& request, DoneFn done) const;
  void Stop() const;

 private:
  Registry* registry_;
  const std::function<void()> on_change_;
  const absl::Duration drain_timeout_;
  const std::unique_ptr<RepositoryWork> work_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_REPOSITORY_HANDLER_H_
