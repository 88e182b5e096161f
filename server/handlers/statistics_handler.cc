#include "server/handlers/statistics_handler.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/error_text.h"
#include "server/handlers/inference_tensors.h"

namespace invariant::server {
namespace {

constexpr char kStatisticsNameField[] = "name";
constexpr char kStatisticsVersionField[] = "version";

// The ready versions of every model (or of `only`, when set), ascending.
std::vector<std::pair<std::string, int64_t>> ReadyPairs(const Registry& registry,
                                                        const std::string* only) {
  std::vector<std::pair<std::string, int64_t>> pairs;
  for (const auto& [name, versions] : registry.Snapshot()) {
    if (only != nullptr && name != *only) continue;
    for (const auto& info : versions) {
      if (info.state == VersionState::kReady) pairs.emplace_back(name, info.version);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace

absl::Status AnswerModelStatistics(const Registry& registry, const StatisticsSource& source,
                                   const inference::ModelStatisticsRequest& request,
                                   inference::ModelStatisticsResponse* response) {
  std::vector<std::pair<std::string, int64_t>> pairs;
  if (request.name().empty()) {
    if (!request.version().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kStatisticsVersionField,
                       ": expected \"\" when name is \"\" (the statistics of every model), "
                       "received '",
                       EchoInput(request.version()), "'"));
    }
    pairs = ReadyPairs(registry, nullptr);
  } else {
    absl::StatusOr<v1::ModelSpec> spec = ModelSpecFromProtocol(
        request.name(), request.version(), kStatisticsNameField, kStatisticsVersionField);
    if (!spec.ok()) return spec.status();
    // Unknown models, versions and labels: NOT_FOUND naming the field, as ModelMetadata says it.
    absl::StatusOr<Registry::Handle> handle =
        registry.Lookup(spec->name(), spec->version(), spec->version_label(),
                        {kStatisticsNameField, kStatisticsVersionField, kStatisticsVersionField});
    if (!handle.ok()) return handle.status();
    if (request.version().empty()) {
      pairs = ReadyPairs(registry, &handle->name);
    } else {
      pairs.emplace_back(handle->name, handle->version);
    }
  }
  for (const auto& [name, version] : pairs) source(name, version, response->add_model_stats());
  return absl::OkStatus();
}

}  // namespace invariant::server
