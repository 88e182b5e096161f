// main.cc: invariant-client, the command-line client of invariant-server.
//
//   invariant-client health   [--service=NAME]
//   invariant-client models
//   invariant-client metadata  MODEL
//   invariant-client featurize MODEL [--input=FILE|-] [--random_rows=N]
//   invariant-client predict   MODEL [--input=FILE|-] [--random_rows=N]
//   invariant-client reload                      (ModelAdmin; --admin_token_file)
//   invariant-client status    [MODEL]           (ModelAdmin; --admin_token_file)
//
// featurize and predict first read the model's metadata and check the rows
// against it before any row is sent: the row width against input_dim, and,
// when the input has a header and the model stores its training columns,
// the column names and their order (errors name the columns; exit 2).
//
// Output goes to stdout as CSV (header line first) or, with --format=jsonl,
// one JSON object per line. Exit codes: 0 ok; 2 usage (unknown subcommand,
// bad flags, unreadable or malformed input rows, reported as FILE:LINE:
// reason, rows that do not fit the model); 3 the server call failed (gRPC
// code name and message on stderr) or `health` is not SERVING; 1 the output
// could not be written.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/connection.h"
#include "client/cli/flag_parser.h"
#include "client/cli/format.h"
#include "client/cli/rows.h"
#include "client/client.h"
#include "core/base/random.h"

ABSL_FLAG(std::string, target, "localhost:8500",
          "Server address host:port (or any gRPC target URI).");
ABSL_FLAG(int64_t, version, 0, "Model version; 0 = the newest ready version.");
ABSL_FLAG(std::string, version_label, "",
          "Model version label (e.g. stable) instead of --version.");
ABSL_FLAG(std::string, format, "csv", "Output format: csv | jsonl.");
ABSL_FLAG(std::string, input, "-", "Rows file (CSV, TSV or IDX, optionally gzip); - = stdin.");
ABSL_FLAG(std::string, delimiter, "",
          "Field delimiter of text rows: one character or 'tab'; default by extension.");
ABSL_FLAG(std::string, header, "auto",
          "Header line of text rows: auto (a first row of only non-numbers) | yes | no.");
ABSL_FLAG(std::vector<std::string>, ignore_columns, {},
          "Text columns to skip, by header name or 1-BASED number (1 = the first column), "
          "e.g. a label column. An unnamed first column (pandas' index) is skipped anyway.");
ABSL_FLAG(std::string, id_column, "",
          "Text column carried to the output as its first column (header name or 1-based "
          "number); not sent to the model.");
ABSL_FLAG(std::string, admin_token_file, "",
          "reload/status: file holding the server's admin token (invariant-server "
          "--admin_token_file); default: --token_file.");
ABSL_FLAG(std::string, input_format, "auto", "auto | text | idx.");
ABSL_FLAG(int64_t, batch_size, 1024, "Rows per request.");
ABSL_FLAG(int64_t, random_rows, 0,
          "Instead of --input: N seeded standard-normal rows of the model's input_dim.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of --random_rows.");
ABSL_FLAG(std::string, service, "",
          "health: the service checked; '' = the server, invariant.v1.FeatureService = "
          "ready (every model has a ready version).");

