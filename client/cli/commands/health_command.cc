// health: grpc.health.v1.Health/Check of --service; exit 0 when SERVING, 3
// otherwise (NOT_SERVING is printed too, then reported on stderr).
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"

namespace invariant::cli {

int RunHealth(Client& client, const CommandContext& context) {
  const std::string& service = context.service;
  bool serving = false;
  const grpc::Status status = client.Health(service, &serving);
  if (!status.ok()) return ReportServerError("health", status);
  const std::string state = serving ? "SERVING" : "NOT_SERVING";
  Output out;
  if (context.jsonl) {
    out.Line(
        absl::StrCat("{\"service\":", JsonString(service), ",\"status\":", JsonString(state), "}"));
  } else {
    out.Line(state);
  }
  const int rc = out.Finish();
  if (rc != kExitOk) return rc;
  if (!serving) {
    std::cerr << "invariant-client: health: service '" << service << "' is NOT_SERVING"
              << std::endl;
    return kExitServerError;
  }
  return kExitOk;
}

}  // namespace invariant::cli
