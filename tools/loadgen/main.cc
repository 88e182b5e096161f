// main.cc: invariant-loadgen, a load generator for invariant-server (in the
// spirit of Triton's perf_analyzer and ghz), on the C++ client library.
//
//   invariant-loadgen --target=127.0.0.1:8500 --model=default --concurrency=4
//       --duration=10 [--requests=N] [--batch=1] [--rate=0] [--mode=unary|stream]
//       [--method=predict|featurize] [--json_out=FILE]
//
// Rows: --input=FILE (as invariant-client reads them) or --rows seeded
// standard-normal rows of the model's input_dim (from GetModelMetadata).
// Prints a table on stdout and, with --json_out, writes the JSON report
// (loadgen.h). Exit codes: 0 the run finished with at least one ok request
// (or no errors); 1 the JSON file could not be written; 2 usage; 3 the
// metadata call failed or every request failed.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/cli/connection.h"
#include "client/cli/flag_parser.h"
#include "client/cli/format.h"
#include "client/cli/rows.h"
#include "client/client.h"
#include "core/base/random.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(std::string, target, "127.0.0.1:8500", "Server address host:port.");
ABSL_FLAG(std::string, model, "", "Model name (required).");
ABSL_FLAG(int64_t, version, 0, "Model version; 0 = newest ready.");
ABSL_FLAG(std::string, version_label, "", "Model version label.");
ABSL_FLAG(int, concurrency, 1, "Workers (closed loop) / most requests in flight (open loop).");
ABSL_FLAG(double, duration, 0,
          "Seconds to run (max 3600); 0 = until --requests (10 s when neither is set).");
ABSL_FLAG(int64_t, requests, 0, "Requests to send (max 1e8); 0 = until --duration.");
ABSL_FLAG(int64_t, batch, 1, "Rows per request.");
ABSL_FLAG(double, rate, 0, "Open loop: requests per second; 0 = closed loop.");
ABSL_FLAG(std::string, mode, "unary", "unary | stream (one bidirectional stream per worker).");
ABSL_FLAG(std::string, method, "predict", "predict | featurize.");
ABSL_FLAG(std::string, json_out, "", "Write the JSON report to this file.");
ABSL_FLAG(std::string, input, "", "Rows file (CSV/TSV/IDX); default: --rows random rows.");
ABSL_FLAG(int64_t, rows, 256, "Random candidate rows when --input is not given.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the random rows.");

namespace invariant::loadgen {
namespace {

constexpr char kUsage[] = R"(usage: invariant-loadgen --model=NAME [flags]

