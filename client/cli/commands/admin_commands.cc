// reload and status: the ModelAdmin calls (main.cc sends the admin token).
//   reload  rescan the models directory now; counts of versions loaded,
//           failed and unloaded
//   status  every version's state (LOADING, READY, FAILED with its error,
//           UNLOADED) of MODEL, or of every model
#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/enum_text.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"

namespace invariant::cli {
namespace {

// "LOADING", "READY", "FAILED", "UNLOADED"; "UNSPECIFIED" otherwise.
std::string StateText(v1::VersionState state) {
  return EnumText(v1::VersionState_Name(state), "VERSION_STATE_", LetterCase::kAsDeclared,
                  "UNSPECIFIED");
}

}  // namespace

int RunReload(Client& client, const CommandContext& context) {
  v1::ReloadModelsResponse response;
  const grpc::Status status = client.ReloadModels(&response);
  if (!status.ok()) return ReportServerError("reload", status);
  Output out;
  if (context.jsonl) {
    out.Line(absl::StrCat("{\"versions_loaded\":", response.versions_loaded(),
                          ",\"versions_failed\":", response.versions_failed(),
                          ",\"versions_unloaded\":", response.versions_unloaded(), "}"));
  } else {
    out.Line("versions_loaded,versions_failed,versions_unloaded");
    out.Line(absl::StrCat(response.versions_loaded(), ",", response.versions_failed(), ",",
                          response.versions_unloaded()));
  }
  return out.Finish();
}

int RunStatus(Client& client, const CommandContext& context) {
  v1::GetModelStatusResponse response;
  const grpc::Status status = client.GetModelStatus(context.model.name(), &response);
  if (!status.ok()) return ReportServerError("status", status);
  Output out;
  if (!context.jsonl) out.Line("model,version,state,error");
  for (const v1::ModelStatus& m : response.models()) {
    for (const v1::VersionStatus& v : m.versions()) {
      if (context.jsonl) {
        out.Line(absl::StrCat("{\"model\":", JsonString(m.name()), ",\"version\":", v.version(),
                              ",\"state\":", JsonString(StateText(v.state())),
                              ",\"error\":", JsonString(v.error()), "}"));
      } else {
        out.Line(absl::StrCat(CsvField(m.name()), ",", v.version(), ",", StateText(v.state()), ",",
                              CsvField(v.error())));
      }
    }
  }
  return out.Finish();
}

}  // namespace invariant::cli
