// cancellable_reactor.h: a unary callback reactor whose cancellation reaches
// the batcher.
//
// gRPC calls OnCancel when the client cancels, the deadline passes or the
// connection breaks; the reactor then cancels its CancelToken with
// DEADLINE_EXCEEDED (deadline passed) or CANCELLED, so a queued request
// leaves the batch queue at once and the call finishes with that status
// (which the metrics count). The reactor deletes itself in OnDone (giving
// back the call's admission leases); the handler must Finish it exactly once.
#ifndef INVARIANT_SERVER_GRPC_CANCELLABLE_REACTOR_H_
#define INVARIANT_SERVER_GRPC_CANCELLABLE_REACTOR_H_

#include <grpcpp/support/server_callback.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/admission/inflight_budget.h"
#include "server/batching/batcher.h"

namespace invariant::server {

// The status of a call gRPC cancelled: DEADLINE_EXCEEDED once `deadline` has
// passed, CANCELLED otherwise.
inline absl::Status CallCancelledStatus(absl::Time deadline) {
  if (absl::Now() >= deadline) {
    return absl::DeadlineExceededError("deadline expired before the call was answered");
  }
  return absl::CancelledError("the call was cancelled by the client or its connection closed");
}

class CancellableUnaryReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit CancellableUnaryReactor(absl::Time deadline)
      : deadline_(deadline), token_(std::make_shared<CancelToken>()) {}

  const std::shared_ptr<CancelToken>& token() const { return token_; }
  // The call's admission leases, handed over by the handler when the call
  // ends and given back when gRPC is done with it (OnDone: the answer sent).
  const std::shared_ptr<LeaseBag>& leases() const { return leases_; }
  absl::Time deadline() const { return deadline_; }

  void OnCancel() override {
    // A copy: the cancelled job's done may Finish the call, and OnDone
    // deletes this reactor, while Cancel still runs.
    const std::shared_ptr<CancelToken> token = token_;
    token->Cancel(CallCancelledStatus(deadline_));
  }
  void OnDone() override { delete this; }

 private:
  const absl::Time deadline_;
  const std::shared_ptr<CancelToken> token_;
  const std::shared_ptr<LeaseBag> leases_ = std::make_shared<LeaseBag>();
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_GRPC_CANCELLABLE_REACTOR_H_
