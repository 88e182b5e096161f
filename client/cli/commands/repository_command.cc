// invariant-client repository index|load MODEL|unload MODEL: the Open
// Inference Protocol's model repository extension over gRPC, on the client's
// channel with its token (main.cc sends the admin token).
#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"
#include "inference/grpc_service.grpc.pb.h"

namespace invariant::cli {

int RunRepository(Client& client, const CommandContext& context) {
  const std::string& action = context.action;
  const std::string& model = context.model.name();
  const bool index = action == "index";
  if (!index && action != "load" && action != "unload") {
    return ReportUsageError("repository: expected index, load MODEL or unload MODEL, got '" +
                            action + "'");
  }
  if (index && !model.empty()) {
    return ReportUsageError("repository index: unexpected argument '" + model + "'");
  }
  if (!index && model.empty()) return ReportUsageError("repository " + action + ": missing MODEL");
  auto stub = inference::GRPCInferenceService::NewStub(client.channel());
  if (action == "load") {
    inference::RepositoryModelLoadRequest request;
    request.set_model_name(model);
    inference::RepositoryModelLoadResponse response;
    const grpc::Status status =
        stub->RepositoryModelLoad(client.NewContext().get(), request, &response);
    if (!status.ok()) return ReportServerError("repository load", status);
  } else if (action == "unload") {
    inference::RepositoryModelUnloadRequest request;
    request.set_model_name(model);
    inference::RepositoryModelUnloadResponse response;
    const grpc::Status status =
        stub->RepositoryModelUnload(client.NewContext().get(), request, &response);
    if (!status.ok()) return ReportServerError("repository unload", status);
  }
  // After a load or unload: the model's entries, as the index shows them.
  inference::RepositoryIndexResponse response;
  const grpc::Status status = stub->RepositoryIndex(client.NewContext().get(),
                                                    inference::RepositoryIndexRequest(), &response);
  if (!status.ok()) return ReportServerError("repository index", status);
  Output out;
  if (!context.jsonl) out.Line("model,version,state,reason");
  for (const auto& m : response.models()) {
    if (!index && m.name() != model) continue;
    if (context.jsonl) {
      out.Line(absl::StrCat(
          "{\"model\":", JsonString(m.name()), ",\"version\":", JsonString(m.version()),
          ",\"state\":", JsonString(m.state()), ",\"reason\":", JsonString(m.reason()), "}"));
    } else {
      out.Line(absl::StrCat(CsvField(m.name()), ",", m.version(), ",", m.state(), ",",
                            CsvField(m.reason())));
    }
  }
  return out.Finish();
}

}  // namespace invariant::cli
