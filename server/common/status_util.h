// status_util.h: the ONE conversion from absl::Status to grpc::Status, and
// the ONE mapping from absl::Status to an HTTP status code (the REST front end).
//
// Errors are absl::Status values inside the server and
// are converted exactly once, at the RPC boundary. absl::StatusCode and
// grpc::StatusCode share the canonical numbering (google.rpc.Code); any code
// outside it becomes UNKNOWN. The message is passed through unchanged.
#ifndef INVARIANT_SERVER_COMMON_STATUS_UTIL_H_
#define INVARIANT_SERVER_COMMON_STATUS_UTIL_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace invariant::server {

// Returns the grpc::Status with the same canonical code and message as `status`.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Returns the absl::Status with the same canonical code and message as `status`.
absl::Status FromGrpcStatus(const grpc::Status& status);

// The HTTP status code answering `status`: OK 200; INVALID_ARGUMENT,
// FAILED_PRECONDITION, OUT_OF_RANGE 400; UNAUTHENTICATED 401;
// PERMISSION_DENIED 403; NOT_FOUND 404; ALREADY_EXISTS, ABORTED 409;
// RESOURCE_EXHAUSTED 429; CANCELLED 499; UNIMPLEMENTED 501; UNAVAILABLE 503;
// DEADLINE_EXCEEDED 504; anything else 500.
int HttpStatusCode(const absl::Status& status);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_COMMON_STATUS_UTIL_H_
