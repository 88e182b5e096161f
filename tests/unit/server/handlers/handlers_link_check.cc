// handlers_link_check.cc: the test HandlersLinkWithoutGrpc.
//
// Linked with every object file of invariant_server_handlers and without gRPC
// (tests/unit/server/CMakeLists.txt), so building it fails if handler code
// uses a gRPC symbol. Running it makes one call through the handlers: an
// empty model name is INVALID_ARGUMENT (exit 0), anything else exits 1.
#include <cstdio>

#include "absl/status/status.h"
#include "invariant/v1/feature_service.pb.h"
#include "server/handlers/validation.h"

int main() {
  const invariant::v1::ModelSpec empty;
  const absl::Status status = invariant::server::ValidateModelRef(empty.name(), empty.version());
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    std::fprintf(stderr, "ValidateModelRef(empty): expected INVALID_ARGUMENT, got %s\n",
                 status.ToString().c_str());
    return 1;
  }
  return 0;
}
