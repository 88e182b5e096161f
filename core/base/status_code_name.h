// status_code_name.h: the canonical name of a status code, for the server's
// metrics labels (grpc_server_handled_total{grpc_code=...}) and the tools'
// error messages.
//
// gRPC's and Abseil's canonical codes share their numbers and names, so one
// function names both: Abseil's StatusCodeToString ("OK", "CANCELLED", ...,
// "UNAUTHENTICATED"), and "UNKNOWN" for a value outside the 17 canonical
// codes (where Abseil gives ""), so the set of names a label can take stays
// bounded. The code is taken as an int (a grpc::StatusCode converts
// implicitly, an absl::StatusCode by static_cast): an out-of-range value
// cannot be held in a grpc::StatusCode without undefined behaviour (UBSan's
// -fsanitize=enum reports the load).
//
// Errors: none. Thread-safety: a pure function, safe from any thread.
#ifndef INVARIANT_CORE_BASE_STATUS_CODE_NAME_H_
#define INVARIANT_CORE_BASE_STATUS_CODE_NAME_H_

#include <string>

namespace invariant {

std::string StatusCodeName(int code);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_STATUS_CODE_NAME_H_
