#include "server/rest/rest_statistics.h"

#include "absl/strings/str_cat.h"
#include "core/base/json.h"

namespace invariant::server {
namespace {

void AppendDuration(const char* key, const inference::StatisticDuration& d, std::string* out) {
  absl::StrAppend(out, "\"", key, "\":{\"count\":", d.count(), ",\"ns\":", d.ns(), "}");
}

void AppendInferStatistics(const inference::InferStatistics& s, std::string* out) {
  out->push_back('{');
  AppendDuration("success", s.success(), out);
  out->push_back(',');
  AppendDuration("fail", s.fail(), out);
  out->push_back(',');
  AppendDuration("queue", s.queue(), out);
  out->push_back(',');
  AppendDuration("compute_input", s.compute_input(), out);
  out->push_back(',');
  AppendDuration("compute_infer", s.compute_infer(), out);
  out->push_back(',');
  AppendDuration("compute_output", s.compute_output(), out);
  out->push_back(',');
  AppendDuration("cache_hit", s.cache_hit(), out);
  out->push_back(',');
  AppendDuration("cache_miss", s.cache_miss(), out);
  out->push_back('}');
}

void AppendBatch(const inference::InferBatchStatistics& b, std::string* out) {
  absl::StrAppend(out, "{\"batch_size\":", b.batch_size(), ",");
  AppendDuration("compute_input", b.compute_input(), out);
  out->push_back(',');
  AppendDuration("compute_infer", b.compute_infer(), out);
  out->push_back(',');
  AppendDuration("compute_output", b.compute_output(), out);
  out->push_back('}');
}

}  // namespace

std::string ModelStatisticsToJson(const inference::ModelStatisticsResponse& response) {
  std::string out = "{\"model_stats\":[";
  for (int i = 0; i < response.model_stats_size(); ++i) {
    const inference::ModelStatistics& m = response.model_stats(i);
    if (i > 0) out.push_back(',');
    out += "{\"name\":";
    AppendJsonString(m.name(), &out);
    out += ",\"version\":";
    AppendJsonString(m.version(), &out);
    absl::StrAppend(&out, ",\"last_inference\":", m.last_inference(),
                    ",\"inference_count\":", m.inference_count(),
                    ",\"execution_count\":", m.execution_count(), ",\"inference_stats\":");
    AppendInferStatistics(m.inference_stats(), &out);
    out += ",\"batch_stats\":[";
    for (int j = 0; j < m.batch_stats_size(); ++j) {
      if (j > 0) out.push_back(',');
      AppendBatch(m.batch_stats(j), &out);
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace invariant::server
