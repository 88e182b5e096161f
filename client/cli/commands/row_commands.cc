// featurize and predict: the input rows (row_input.h) sent in batches of
// --batch_size rows, one line of output per row, --id_column first.
//   featurize  f_0..f_{k-1}: the encoder's features
//   predict    predicted_class, predicted_index (classification), then one
//              score column per class or target
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/commands/row_input.h"
#include "client/cli/format.h"

namespace invariant::cli {
namespace {

// The first CSV columns and JSON fields of row `i` for --id_column.
std::string IdCsvHeader(const RowTable& rows) {
  return rows.ids.empty() ? "" : CsvField(rows.id_name) + ",";
}
std::string IdCsvField(const RowTable& rows, int64_t i) {
  return rows.ids.empty() ? "" : CsvField(rows.ids[static_cast<size_t>(i)]) + ",";
}
std::string IdJsonField(const RowTable& rows, int64_t i) {
  return rows.ids.empty() ? "" : ",\"id\":" + JsonString(rows.ids[static_cast<size_t>(i)]);
}

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

template <typename Request>
void FillRequest(const v1::ModelSpec& model, const RowTable& rows, int64_t first, int64_t count,
                 Request* request) {
  *request->mutable_model() = model;
  request->mutable_inputs()->set_num_rows(count);
  const float* begin = rows.values.data() + first * rows.dim;
  request->mutable_inputs()->mutable_values()->Assign(begin, begin + count * rows.dim);
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

// The shared path of featurize and predict: the rows, checked against the
// model, sent in batches of context.batch_size; one output line per row.
template <typename Request, typename Response>
int SendRows(Client& client, const CommandContext& context,
             const RowCall<Request, Response>& call) {
  v1::GetModelMetadataResponse m;
  RowTable rows;
  if (int rc = PrepareRows(client, context, &m, &rows); rc != kExitOk) return rc;
  const int64_t batch = context.batch_size;
  Output out;
  for (int64_t first = 0; first < rows.num_rows; first += batch) {
    const int64_t count = std::min(batch, rows.num_rows - first);
    Request request;
    FillRequest(context.model, rows, first, count, &request);
    Response response;
    const grpc::Status status = (client.*call.send)(request, &response);
    if (!status.ok()) {
      out.Finish();
      return ReportServerError(absl::StrCat(call.name, " rows ", first + 1, "..", first + count),
                               status);
    }
    if (first == 0 && !context.jsonl) {
      out.Line(IdCsvHeader(rows) + absl::StrJoin(call.csv_columns(m, response), ","));
    }
    for (int64_t i = 0; i < response.num_rows(); ++i) {
      if (context.jsonl) {
        out.Line(absl::StrCat("{\"row\":", first + i, IdJsonField(rows, first + i),
                              ",\"model\":", JsonString(response.model_name()), ",\"version\":",
                              response.model_version(), call.json_fields(response, i), "}"));
      } else {
        out.Line(IdCsvField(rows, first + i) + call.csv_fields(response, i));
      }
    }
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

std::vector<std::string> PredictionColumns(const v1::GetModelMetadataResponse& metadata,
                                           const v1::PredictResponse& first) {
  std::vector<std::string> names;
  if (IsClassification(first)) {
    names.push_back("predicted_class");
    names.push_back("predicted_index");
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
  absl::StrAppend(&fields, ",\"scores\":",
                  JsonFloatArray(Scores(response, i), static_cast<size_t>(response.output_dim())));
  return fields;
}

}  // namespace

int RunFeaturize(Client& client, const CommandContext& context) {
  return SendRows(
      client, context,
      RowCall<v1::FeaturizeRequest, v1::FeaturizeResponse>{
          "featurize", &Client::Featurize, FeatureColumns, FeatureCsvFields, FeatureJsonFields});
}

int RunPredict(Client& client, const CommandContext& context) {
  return SendRows(client, context,
                  RowCall<v1::PredictRequest, v1::PredictResponse>{
                      "predict", &Client::Predict, PredictionColumns, PredictionCsvFields,
                      PredictionJsonFields});
}

}  // namespace invariant::cli