namespace invariant::cli {
namespace {

constexpr char kUsage[] = R"(usage: invariant-client SUBCOMMAND [ARGS] [--flags]

subcommands:
  health            exit 0 when the server (or --service) is SERVING, 3 otherwise
  models            the models and their ready versions
  metadata MODEL    the model's shapes, input columns and scaling, encoder, head, metrics
  featurize MODEL   features of the input rows
  predict MODEL     predictions (predicted class, one score column per class/target)
  reload            rescan the models directory now (ModelAdmin)
  status [MODEL]    every version's state: LOADING, READY, FAILED (why), UNLOADED

input rows: --input=FILE (.csv, .tsv, IDX; gzip ok) or stdin; or --random_rows=N
  text: delimiter by extension, else from the first line (tab or comma); a header
  is recognised automatically; an unnamed first column (pandas' index) is skipped;
  columns for --ignore_columns / --id_column by header name or 1-based number.
  The rows are checked against the model's metadata before sending: width, and
  with a header, the training columns and their order.
  Scaling: values are sent as read; IDX unsigned bytes become v/255 (the model's
  metadata shows input_scaling: unit_byte for models trained on IDX images).
output: CSV with a header (default) or --format=jsonl; --id_column comes first
exit codes: 0 ok, 1 output error, 2 usage or bad input (FILE:LINE: reason, or
            rows that do not fit the model), 3 server error (gRPC code and message)

flags:
)";

// The files whose flags --help lists.
const std::vector<std::string> kFlagFiles = {"client/cli/main.cc",
                                             "client/cli/connection_flags.cc"};

bool Jsonl() { return absl::GetFlag(FLAGS_format) == "jsonl"; }

int Usage(const std::string& message) {
  std::cerr << "invariant-client: " << message << "\n"
            << "run 'invariant-client --help' for usage" << std::endl;
  return kExitUsage;
}

int ServerError(const std::string& what, const grpc::Status& status) {
  std::cerr << "invariant-client: " << what << ": " << GrpcCodeName(status.error_code()) << ": "
            << status.error_message() << std::endl;
  return kExitServerError;
}

// Buffered stdout; Finish() reports a write failure.
class Output {
 public:
  void Line(const std::string& line) {
    buffer_ += line;
    buffer_ += '\n';
    if (buffer_.size() > (1 << 16)) Flush();
  }
  void Flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), stdout) != buffer_.size()) {
      failed_ = true;
    }
    buffer_.clear();
  }
  int Finish() {
    Flush();
    if (std::fflush(stdout) != 0 || failed_ || std::ferror(stdout)) {
      std::cerr << "invariant-client: cannot write the output" << std::endl;
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  std::string buffer_;
  bool failed_ = false;
};

std::string TaskName(v1::Task task) {
  switch (task) {
    case v1::TASK_CLASSIFICATION:
      return "classification";
    case v1::TASK_REGRESSION:
      return "regression";
    default:
      return "none";
  }
}

// "none" (values as read), "unit_byte" (unsigned bytes / 255), "unknown".
std::string ScalingName(v1::InputScaling scaling) {
  switch (scaling) {
    case v1::INPUT_SCALING_NONE:
      return "none";
    case v1::INPUT_SCALING_UNIT_BYTE:
      return "unit_byte";
    default:
      return "unknown";
  }
}

v1::ModelSpec Spec(const std::string& model) {
  v1::ModelSpec spec;
  spec.set_name(model);
  spec.set_version(absl::GetFlag(FLAGS_version));
  spec.set_version_label(absl::GetFlag(FLAGS_version_label));
  return spec;
}

int Health(Client& client) {
  const std::string service = absl::GetFlag(FLAGS_service);
  bool serving = false;
  const grpc::Status status = client.Health(service, &serving);
  if (!status.ok()) return ServerError("health", status);
  const std::string state = serving ? "SERVING" : "NOT_SERVING";
  Output out;
  if (Jsonl()) {
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

int Models(Client& client) {
  v1::ListModelsResponse response;
  const grpc::Status status = client.ListModels(&response);
  if (!status.ok()) return ServerError("models", status);
  Output out;
  if (!Jsonl()) out.Line("model,version,encoder_kind,has_head,labels");
  for (const v1::ModelSummary& model : response.models()) {
    std::map<int64_t, std::vector<std::string>> labels;
    for (const auto& [label, version] : model.labels()) labels[version].push_back(label);
    for (auto& [version, names] : labels) std::sort(names.begin(), names.end());
    for (const v1::ModelVersionSummary& v : model.versions()) {
      const std::vector<std::string>& names = labels[v.version()];
      if (Jsonl()) {
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

int Metadata(Client& client, const std::string& model) {
  v1::GetModelMetadataResponse m;
  const grpc::Status status = client.GetModelMetadata(Spec(model), &m);
  if (!status.ok()) return ServerError("metadata", status);
  std::vector<std::string> shape;
  for (int64_t d : m.input_shape()) shape.push_back(absl::StrCat(d));
  const v1::HeadInfo& head = m.head();
  const bool has_head = m.output_dim() > 0;
  std::map<std::string, double> metrics(m.metrics().begin(), m.metrics().end());
  Output out;
  if (Jsonl()) {
    auto strings = [](const auto& list) {
      std::vector<std::string> quoted;
      for (const std::string& s : list) quoted.push_back(JsonString(s));
      return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
    };
    std::vector<std::string> metric_items;
    for (const auto& [k, v] : metrics) metric_items.push_back(JsonString(k) + ":" + JsonNumber(v));
    const v1::CertificateInfo& c = m.certificate();
    out.Line(absl::StrCat(
        "{\"model_name\":", JsonString(m.model_name()), ",\"model_version\":", m.model_version(),
        ",\"input_shape\":[", absl::StrJoin(shape, ","), "],\"input_dim\":", m.input_dim(),
        ",\"feature_dim\":", m.feature_dim(), ",\"output_dim\":", m.output_dim(),
        ",\"encoder_kind\":", JsonString(m.encoder_kind()),
        ",\"task\":", JsonString(has_head ? TaskName(head.task()) : "none"), ",\"class_names\":",
        strings(head.class_names()), ",\"target_names\":", strings(head.target_names()),
        ",\"input_columns\":", strings(m.input_columns()),
        ",\"input_scaling\":", JsonString(ScalingName(m.input_scaling())),
        ",\"model_bytes\":", m.model_bytes(), ",\"metrics\":{", absl::StrJoin(metric_items, ","),
        "}", ",\"certificate\":{\"max_discrepancy\":", JsonNumber(c.max_discrepancy()),
        ",\"mean_discrepancy\":", JsonNumber(c.mean_discrepancy()), ",\"num_points\":",
        c.num_points(), ",\"exhaustive\":", c.exhaustive() ? "true" : "false", "}}"));
    return out.Finish();
  }
  auto row = [&out](const std::string& key, const std::string& value) {
    out.Line(CsvField(key) + "," + CsvField(value));
  };
  out.Line("field,value");
  row("model_name", m.model_name());
  row("model_version", absl::StrCat(m.model_version()));
  row("input_shape", absl::StrJoin(shape, "x"));
  row("input_dim", absl::StrCat(m.input_dim()));
  row("feature_dim", absl::StrCat(m.feature_dim()));
  row("output_dim", absl::StrCat(m.output_dim()));
  row("encoder_kind", m.encoder_kind());
  row("task", has_head ? TaskName(head.task()) : "none");
  row("class_names", absl::StrJoin(head.class_names(), ";"));
  row("target_names", absl::StrJoin(head.target_names(), ";"));
  row("input_columns", absl::StrJoin(m.input_columns(), ";"));
  row("input_scaling", ScalingName(m.input_scaling()));
  row("model_bytes", absl::StrCat(m.model_bytes()));
  for (const auto& [k, v] : metrics) row("metric." + k, FormatDouble(v));
  row("certificate.max_discrepancy", FormatDouble(m.certificate().max_discrepancy()));
  row("certificate.mean_discrepancy", FormatDouble(m.certificate().mean_discrepancy()));
  row("certificate.num_points", absl::StrCat(m.certificate().num_points()));
  row("certificate.exhaustive", m.certificate().exhaustive() ? "true" : "false");
  return out.Finish();
}

// The input rows: --random_rows (of the model's input_dim), else --input.
// Returns an exit code != 0 on failure.
int LoadRows(const v1::GetModelMetadataResponse& m, RowTable* table) {
  const int64_t random_rows = absl::GetFlag(FLAGS_random_rows);
  if (random_rows < 0 || random_rows > 1000000) {
    return Usage(absl::StrCat("--random_rows: expected 0..1000000, got ", random_rows));
  }
  if (random_rows > 0) {
    if (!absl::GetFlag(FLAGS_id_column).empty()) {
      return Usage("--id_column needs --input rows, not --random_rows");
    }
    Rng rng(absl::GetFlag(FLAGS_seed));  // the same rows on every platform
    table->num_rows = random_rows;
    table->dim = m.input_dim();
    table->values.resize(static_cast<size_t>(random_rows * m.input_dim()));
    for (float& v : table->values) v = static_cast<float>(rng.Normal());
    return kExitOk;
  }
  RowReadOptions read;
  const std::string input_format = absl::GetFlag(FLAGS_input_format);
  if (input_format == "idx") {
    read.format = InputFormat::kIdx;
  } else if (input_format == "text") {
    read.format = InputFormat::kDelimited;
  } else if (input_format != "auto") {
    return Usage("--input_format: expected auto, text or idx, got '" + input_format + "'");
  }
  const std::string delimiter = absl::GetFlag(FLAGS_delimiter);
  if (delimiter == "tab" || delimiter == "\\t") {
    read.delimiter = '\t';
  } else if (delimiter.size() == 1) {
    read.delimiter = delimiter[0];
  } else if (!delimiter.empty()) {
    return Usage("--delimiter: expected one character or 'tab', got '" + delimiter + "'");
  }
  const std::string header = absl::GetFlag(FLAGS_header);
  if (header == "yes") {
    read.header = HeaderMode::kPresent;
  } else if (header == "no") {
    read.header = HeaderMode::kAbsent;
  } else if (header != "auto") {
    return Usage("--header: expected auto, yes or no, got '" + header + "'");
  }
  read.ignore_columns = absl::GetFlag(FLAGS_ignore_columns);
  read.id_column = absl::GetFlag(FLAGS_id_column);
  const std::string input = absl::GetFlag(FLAGS_input);
  if (input == "-" && isatty(STDIN_FILENO)) {
    return Usage("no input rows: give --input=FILE, --random_rows=N, or pipe rows on stdin");
  }
  auto rows = ReadRows(input, read);
  if (!rows.ok()) {
    std::cerr << "invariant-client: " << rows.status().message() << std::endl;
    return kExitUsage;
  }
  *table = *std::move(rows);
  return kExitOk;
}

// Whether `rows` fit model `m`; the error names what differs.
absl::Status CheckRowsFitModel(const RowTable& rows, const v1::GetModelMetadataResponse& m) {
  const std::string model =
      absl::StrCat("model '", m.model_name(), "' version ", m.model_version());
  const std::vector<std::string> expected(m.input_columns().begin(), m.input_columns().end());
  if (!rows.column_names.empty() && !expected.empty() && rows.column_names != expected) {
    std::vector<std::string> missing, extra;
    for (const std::string& c : expected) {
      if (std::find(rows.column_names.begin(), rows.column_names.end(), c) ==
          rows.column_names.end()) {
        missing.push_back(c);
      }
    }
    for (const std::string& c : rows.column_names) {
      if (std::find(expected.begin(), expected.end(), c) == expected.end()) extra.push_back(c);
    }
    if (missing.empty() && extra.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input columns: the header has the columns of ", model, " in another order: expected ",
          absl::StrJoin(expected, ","), ", got ", absl::StrJoin(rows.column_names, ",")));
    }
    std::string message =
        absl::StrCat("input columns do not match the training columns of ", model);
    if (!missing.empty()) absl::StrAppend(&message, ": missing ", absl::StrJoin(missing, ","));
    if (!extra.empty()) {
      absl::StrAppend(&message, "; not inputs of the model: ", absl::StrJoin(extra, ","),
                      " (skip them with --ignore_columns=", absl::StrJoin(extra, ","), ")");
    }
    return absl::InvalidArgumentError(message);
  }
  if (rows.dim != m.input_dim()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input rows have ", rows.dim, " values each, but ", model,
        " takes input_dim=", m.input_dim(), " values per row",
        rows.column_names.empty()
            ? ""
            : absl::StrCat(" (columns sent: ", absl::StrJoin(rows.column_names, ","), ")")));
  }
  return absl::OkStatus();
}

// Metadata, then rows checked against it. Returns an exit code != 0 on failure.
int PrepareRows(Client& client, const std::string& model, v1::GetModelMetadataResponse* m,
                RowTable* rows) {
  const grpc::Status status = client.GetModelMetadata(Spec(model), m);
  if (!status.ok()) return ServerError("metadata", status);
  if (int rc = LoadRows(*m, rows); rc != kExitOk) return rc;
  if (absl::Status fit = CheckRowsFitModel(*rows, *m); !fit.ok()) {
    std::cerr << "invariant-client: " << fit.message() << std::endl;
    return kExitUsage;
  }
  return kExitOk;
}

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
void FillRequest(const std::string& model, const RowTable& rows, int64_t first, int64_t count,
                 Request* request) {
  *request->mutable_model() = Spec(model);
  request->mutable_inputs()->set_num_rows(count);
  const float* begin = rows.values.data() + first * rows.dim;
  request->mutable_inputs()->mutable_values()->Assign(begin, begin + count * rows.dim);
}

int Featurize(Client& client, const std::string& model) {
  v1::GetModelMetadataResponse m;
  RowTable rows;
  if (int rc = PrepareRows(client, model, &m, &rows); rc != kExitOk) return rc;
  const int64_t batch = absl::GetFlag(FLAGS_batch_size);
  Output out;
  for (int64_t first = 0; first < rows.num_rows; first += batch) {
    const int64_t count = std::min(batch, rows.num_rows - first);
    v1::FeaturizeRequest request;
    FillRequest(model, rows, first, count, &request);
    v1::FeaturizeResponse response;
    const grpc::Status status = client.Featurize(request, &response);
    if (!status.ok()) {
      out.Finish();
      return ServerError(absl::StrCat("featurize rows ", first + 1, "..", first + count), status);
    }
    const int64_t k = response.feature_dim();
    if (first == 0 && !Jsonl()) {
      std::vector<std::string> names;
      for (int64_t j = 0; j < k; ++j) names.push_back(absl::StrCat("f_", j));
      out.Line(IdCsvHeader(rows) + absl::StrJoin(names, ","));
    }
    for (int64_t i = 0; i < response.num_rows(); ++i) {
      const float* f = response.features().data() + i * k;
      if (Jsonl()) {
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

int Predict(Client& client, const std::string& model) {
  v1::GetModelMetadataResponse m;
  RowTable rows;
  if (int rc = PrepareRows(client, model, &m, &rows); rc != kExitOk) return rc;
  const int64_t batch = absl::GetFlag(FLAGS_batch_size);
  Output out;
  for (int64_t first = 0; first < rows.num_rows; first += batch) {
    const int64_t count = std::min(batch, rows.num_rows - first);
    v1::PredictRequest request;
    FillRequest(model, rows, first, count, &request);
    v1::PredictResponse response;
    const grpc::Status status = client.Predict(request, &response);
    if (!status.ok()) {
      out.Finish();
      return ServerError(absl::StrCat("predict rows ", first + 1, "..", first + count), status);
    }
    const int64_t t = response.output_dim();
    const bool classification = response.task() == v1::TASK_CLASSIFICATION;
    if (first == 0 && !Jsonl()) {
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
      if (Jsonl()) {
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

std::string StateName(v1::VersionState state) {
  switch (state) {
    case v1::VERSION_STATE_LOADING:
      return "LOADING";
    case v1::VERSION_STATE_READY:
      return "READY";
    case v1::VERSION_STATE_FAILED:
      return "FAILED";
    case v1::VERSION_STATE_UNLOADED:
      return "UNLOADED";
    default:
      return "UNSPECIFIED";
  }
}

int Reload(Client& client) {
  v1::ReloadModelsResponse response;
  const grpc::Status status = client.ReloadModels(&response);
  if (!status.ok()) return ServerError("reload", status);
  Output out;
  if (Jsonl()) {
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

int Status(Client& client, const std::string& model) {
  v1::GetModelStatusResponse response;
  const grpc::Status status = client.GetModelStatus(model, &response);
  if (!status.ok()) return ServerError("status", status);
  Output out;
  if (!Jsonl()) out.Line("model,version,state,error");
  for (const v1::ModelStatus& m : response.models()) {
    for (const v1::VersionStatus& v : m.versions()) {
      if (Jsonl()) {
        out.Line(absl::StrCat("{\"model\":", JsonString(m.name()), ",\"version\":", v.version(),
                              ",\"state\":", JsonString(StateName(v.state())),
                              ",\"error\":", JsonString(v.error()), "}"));
      } else {
        out.Line(absl::StrCat(CsvField(m.name()), ",", v.version(), ",", StateName(v.state()), ",",
                              CsvField(v.error())));
      }
    }
  }
  return out.Finish();
}

int Run(int argc, char** argv) {
  const ParsedCommandLine parsed = ParseFlags(argc, argv);
  if (parsed.outcome == ParsedCommandLine::Outcome::kHelp) {
    std::cout << kUsage << DescribeFlags(kFlagFiles);
    return kExitOk;
  }
  if (parsed.outcome == ParsedCommandLine::Outcome::kError) return Usage(parsed.error);
  const std::vector<std::string>& args = parsed.positional;
  if (args.empty()) {
    return Usage(
        "missing subcommand (health, models, metadata, featurize, predict, reload, status)");
  }
  const std::string& command = args[0];
  const bool needs_model = command == "metadata" || command == "featurize" || command == "predict";
  const bool optional_model = command == "status";
  if (!needs_model && !optional_model && command != "health" && command != "models" &&
      command != "reload") {
    return Usage("unknown subcommand '" + command +
                 "' (expected health, models, metadata, featurize, predict, reload or status)");
  }
  const size_t expected_args = needs_model ? 2 : 1;
  const size_t max_args = needs_model || optional_model ? 2 : 1;
  if (args.size() < expected_args) return Usage(command + ": missing MODEL argument");
  if (args.size() > max_args) {
    return Usage(command + ": unexpected argument '" + args[max_args] + "'");
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "csv" && format != "jsonl") {
    return Usage("--format: expected csv or jsonl, got '" + format + "'");
  }
  const int64_t batch = absl::GetFlag(FLAGS_batch_size);
  if (batch < 1 || batch > 1000000) {
    return Usage(absl::StrCat("--batch_size: expected 1..1000000 rows, got ", batch));
  }
  if (absl::GetFlag(FLAGS_version) < 0) {
    return Usage(absl::StrCat("--version: expected >= 0, got ", absl::GetFlag(FLAGS_version)));
  }
  auto options = MakeClientOptions(ConnectionFlagsFromCommandLine());
  if (!options.ok()) return Usage(std::string(options.status().message()));
  const std::string admin_token_file = absl::GetFlag(FLAGS_admin_token_file);
  if ((command == "reload" || command == "status") && !admin_token_file.empty()) {
    auto token = ReadToken(admin_token_file, "admin_token_file");
    if (!token.ok()) return Usage(std::string(token.status().message()));
    options->bearer_token = *std::move(token);  // ModelAdmin takes the admin token
  }
  const std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) return Usage("--target: expected host:port, got ''");
  auto client = Client::Create(target, *options);
  if (command == "health") return Health(*client);
  if (command == "models") return Models(*client);
  if (command == "metadata") return Metadata(*client, args[1]);
  if (command == "featurize") return Featurize(*client, args[1]);
  if (command == "reload") return Reload(*client);
  if (command == "status") return Status(*client, args.size() > 1 ? args[1] : "");
  return Predict(*client, args[1]);
}

}  // namespace
}  // namespace invariant::cli

int main(int argc, char** argv) { return invariant::cli::Run(argc, argv); }
