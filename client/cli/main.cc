// main.cc: invariant-client, the command-line client of invariant-server.
//
//   invariant-client health   [--service=NAME]
//   invariant-client models
//   invariant-client metadata  MODEL
//   invariant-client featurize MODEL [--input=FILE|-] [--random_rows=N]
//   invariant-client predict   MODEL [--input=FILE|-] [--random_rows=N]
//
// Output goes to stdout as CSV (header line first) or, with --format=jsonl,
// one JSON object per line. Exit codes: 0 ok; 2 usage (unknown subcommand,
// bad flags, unreadable or malformed input rows, reported as FILE:LINE:
// reason); 3 the server call failed (gRPC code name and message on stderr) or
// `health` is not SERVING; 1 the output could not be written.
#include <grpcpp/client_context.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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
          "Text columns to skip, by header name or 1-based number (e.g. a label column).");
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
  metadata MODEL    the model's shapes, encoder, head and training metrics
  featurize MODEL   features of the input rows
  predict MODEL     predictions (scores, predicted class) of the input rows

input rows: --input=FILE (.csv, .tsv, IDX; gzip ok) or stdin; or --random_rows=N
output: CSV with a header (default) or --format=jsonl
exit codes: 0 ok, 1 output error, 2 usage or bad input (FILE:LINE: reason),
            3 server error (gRPC code and message on stderr)

flags:
  --target=HOST:PORT (localhost:8500)  --timeout=SECONDS (10; 0 = none)
  --version=N  --version_label=LABEL   --format=csv|jsonl
  --input=FILE  --input_format=auto|text|idx  --delimiter=C|tab  --header=auto|yes|no
  --ignore_columns=NAME,...  --batch_size=ROWS (1024)  --random_rows=N  --seed=S
  --service=NAME (health)  --tls  --tls_ca=PEM  --tls_cert=PEM --tls_key=PEM
  --tls_server_name=NAME  --token_file=FILE
)";

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

// GetModelMetadata honouring --version_label, which Client::GetModelMetadata
// does not take: the call goes through a stub on the client's channel with
// the same deadline and token.
grpc::Status GetMetadata(Client& client, const ClientOptions& options, const std::string& model,
                         v1::GetModelMetadataResponse* response) {
  if (absl::GetFlag(FLAGS_version_label).empty()) {
    return client.GetModelMetadata(model, absl::GetFlag(FLAGS_version), response);
  }
  auto stub = v1::FeatureService::NewStub(client.channel());
  grpc::ClientContext context;
  if (options.deadline.count() > 0) {
    context.set_deadline(std::chrono::system_clock::now() + options.deadline);
  }
  if (!options.bearer_token.empty()) {
    context.AddMetadata("authorization", "Bearer " + options.bearer_token);
  }
  v1::GetModelMetadataRequest request;
  *request.mutable_model() = Spec(model);
  return stub->GetModelMetadata(&context, request, response);
}

