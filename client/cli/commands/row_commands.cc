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

}  // namespace

int RunFeaturize(Client& client, const CommandContext& context) {
  v1::GetModelMetadataResponse m;
  RowTable rows;
  if (int rc = PrepareRows(client, context, &m, &rows); rc != kExitOk) return rc;
  const int64_t batch = context.batch_size;
  Output out;
  for (int64_t first = 0; first < rows.num_rows; first += batch) {
    const int64_t count = std::min(batch, rows.num_rows - first);
    v1::FeaturizeRequest request;
    FillRequest(context.model, rows, first, count, &request);
    v1::FeaturizeResponse response;
    const grpc::Status status = client.Featurize(request, &response);
    if (!status.ok()) {
      out.Finish();
      return ReportServerError(absl::StrCat("featurize rows ", first + 1, "..", first + count),
                               status);
    }
    const int64_t k = response.feature_dim();
    if (first == 0 && !context.jsonl) {
      std::vector<std::string> names;
      for (int64_t j = 0; j < k; ++j) names.push_back(absl::StrCat("f_", j));
      out.Line(IdCsvHeader(rows) + absl::StrJoin(names, ","));
    }
    for (int64_t i = 0; i < response.num_rows(); ++i) {
      const float* f = response.features().data() + i * k;
      if (context.jsonl) {
        out.Line(absl::StrCat("{\"row\":", first + i, IdJsonField(rows, first + i),
                              ",\"model\":", JsonString(response.model_name()),
                              ",\"version\":", response.model_version(),
                              ",\"features\":", JsonFloatArray(f, static_cast<size_t>(k)), "}"));
      } else {
        std::vector<std::string> fields;
        for (int64_t j = 0; j < k; ++j) fields.push_back(FormatFloat(f[j]));
        out.Line(IdCsvField(rows, first + i) + absl::StrJoin(fields, ","));
      }
    }
  }
  return out.Finish();
}

int RunPredict(Client& client, const CommandContext& context) {
  v1::GetModelMetadataResponse m;
  RowTable rows;
  if (int rc = PrepareRows(client, context, &m, &rows); rc != kExitOk) return rc;
  const int64_t batch = context.batch_size;
  Output out;
  for (int64_t first = 0; first < rows.num_rows; first += batch) {
    const int64_t count = std::min(batch, rows.num_rows - first);
    v1::PredictRequest request;
    FillRequest(context.model, rows, first, count, &request);
    v1::PredictResponse response;
    const grpc::Status status = client.Predict(request, &response);
    if (!status.ok()) {
      out.Finish();
      return ReportServerError(absl::StrCat("predict rows ", first + 1, "..", first + count),
                               status);
    }
    const int64_t t = response.output_dim();
    const bool classification = response.task() == v1::TASK_CLASSIFICATION;
    if (first == 0 && !context.jsonl) {
      std::vector<std::string> names;
      if (classification) {
        names.push_back("predicted_class");
        names.push_back("predicted_index");
      }
      for (std::string& name : ScoreColumnNames(m, t)) names.push_back(std::move(name));
      out.Line(IdCsvHeader(rows) + absl::StrJoin(names, ","));
    }
    for (int64_t i = 0; i < response.num_rows(); ++i) {
      const float* s = response.scores().data() + i * t;
      const std::string predicted = i < response.predicted_classes_size()
                                        ? response.predicted_classes(static_cast<int>(i))
                                        : "";
      const int32_t index = i < response.predicted_indices_size()
                                ? response.predicted_indices(static_cast<int>(i))
                                : -1;
      if (context.jsonl) {
        std::string line = absl::StrCat("{\"row\":", first + i, IdJsonField(rows, first + i),
                                        ",\"model\":", JsonString(response.model_name()),
                                        ",\"version\":", response.model_version());
        if (classification) {
          absl::StrAppend(&line, ",\"predicted_class\":", JsonString(predicted),
                          ",\"predicted_index\":", index);
        }
        absl::StrAppend(&line, ",\"scores\":", JsonFloatArray(s, static_cast<size_t>(t)), "}");
        out.Line(line);
      } else {
        std::vector<std::string> fields;
        if (classification) {
          fields.push_back(CsvField(predicted));
          fields.push_back(absl::StrCat(index));
        }
        for (int64_t j = 0; j < t; ++j) fields.push_back(FormatFloat(s[j]));
        out.Line(IdCsvField(rows, first + i) + absl::StrJoin(fields, ","));
      }
    }
  }
  return out.Finish();
}

}  // namespace invariant::cli
