// stats: the Open Inference Protocol's statistics extension
// (inference.GRPCInferenceService/ModelStatistics, over the client's channel
// with its credentials): every loaded version of every model, of MODEL, or
// of MODEL at --version / --version_label. One line per version: CSV
// (model, version, last_inference in ms since the epoch, inference_count
// rows, execution_count batches, then count and ns of success, fail, queue,
// compute_input, compute_infer, compute_output), or with --format=jsonl the
// protocol's fields, batch_stats included. What the numbers mean:
// docs/operations.md "Per-model statistics".
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"
#include "inference/grpc_service.grpc.pb.h"

namespace invariant::cli {
namespace {

struct Named {
  const char* name;
  const inference::StatisticDuration& duration;
};

std::vector<Named> Durations(const inference::InferStatistics& s) {
  return {{"success", s.success()},
          {"fail", s.fail()},
          {"queue", s.queue()},
          {"compute_input", s.compute_input()},
          {"compute_infer", s.compute_infer()},
          {"compute_output", s.compute_output()}};
}

std::string DurationJson(const inference::StatisticDuration& d) {
  return absl::StrCat("{\"count\":", d.count(), ",\"ns\":", d.ns(), "}");
}

std::string JsonLine(const inference::ModelStatistics& m) {
  std::vector<std::string> stats;
  for (const Named& d : Durations(m.inference_stats())) {
    stats.push_back(absl::StrCat("\"", d.name, "\":", DurationJson(d.duration)));
  }
  std::vector<std::string> batches;
  for (const inference::InferBatchStatistics& b : m.batch_stats()) {
    batches.push_back(absl::StrCat("{\"batch_size\":", b.batch_size(),
                                   ",\"compute_infer\":", DurationJson(b.compute_infer()), "}"));
  }
  return absl::StrCat(
      "{\"model\":", JsonString(m.name()), ",\"version\":", JsonString(m.version()),
      ",\"last_inference\":", m.last_inference(), ",\"inference_count\":", m.inference_count(),
      ",\"execution_count\":", m.execution_count(), ",\"inference_stats\":{",
      absl::StrJoin(stats, ","), "},\"batch_stats\":[", absl::StrJoin(batches, ","), "]}");
}

}  // namespace

int RunStats(Client& client, const CommandContext& context) {
  inference::ModelStatisticsRequest request;
  request.set_name(context.model.name());
  if (!context.model.version_label().empty()) {
    request.set_version(context.model.version_label());
  } else if (context.model.version() > 0) {
    request.set_version(absl::StrCat(context.model.version()));
  }
  inference::ModelStatisticsResponse response;
  auto call = client.NewContext();
  const grpc::Status status = inference::GRPCInferenceService::NewStub(client.channel())
                                  ->ModelStatistics(call.get(), request, &response);
  if (!status.ok()) return ReportServerError("stats", status);
  Output out;
  if (!context.jsonl) {
    std::string header = "model,version,last_inference,inference_count,execution_count";
    for (const Named& d :
         Durations(response.model_stats().empty() ? inference::InferStatistics::default_instance()
                                                  : response.model_stats(0).inference_stats())) {
      absl::StrAppend(&header, ",", d.name, "_count,", d.name, "_ns");
    }
    out.Line(header);
  }
  for (const inference::ModelStatistics& m : response.model_stats()) {
    if (context.jsonl) {
      out.Line(JsonLine(m));
      continue;
    }
    std::string line =
        absl::StrCat(CsvField(m.name()), ",", CsvField(m.version()), ",", m.last_inference(), ",",
                     m.inference_count(), ",", m.execution_count());
    for (const Named& d : Durations(m.inference_stats())) {
      absl::StrAppend(&line, ",", d.duration.count(), ",", d.duration.ns());
    }
    out.Line(line);
  }
  return out.Finish();
}

}  // namespace invariant::cli
