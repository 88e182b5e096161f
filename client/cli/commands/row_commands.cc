// featurize and predict: the input rows (row_input.h) sent in batches of
// --batch_size rows, one line of output per row, --id_column first; or, for
// an audio model, its clips (clip_input.h), one line per clip, the file name
// first in the column "id".
//   featurize  f_0..f_{k-1}: the encoder's features
//   predict    predicted_class, predicted_index (classification), then one
//              score column per class or target
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/clips.h"
#include "client/cli/commands/clip_input.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/commands/row_input.h"
#include "client/cli/format.h"

namespace invariant::cli {
namespace {

// "score_<class>" / "score_<target>" per score column ("score_<j>" when the
// model names none).
std::vector<std::string> ScoreColumnNames(const v1::GetModelMetadataResponse& m, int64_t t) {
  const auto& names =
      m.head().task() == v1::TASK_CLASSIFICATION ? m.head().class_names() : m.head().target_names();
  std::vector<std::string> columns;
  for (int64_t j = 0; j < t; ++j) {
    columns.push_back(CsvField(
        absl::StrCat("score_", names.size() == t ? names[static_cast<int>(j)] : absl::StrCat(j))));
  }
  return columns;
}

// What featurize and predict differ in: the call, and how the rows of its
// responses print.
template <typename Request, typename Response>
struct RowCall {
  const char* name;  // in errors: "NAME rows FIRST..LAST: CODE: message"
  grpc::Status (Client::*send)(const Request&, Response*);
  // The CSV header's columns after the id column, from the first response.
  std::vector<std::string> (*csv_columns)(const v1::GetModelMetadataResponse& metadata,
                                          const Response& first);
  // Row `i` of a response: its CSV fields after the id column, and its JSON
  // fields after "version" (each with its leading comma).
  std::string (*csv_fields)(const Response& response, int64_t i);
  std::string (*json_fields)(const Response& response, int64_t i);
};

// What is sent: rows or clips, cut into requests, each output line with its id.
struct Inputs {
  int64_t count = 0;    // outputs (rows or clips)
  std::string id_name;  // the id column's CSV header; "" = no id column
  std::function<std::string(int64_t i)> id;
  std::function<int64_t(int64_t first)> batch_end;  // the request [first, end)
  // Fills the request's inputs; an exit code.
  std::function<int(int64_t first, int64_t end, v1::InputBatch* batch)> fill;
  // Reports a failed request; an exit code.
  std::function<int(int64_t first, int64_t end, const grpc::Status& status)> report;
};

// The rows of --input or --random_rows, context.batch_size per request.
Inputs RowInputs(const RowTable& rows, const CommandContext& context, const char* call) {
  Inputs in;
  in.count = rows.num_rows;
  if (!rows.ids.empty()) {
    in.id_name = rows.id_name;
    in.id = [&rows](int64_t i) { return rows.ids[static_cast<size_t>(i)]; };
  }
  const int64_t batch = context.batch_size;
  in.batch_end = [&rows, batch](int64_t first) { return std::min(first + batch, rows.num_rows); };
  in.fill = [&rows](int64_t first, int64_t end, v1::InputBatch* inputs) {
    inputs->set_num_rows(end - first);
    const float* begin = rows.values.data() + first * rows.dim;
    inputs->mutable_values()->Assign(begin, begin + (end - first) * rows.dim);
    return kExitOk;
  };
  in.report = [call](int64_t first, int64_t end, const grpc::Status& status) {
    return ReportServerError(absl::StrCat(call, " rows ", first + 1, "..", end), status);
  };
  return in;
}

// The clips of clip_input.h, at most context.batch_size per request. The
// server refusing a clip (INVALID_ARGUMENT) is bad input: exit 2, naming the
// file (from "clips[i]" in the message, else every file of the request); for
// noise clips (--random_rows) it is a server error like any other.
Inputs ClipInputs(const ClipInput& clips, const CommandContext& context, const char* call) {
  Inputs in;
  in.count = clips.size();
  if (clips.noise_clips == 0) {
    in.id_name = "id";
    in.id = [&clips](int64_t i) { return clips.id(i); };
  }
  const int64_t batch = context.batch_size;
  in.batch_end = [&clips, batch](int64_t first) { return ClipBatchEndAt(clips, first, batch); };
  in.fill = [&clips](int64_t first, int64_t end, v1::InputBatch* inputs) {
    return FillClipBatch(clips, first, end, inputs);
  };
  in.report = [&clips, call](int64_t first, int64_t end, const grpc::Status& status) {
    const std::string range = absl::StrCat(call, " clips ", first + 1, "..", end);
    if (status.error_code() != grpc::StatusCode::INVALID_ARGUMENT || clips.noise_clips > 0) {
      return ReportServerError(range, status);  // not a file of the user's
    }
    std::string what;
    const std::optional<int64_t> index = ClipIndexInMessage(status.error_message());
    if (index.has_value() && *index < end - first) {
      what = clips.id(first + *index);
    } else {
      std::vector<std::string> ids;
      for (int64_t i = first; i < end; ++i) ids.push_back(clips.id(i));
      what = absl::StrJoin(ids, ", ");
    }
    std::cerr << "invariant-client: " << what << ": " << call << ": "
              << StatusCodeName(status.error_code()) << ": " << status.error_message() << std::endl;
    return kExitUsage;
  };
  return in;
}

// The shared path of featurize and predict: the model's metadata, then its
// rows or, for an audio model, its clips, sent request by request; one output
// line per row or clip, the id column first.
template <typename Request, typename Response>
int Send(Client& client, const CommandContext& context, const RowCall<Request, Response>& call) {
  v1::GetModelMetadataResponse m;
  const grpc::Status metadata_status = client.GetModelMetadata(context.model, &m);
  if (!metadata_status.ok()) return ReportServerError("metadata", metadata_status);
  RowTable rows;
  ClipInput clips;
  Inputs in;
  if (m.has_audio() || m.has_image()) {
    if (int rc = PrepareClips(context.rows, m, &clips); rc != kExitOk) return rc;
    in = ClipInputs(clips, context, call.name);
  } else {
    if (int rc = PrepareRows(context, m, &rows); rc != kExitOk) return rc;
    in = RowInputs(rows, context, call.name);
  }
  const bool with_id = static_cast<bool>(in.id);
  Output out;
  for (int64_t first = 0; first < in.count;) {
    const int64_t end = in.batch_end(first);
    Request request;
    *request.mutable_model() = context.model;
    if (int rc = in.fill(first, end, request.mutable_inputs()); rc != kExitOk) {
      out.Finish();
      return rc;
    }
    Response response;
    const grpc::Status status = (client.*call.send)(request, &response);
    if (!status.ok()) {
      out.Finish();
      return in.report(first, end, status);
    }
    if (first == 0 && !context.jsonl) {
      out.Line((with_id ? CsvField(in.id_name) + "," : "") +
               absl::StrJoin(call.csv_columns(m, response), ","));
    }
    for (int64_t i = 0; i < response.num_rows(); ++i) {
      if (context.jsonl) {
        out.Line(absl::StrCat(
            "{\"row\":", first + i, with_id ? ",\"id\":" + JsonString(in.id(first + i)) : "",
            ",\"model\":", JsonString(response.model_name()),
            ",\"version\":", response.model_version(), call.json_fields(response, i), "}"));
      } else {
        out.Line((with_id ? CsvField(in.id(first + i)) + "," : "") + call.csv_fields(response, i));
      }
    }
    first = end;
  }
  return out.Finish();
}

// featurize: f_0..f_{k-1}.

const float* Features(const v1::FeaturizeResponse& response, int64_t i) {
  return response.features().data() + i * response.feature_dim();
}

std::vector<std::string> FeatureColumns(const v1::GetModelMetadataResponse& /*metadata*/,
                                        const v1::FeaturizeResponse& first) {
  std::vector<std::string> names;
  for (int64_t j = 0; j < first.feature_dim(); ++j) names.push_back(absl::StrCat("f_", j));
  return names;
}

std::string FeatureCsvFields(const v1::FeaturizeResponse& response, int64_t i) {
  const float* f = Features(response, i);
  std::vector<std::string> fields;
  for (int64_t j = 0; j < response.feature_dim(); ++j) fields.push_back(FormatFloat(f[j]));
  return absl::StrJoin(fields, ",");
}

std::string FeatureJsonFields(const v1::FeaturizeResponse& response, int64_t i) {
  return absl::StrCat(
      ",\"features\":",
      JsonFloatArray(Features(response, i), static_cast<size_t>(response.feature_dim())));
}

// predict: predicted_class and predicted_index (classification), then scores.

bool IsClassification(const v1::PredictResponse& response) {
  return response.task() == v1::TASK_CLASSIFICATION;
}

const float* Scores(const v1::PredictResponse& response, int64_t i) {
  return response.scores().data() + i * response.output_dim();
}

std::string PredictedClass(const v1::PredictResponse& response, int64_t i) {
  return i < response.predicted_classes_size() ? response.predicted_classes(static_cast<int>(i))
                                               : "";
}

int32_t PredictedIndex(const v1::PredictResponse& response, int64_t i) {
  return i < response.predicted_indices_size() ? response.predicted_indices(static_cast<int>(i))
                                               : -1;
}

// A model of sound: what its front end kept of clip i ("ok" or "no_speech",
// start and end seconds), empty for rows.
bool HasSpeech(const v1::PredictResponse& response) { return response.speech_size() > 0; }

const v1::ClipSpeech& Speech(const v1::PredictResponse& response, int64_t i) {
  return i < response.speech_size() ? response.speech(static_cast<int>(i))
                                    : v1::ClipSpeech::default_instance();
}

std::vector<std::string> PredictionColumns(const v1::GetModelMetadataResponse& metadata,
                                           const v1::PredictResponse& first) {
  std::vector<std::string> names;
  if (IsClassification(first)) {
    names.push_back("predicted_class");
    names.push_back("predicted_index");
  }
  if (HasSpeech(first)) {
    for (const char* name : {"clip_status", "speech_start_seconds", "speech_end_seconds"}) {
      names.push_back(name);
    }
  }
  for (std::string& name : ScoreColumnNames(metadata, first.output_dim())) {
    names.push_back(std::move(name));
  }
  return names;
}

std::string PredictionCsvFields(const v1::PredictResponse& response, int64_t i) {
  std::vector<std::string> fields;
  if (IsClassification(response)) {
    fields.push_back(CsvField(PredictedClass(response, i)));
    fields.push_back(absl::StrCat(PredictedIndex(response, i)));
  }
  if (HasSpeech(response)) {
    const v1::ClipSpeech& speech = Speech(response, i);
    fields.push_back(speech.found() ? "ok" : "no_speech");
    fields.push_back(FormatFloat(static_cast<float>(speech.start_seconds())));
    fields.push_back(FormatFloat(static_cast<float>(speech.end_seconds())));
  }
  const float* s = Scores(response, i);
  for (int64_t j = 0; j < response.output_dim(); ++j) fields.push_back(FormatFloat(s[j]));
  return absl::StrJoin(fields, ",");
}

std::string PredictionJsonFields(const v1::PredictResponse& response, int64_t i) {
  std::string fields;
  if (IsClassification(response)) {
    absl::StrAppend(&fields, ",\"predicted_class\":", JsonString(PredictedClass(response, i)),
                    ",\"predicted_index\":", PredictedIndex(response, i));
  }
  if (HasSpeech(response)) {
    const v1::ClipSpeech& speech = Speech(response, i);
    absl::StrAppend(&fields, ",\"clip_status\":", speech.found() ? "\"ok\"" : "\"no_speech\"",
                    ",\"speech_seconds\":[",
                    FormatFloat(static_cast<float>(speech.start_seconds())), ",",
                    FormatFloat(static_cast<float>(speech.end_seconds())), "]");
  }
  absl::StrAppend(&fields, ",\"scores\":",
                  JsonFloatArray(Scores(response, i), static_cast<size_t>(response.output_dim())));
  return fields;
}

}  // namespace

int RunFeaturize(Client& client, const CommandContext& context) {
  return Send(
      client, context,
      RowCall<v1::FeaturizeRequest, v1::FeaturizeResponse>{
          "featurize", &Client::Featurize, FeatureColumns, FeatureCsvFields, FeatureJsonFields});
}

int RunPredict(Client& client, const CommandContext& context) {
  return Send(client, context,
              RowCall<v1::PredictRequest, v1::PredictResponse>{
                  "predict", &Client::Predict, PredictionColumns, PredictionCsvFields,
                  PredictionJsonFields});
}

}  // namespace invariant::cli
