// grpc_code_name.h: the canonical name of a gRPC status code.
//
// One home for the name table, used by the server's metrics labels
// (grpc_server_handled_total{grpc_code=...}) and by the command-line tools'
// error messages. Its CMake target (invariant_grpc_code_name) depends only on
// gRPC's headers, so the server links it without linking the client.
#ifndef INVARIANT_CLIENT_GRPC_CODE_NAME_H_
#define INVARIANT_CLIENT_GRPC_CODE_NAME_H_

#include <grpcpp/support/status.h>

namespace invariant {

// "OK", "CANCELLED", ..., "UNAUTHENTICATED" (the names of grpc::StatusCode);
// "UNKNOWN" for a value outside the enum, so the set of names is bounded.
// Takes the code as an int (a grpc::StatusCode converts implicitly): a value
// outside the enum's range cannot be held in a grpc::StatusCode without
// undefined behaviour (UBSan's -fsanitize=enum reports the load).
const char* GrpcCodeName(int code);

}  // namespace invariant

#endif  // INVARIANT_CLIENT_GRPC_CODE_NAME_H_