  --target=HOST:PORT (127.0.0.1:8500)  --model=NAME  --version=N  --version_label=L
  --concurrency=N (1)  --duration=SECONDS  --requests=N  (10 s when neither; capped)
  --batch=ROWS (1)  --rate=RPS (0 = closed loop)  --mode=unary|stream
  --method=predict|featurize  --json_out=FILE  --input=FILE | --rows=N --seed=S
  --timeout=SECONDS (10)  --tls --tls_ca --tls_cert --tls_key --tls_server_name --token_file
exit codes: 0 ok, 1 cannot write --json_out, 2 usage, 3 metadata failed or every request failed

flags:
)";

int Usage(const std::string& message) {
  std::cerr << "invariant-loadgen: " << message << "\n"
            << "run 'invariant-loadgen --help' for usage" << std::endl;
  return cli::kExitUsage;
}

int Run(int argc, char** argv) {
  const cli::ParsedCommandLine parsed = cli::ParseFlags(argc, argv);
  if (parsed.outcome == cli::ParsedCommandLine::Outcome::kHelp) {
    std::cout << kUsage
              << cli::DescribeFlags({"tools/loadgen/main.cc", "client/cli/connection_flags.cc"});
    return cli::kExitOk;
  }
  if (parsed.outcome == cli::ParsedCommandLine::Outcome::kError) return Usage(parsed.error);
  if (!parsed.positional.empty()) {
    return Usage("unexpected argument '" + parsed.positional[0] + "'");
  }
  LoadOptions load;
  load.model = absl::GetFlag(FLAGS_model);
  load.version = absl::GetFlag(FLAGS_version);
  load.version_label = absl::GetFlag(FLAGS_version_label);
  load.concurrency = absl::GetFlag(FLAGS_concurrency);
  const double duration = absl::GetFlag(FLAGS_duration);
  if (!std::isfinite(duration)) return Usage("--duration: expected seconds");
  load.duration = absl::Seconds(duration);
  load.max_requests = absl::GetFlag(FLAGS_requests);
  if (duration == 0 && load.max_requests == 0) load.duration = absl::Seconds(10);
  load.batch = absl::GetFlag(FLAGS_batch);
  load.rate = absl::GetFlag(FLAGS_rate);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  const std::string method = absl::GetFlag(FLAGS_method);
  if (mode == "unary") {
    load.mode = Mode::kUnary;
  } else if (mode == "stream") {
    load.mode = Mode::kStream;
  } else {
    return Usage("--mode: expected unary or stream, got '" + mode + "'");
  }
  if (method == "predict") {
    load.method = Method::kPredict;
  } else if (method == "featurize") {
    load.method = Method::kFeaturize;
  } else {
    return Usage("--method: expected predict or featurize, got '" + method + "'");
  }
  const int64_t random_rows = absl::GetFlag(FLAGS_rows);
  if (random_rows < 1 || random_rows > 1000000) {
    return Usage(absl::StrCat("--rows: expected 1..1000000, got ", random_rows));
  }
  // Validate the bounds before touching the network (rows are checked later).
  {
    LoadOptions probe = load;
    probe.input_dim = 1;
    probe.rows = {0.0f};
    if (absl::Status valid = ValidateLoadOptions(probe); !valid.ok()) {
      return Usage(std::string(valid.message()));
    }
  }

  const cli::ConnectionFlags connection = cli::ConnectionFlagsFromCommandLine();
  auto options = cli::MakeClientOptions(connection);
  if (!options.ok()) return Usage(std::string(options.status().message()));
  const std::string target = absl::GetFlag(FLAGS_target);
  auto client = Client::Create(target, *options);

  const std::string input = absl::GetFlag(FLAGS_input);
  if (!input.empty()) {
    auto rows = cli::ReadRows(input);
    if (!rows.ok()) {
      std::cerr << "invariant-loadgen: " << rows.status().message() << std::endl;
      return cli::kExitUsage;
    }
    load.rows = std::move(rows->values);
    load.input_dim = rows->dim;
  } else {
    v1::GetModelMetadataResponse metadata;
    const grpc::Status status = client->GetModelMetadata(load.model, load.version, &metadata);
    if (!status.ok()) {
      std::cerr << "invariant-loadgen: metadata: " << cli::GrpcCodeName(status.error_code()) << ": "
                << status.error_message() << std::endl;
      return cli::kExitServerError;
    }
    load.input_dim = metadata.input_dim();
    Rng rng(absl::GetFlag(FLAGS_seed));  // the same rows on every platform
    load.rows.resize(static_cast<size_t>(random_rows * load.input_dim));
    for (float& v : load.rows) v = static_cast<float>(rng.Normal());
  }

  std::unique_ptr<Client> stream_client;
  Client* runner = client.get();
  if (load.mode == Mode::kStream) {
    // The deadline of a stream covers the whole stream: the run plus a margin.
    ClientOptions stream_options = *options;
    const absl::Duration bound =
        (load.duration > absl::ZeroDuration() ? load.duration : kMaxDuration) +
        absl::Seconds(connection.timeout_seconds > 0 ? connection.timeout_seconds : 10);
    stream_options.deadline = std::chrono::milliseconds(absl::ToInt64Milliseconds(bound));
    stream_client = Client::Create(target, stream_options);
    runner = stream_client.get();
  }
  auto report = RunLoad(*runner, load);
  if (!report.ok()) return Usage(std::string(report.status().message()));
  std::cout << ReportTable(*report, load, target) << std::flush;
  const std::string json_out = absl::GetFlag(FLAGS_json_out);
  if (!json_out.empty()) {
    std::ofstream out(json_out);
    out << ReportJson(*report, load, target) << "\n";
    out.close();
    if (!out) {
      std::cerr << "invariant-loadgen: --json_out: cannot write '" << json_out << "'" << std::endl;
      return cli::kExitFailure;
    }
  }
  if (report->requests_ok == 0 && report->requests_failed > 0) {
    std::cerr << "invariant-loadgen: every request failed" << std::endl;
    return cli::kExitServerError;
  }
  return cli::kExitOk;
}

}  // namespace
}  // namespace invariant::loadgen

int main(int argc, char** argv) { return invariant::loadgen::Run(argc, argv); }
