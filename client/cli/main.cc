// main.cc: invariant-client, the command-line client of invariant-server.
//
//   invariant-client health   [--service=NAME]
//   invariant-client models
//   invariant-client metadata  MODEL
//   invariant-client featurize MODEL [--input=FILE|-] [--random_rows=N]
//   invariant-client predict   MODEL [--input=FILE|-] [--random_rows=N]
//   (audio models: --input=CLIP.wav|FOLDER|A.wav,B.wav|-)
//   invariant-client reload                      (ModelAdmin; --admin_token_file)
//   invariant-client status    [MODEL]           (ModelAdmin; --admin_token_file)
//   invariant-client repository index|load MODEL|unload MODEL   (--admin_token_file)
//   invariant-client stats     [MODEL]           (ModelStatistics; --version, --version_label)
//
// featurize and predict first read the model's metadata and check the rows
// against it before any row is sent: the row width against input_dim, and,
// when the input has a header and the model stores its training columns,
// the column names and their order (errors name the columns; exit 2).
// A model of sound (metadata with `audio`) takes WAV files instead: each
// file's bytes are one clip, its name the output's "id" column; a file that
// is not a WAV file, or a clip the server refuses (INVALID_ARGUMENT), exits 2
// naming the file.
//
// Output goes to stdout as CSV (header line first) or, with --format=jsonl,
// one JSON object per line. Exit codes: 0 ok; 2 usage (unknown subcommand,
// bad flags, unreadable or malformed input rows, reported as FILE:LINE:
// reason, rows that do not fit the model); 3 the server call failed (gRPC
// code name and message on stderr) or `health` is not SERVING; 1 the output
// could not be written.
//
// This file holds the flags and checks the command line; the subcommands are
// in commands/ (the table in commands/commands.h).
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/output.h"
#include "client/cli/connection.h"
#include "client/cli/flag_parser.h"
#include "client/cli/format.h"
#include "client/client.h"

ABSL_FLAG(std::string, target, "localhost:8500",
          "Server address host:port (or any gRPC target URI).");
ABSL_FLAG(int64_t, version, 0, "Model version; 0 = the newest ready version.");
ABSL_FLAG(std::string, version_label, "",
          "Model version label (e.g. stable) instead of --version.");
ABSL_FLAG(std::string, format, "csv", "Output format: csv | jsonl.");
ABSL_FLAG(
    std::string, input, "-",
    "Rows file (CSV, TSV or IDX, optionally gzip); - = stdin. Audio models: a WAV file, a "
    "folder of .wav files (not recursive), comma-separated files, or - for one WAV on stdin.");
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
          "reload/status/repository: file holding the server's admin token (invariant-server "
          "--admin_token_file); default: --token_file.");
ABSL_FLAG(std::string, input_format, "auto", "auto | text | idx.");
ABSL_FLAG(int64_t, batch_size, 1024,
          "Rows (or clips) per request; clips also at most 16 MiB of WAV bytes per request.");
ABSL_FLAG(int64_t, random_rows, 0,
          "Instead of --input: N seeded standard-normal rows of the model's input_dim (audio "
          "models: N seeded noise clips of 1 s at the model's rate).");
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
  metadata MODEL    the model's shapes, input columns and scaling, audio front end, encoder,
                    head, metrics
  featurize MODEL   features of the input rows
  predict MODEL     predictions (predicted class, one score column per class/target)
  reload            rescan the models directory now (ModelAdmin)
  status [MODEL]    every version's state: LOADING, READY, FAILED (why), UNLOADED
  repository index | load MODEL | unload MODEL
                    the model repository: every version's state and reason; load or
                    unload a model (server --model_control=explicit; admin token)
  stats [MODEL]     per-version statistics (counts and ns of requests, queue, compute) of
                    every model, MODEL, or MODEL at --version / --version_label

input rows: --input=FILE (.csv, .tsv, IDX; gzip ok) or stdin; or --random_rows=N
  text: delimiter by extension, else from the first line (tab or comma); a header
  is recognised automatically; an unnamed first column (pandas' index) is skipped;
  columns for --ignore_columns / --id_column by header name or 1-based number.
  The rows are checked against the model's metadata before sending: width, and
  with a header, the training columns and their order.
  Scaling: values are sent as read; IDX unsigned bytes become v/255 (the model's
  metadata shows input_scaling: unit_byte for models trained on IDX images).
input clips (models of sound, metadata shows audio.*): --input=CLIP.wav, a folder
  (its *.wav files, sorted by name, not recursive), A.wav,B.wav, or - (one WAV on
  stdin); each file is one clip, sent as its WAV bytes (the server decodes and
  resamples it); the output's first column "id" is the file name.
output: CSV with a header (default) or --format=jsonl; --id_column comes first
exit codes: 0 ok, 1 output error, 2 usage or bad input (FILE:LINE: reason, rows
            that do not fit the model, a file that is not WAV or a clip the server
            refused), 3 server error (gRPC code and message)

flags:
)";