int Metadata(Client& client, const ClientOptions& options, const std::string& model) {
  v1::GetModelMetadataResponse m;
  const grpc::Status status = GetMetadata(client, options, model, &m);
  if (!status.ok()) return ServerError("metadata", status);
  std::vector<std::string> shape;
  for (int64_t d : m.input_shape()) shape.push_back(absl::StrCat(d));
  const v1::LinearHead& head = m.head();
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
    const v1::InvarianceCertificate& c = m.certificate();
    out.Line(absl::StrCat(
        "{\"model_name\":", JsonString(m.model_name()), ",\"model_version\":", m.model_version(),
        ",\"input_shape\":[", absl::StrJoin(shape, ","), "],\"input_dim\":", m.input_dim(),
        ",\"feature_dim\":", m.feature_dim(), ",\"output_dim\":", m.output_dim(),
        ",\"encoder_kind\":", JsonString(m.encoder_kind()),
        ",\"task\":", JsonString(has_head ? TaskName(head.task()) : "none"), ",\"class_names\":",
        strings(head.class_names()), ",\"target_names\":", strings(head.target_names()),
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
  row("model_bytes", absl::StrCat(m.model_bytes()));
  for (const auto& [k, v] : metrics) row("metric." + k, FormatDouble(v));
  row("certificate.max_discrepancy", FormatDouble(m.certificate().max_discrepancy()));
  row("certificate.mean_discrepancy", FormatDouble(m.certificate().mean_discrepancy()));
  row("certificate.num_points", absl::StrCat(m.certificate().num_points()));
  row("certificate.exhaustive", m.certificate().exhaustive() ? "true" : "false");
  return out.Finish();
}

// The input rows: --random_rows, else --input. Returns an exit code != 0 on failure.
int LoadRows(Client& client, const ClientOptions& options, const std::string& model,
             RowTable* table) {
  const int64_t random_rows = absl::GetFlag(FLAGS_random_rows);
  if (random_rows < 0 || random_rows > 1000000) {
    return Usage(absl::StrCat("--random_rows: expected 0..1000000, got ", random_rows));
  }
  if (random_rows > 0) {
    v1::GetModelMetadataResponse m;
    const grpc::Status status = GetMetadata(client, options, model, &m);
    if (!status.ok()) return ServerError("metadata (for --random_rows)", status);
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

template <typename Request>
void FillRequest(const std::string& model, const RowTable& rows, int64_t first, int64_t count,
                 Request* request) {
  *request->mutable_model() = Spec(model);
  request->mutable_inputs()->set_num_rows(count);
  const float* begin = rows.values.data() + first * rows.dim;
  request->mutable_inputs()->mutable_values()->Assign(begin, begin + count * rows.dim);
}

int Featurize(Client& client, const ClientOptions& options, const std::string& model) {
  RowTable rows;
  if (int rc = LoadRows(client, options, model, &rows); rc != kExitOk) return rc;
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
      out.Line(absl::StrJoin(names, ","));
    }
    for (int64_t i = 0; i < response.num_rows(); ++i) {
      const float* f = response.features().data() + i * k;
      if (Jsonl()) {
        out.Line(absl::StrCat("{\"row\":", first + i,
                              ",\"model\":", JsonString(response.model_name()),
                              ",\"version\":", response.model_version(),
                              ",\"features\":", JsonFloatArray(f, static_cast<size_t>(k)), "}"));
      } else {
        std::vector<std::string> fields;
        for (int64_t j = 0; j < k; ++j) fields.push_back(FormatFloat(f[j]));
        out.Line(absl::StrJoin(fields, ","));
      }
    }
  }
  return out.Finish();
}

int Predict(Client& client, const ClientOptions& options, const std::string& model) {
  RowTable rows;
  if (int rc = LoadRows(client, options, model, &rows); rc != kExitOk) return rc;
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
      for (int64_t j = 0; j < t; ++j) names.push_back(absl::StrCat("score_", j));
      out.Line(absl::StrJoin(names, ","));
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
        std::string line =
            absl::StrCat("{\"row\":", first + i, ",\"model\":", JsonString(response.model_name()),
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
        out.Line(absl::StrJoin(fields, ","));
      }
    }
  }
  return out.Finish();
}

int Run(int argc, char** argv) {
  const ParsedCommandLine parsed = ParseFlags(argc, argv);
  if (parsed.outcome == ParsedCommandLine::Outcome::kHelp) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (parsed.outcome == ParsedCommandLine::Outcome::kError) return Usage(parsed.error);
  const std::vector<std::string>& args = parsed.positional;
  if (args.empty())
    return Usage("missing subcommand (health, models, metadata, featurize, predict)");
  const std::string& command = args[0];
  const bool needs_model = command == "metadata" || command == "featurize" || command == "predict";
  if (!needs_model && command != "health" && command != "models") {
    return Usage("unknown subcommand '" + command +
                 "' (expected health, models, metadata, featurize or predict)");
  }
  const size_t expected_args = needs_model ? 2 : 1;
  if (args.size() < expected_args) return Usage(command + ": missing MODEL argument");
  if (args.size() > expected_args) {
    return Usage(command + ": unexpected argument '" + args[expected_args] + "'");
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
  const std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) return Usage("--target: expected host:port, got ''");
  auto client = Client::Create(target, *options);
  if (command == "health") return Health(*client);
  if (command == "models") return Models(*client);
  if (command == "metadata") return Metadata(*client, *options, args[1]);
  if (command == "featurize") return Featurize(*client, *options, args[1]);
  return Predict(*client, *options, args[1]);
}

}  // namespace
}  // namespace invariant::cli

int main(int argc, char** argv) { return invariant::cli::Run(argc, argv); }
