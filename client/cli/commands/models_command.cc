// models: one line per ready version of every model, with its encoder kind,
// whether it has a head, and the version labels pointing at it (sorted).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"

namespace invariant::cli {

int RunModels(Client& client, const CommandContext& context) {
  v1::ListModelsResponse response;
  const grpc::Status status = client.ListModels(&response);
  if (!status.ok()) return ReportServerError("models", status);
  Output out;
  if (!context.jsonl) out.Line("model,version,encoder_kind,has_head,labels");
  for (const v1::ModelSummary& model : response.models()) {
    std::map<int64_t, std::vector<std::string>> labels;
    for (const auto& [label, version] : model.labels()) labels[version].push_back(label);
    for (auto& [version, names] : labels) std::sort(names.begin(), names.end());
    for (const v1::ModelVersionSummary& v : model.versions()) {
      const std::vector<std::string>& names = labels[v.version()];
      if (context.jsonl) {
        std::vector<std::string> quoted;
        for (const std::string& n : names) quoted.push_back(JsonString(n));
        out.Line(absl::StrCat("{\"model\":", JsonString(model.name()), ",\"version\":", v.version(),
                              ",\"encoder_kind\":", JsonString(v.encoder_kind()),
                              ",\"has_head\":", v.has_head() ? "true" : "false", ",\"labels\":[",
                              absl::StrJoin(quoted, ","), "]}"));
      } else {
        out.Line(absl::StrCat(CsvField(model.name()), ",", v.version(), ",",
                              CsvField(v.encoder_kind()), ",", v.has_head() ? "true" : "false", ",",
                              CsvField(absl::StrJoin(names, ";"))));
      }
    }
  }
  return out.Finish();
}

}  // namespace invariant::cli