// The files whose flags --help lists.
const std::vector<std::string> kFlagFiles = {"client/cli/main.cc",
                                             "client/cli/connection_flags.cc"};

// "health, models, ..., reload<last_separator>status": the subcommands in
// usage messages.
std::string CommandNames(const std::string& last_separator) {
  std::string names;
  for (size_t i = 0; i < kCommands.size(); ++i) {
    if (i > 0) names += i + 1 < kCommands.size() ? ", " : last_separator;
    names += kCommands[i].name;
  }
  return names;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& command : kCommands) {
    if (name == command.name) return &command;
  }
  return nullptr;
}

RowSourceFlags RowSourceFlagsFromCommandLine() {
  RowSourceFlags rows;
  rows.input = absl::GetFlag(FLAGS_input);
  rows.input_format = absl::GetFlag(FLAGS_input_format);
  rows.delimiter = absl::GetFlag(FLAGS_delimiter);
  rows.header = absl::GetFlag(FLAGS_header);
  rows.ignore_columns = absl::GetFlag(FLAGS_ignore_columns);
  rows.id_column = absl::GetFlag(FLAGS_id_column);
  rows.random_rows = absl::GetFlag(FLAGS_random_rows);
  rows.seed = absl::GetFlag(FLAGS_seed);
  return rows;
}

int Run(int argc, char** argv) {
  const ParsedCommandLine parsed = ParseFlags(argc, argv);
  if (parsed.outcome == ParsedCommandLine::Outcome::kHelp) {
    std::cout << kUsage << DescribeFlags(kFlagFiles);
    return kExitOk;
  }
  if (parsed.outcome == ParsedCommandLine::Outcome::kError) return ReportUsageError(parsed.error);
  const std::vector<std::string>& args = parsed.positional;
  if (args.empty()) return ReportUsageError("missing subcommand (" + CommandNames(", ") + ")");
  const Command* command = FindCommand(args[0]);
  if (command == nullptr) {
    return ReportUsageError("unknown subcommand '" + args[0] + "' (expected " +
                            CommandNames(" or ") + ")");
  }
  const bool action = command->model_argument == ModelArgument::kAction;
  const size_t min_args = command->model_argument == ModelArgument::kRequired || action ? 2 : 1;
  const size_t max_args = command->model_argument == ModelArgument::kNone ? 1 : action ? 3 : 2;
  if (args.size() < min_args) {
    return ReportUsageError(args[0] +
                            (action ? ": missing ACTION argument" : ": missing MODEL argument"));
  }
  if (args.size() > max_args) {
    return ReportUsageError(args[0] + ": unexpected argument '" + args[max_args] + "'");
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "csv" && format != "jsonl") {
    return ReportUsageError("--format: expected csv or jsonl, got '" + format + "'");
  }
  const int64_t batch = absl::GetFlag(FLAGS_batch_size);
  if (batch < 1 || batch > 1000000) {
    return ReportUsageError(absl::StrCat("--batch_size: expected 1..1000000 rows, got ", batch));
  }
  if (absl::GetFlag(FLAGS_version) < 0) {
    return ReportUsageError(
        absl::StrCat("--version: expected >= 0, got ", absl::GetFlag(FLAGS_version)));
  }
  auto options = MakeClientOptions(ConnectionFlagsFromCommandLine());
  if (!options.ok()) return ReportUsageError(std::string(options.status().message()));
  const std::string admin_token_file = absl::GetFlag(FLAGS_admin_token_file);
  if (command->model_admin && !admin_token_file.empty()) {
    auto token = ReadToken(admin_token_file, "admin_token_file");
    if (!token.ok()) return ReportUsageError(std::string(token.status().message()));
    options->bearer_token = *std::move(token);  // ModelAdmin takes the admin token
  }
  const std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) return ReportUsageError("--target: expected host:port, got ''");
  CommandContext context;
  const size_t model_at = action ? 2 : 1;
  context.model.set_name(args.size() > model_at ? args[model_at] : "");
  if (action) context.action = args[1];
  context.model.set_version(absl::GetFlag(FLAGS_version));
  context.model.set_version_label(absl::GetFlag(FLAGS_version_label));
  context.jsonl = format == "jsonl";
  context.batch_size = batch;
  context.service = absl::GetFlag(FLAGS_service);
  context.rows = RowSourceFlagsFromCommandLine();
  auto client = Client::Create(target, *options);
  return command->run(*client, context);
}

}  // namespace
}  // namespace invariant::cli

int main(int argc, char** argv) { return invariant::cli::Run(argc, argv); }
