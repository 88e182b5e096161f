// main.cc: invariant-loadgen, a load generator for invariant-server (in the
// spirit of Triton's perf_analyzer and ghz), on the C++ client library.
//
//   invariant-loadgen --target=127.0.0.1:8500 --model=default --concurrency=4
//       --duration=10 [--requests=N] [--batch=1] [--rate=0] [--mode=unary|stream]
//       [--method=predict|featurize] [--json_out=FILE]
//   invariant-loadgen --protocol=rest --target=127.0.0.1:8501 --model=default
//       [--rest_encoding=json|binary] ...
//
// --protocol=grpc (default) calls invariant.v1.FeatureService at --target
// (default 127.0.0.1:8500); --protocol=rest POSTs the Open Inference
// Protocol's /v2/models/{name}[/versions/{v}]/infer to --target, the server's
// --http_port (default 127.0.0.1:8501), one keep-alive connection per worker,
// asking for the output "scores" (predict) or "features" (featurize), with
// JSON tensors or Triton's binary tensor extension (--rest_encoding). REST
// sends --token_file's token as "Authorization: Bearer" and uses --timeout per
// request; it has no streams and no TLS (usage errors).
//
// Rows: --input=FILE (as invariant-client reads them) or --rows seeded
// standard-normal rows of the model's input_dim (from the model's metadata:
// GetModelMetadata over gRPC, GET /v2/models/{name} over REST).
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

ABSL_FLAG(std::string, target, "",
          "Server address host:port: the gRPC port (default 127.0.0.1:8500) or, with "
          "--protocol=rest, the --http_port (default 127.0.0.1:8501).");
ABSL_FLAG(std::string, protocol, "grpc",
          "grpc | rest (the Open Inference Protocol's REST infer route).");
ABSL_FLAG(std::string, rest_encoding, "json",
          "With --protocol=rest: json (tensors as JSON arrays) | binary (Triton's binary "
          "tensor data extension).");
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

  --protocol=grpc|rest  --rest_encoding=json|binary (rest only)
  --target=HOST:PORT (grpc 127.0.0.1:8500, rest 127.0.0.1:8501)  --model=NAME
  --version=N  --version_label=L
  --concurrency=N (1)  --duration=SECONDS  --requests=N  (10 s when neither; capped)
  --batch=ROWS (1)  --rate=RPS (0 = closed loop)  --mode=unary|stream
  --method=predict|featurize  --json_out=FILE  --input=FILE | --rows=N --seed=S
  --timeout=SECONDS (10)  --token_file  --tls --tls_ca --tls_cert --tls_key --tls_server_name
  (TLS: grpc only)
exit codes: 0 ok, 1 cannot write --json_out, 2 usage, 3 metadata failed or every request failed

flags:
)";

int Usage(const std::string& message) {
  std::cerr << "invariant-loadgen: " << message << "\n"
            << "run 'invariant-loadgen --help' for usage" << std::endl;
  return cli::kExitUsage;
}

void RandomRows(int64_t n, uint64_t seed, LoadOptions& load) {
  Rng rng(seed);  // the same rows on every platform
  load.rows.resize(static_cast<size_t>(n * load.input_dim));
  for (float& v : load.rows) v = static_cast<float>(rng.Normal());
}

int Finish(const absl::StatusOr<LoadReport>& report, const LoadOptions& load,
           const std::string& target);

// --protocol=rest: the rows (metadata over REST when there is no --input),
// then the run.
int RunRest(LoadOptions& load, const cli::ConnectionFlags& connection, const std::string& target,
            int64_t random_rows) {
  if (connection.tls || !connection.tls_ca.empty() || !connection.tls_cert.empty() ||
      !connection.tls_key.empty() || !connection.tls_server_name.empty()) {
    return Usage("--tls*: the REST port is plain HTTP; TLS applies to --protocol=grpc only");
  }
  if (!(connection.timeout_seconds >= 0) || !std::isfinite(connection.timeout_seconds)) {
    return Usage(
        absl::StrCat("--timeout: expected seconds >= 0, got ", connection.timeout_seconds));
  }
  RestTarget rest;
  rest.target = target;
  rest.timeout = absl::Seconds(connection.timeout_seconds);
  if (!connection.token_file.empty()) {
    auto token = cli::ReadToken(connection.token_file, "token_file");
    if (!token.ok()) return Usage(std::string(token.status().message()));
    rest.bearer_token = *std::move(token);
  }
  if (load.rows.empty()) {
    auto dim = RestInputDim(rest, load);
    if (!dim.ok()) {
      std::cerr << "invariant-loadgen: metadata: " << dim.status().message() << std::endl;
      return cli::kExitServerError;
    }
    load.input_dim = *dim;
    RandomRows(random_rows, absl::GetFlag(FLAGS_seed), load);
  }
  return Finish(RunRestLoad(rest, load), load, target);
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
  const std::string protocol = absl::GetFlag(FLAGS_protocol);
  if (protocol == "grpc") {
    load.protocol = Protocol::kGrpc;
  } else if (protocol == "rest") {
    load.protocol = Protocol::kRest;
  } else {
    return Usage("--protocol: expected grpc or rest, got '" + protocol + "'");
  }
  const std::string rest_encoding = absl::GetFlag(FLAGS_rest_encoding);
  if (rest_encoding == "json") {
    load.rest_encoding = RestEncoding::kJson;
  } else if (rest_encoding == "binary") {
    load.rest_encoding = RestEncoding::kBinary;
  } else {
    return Usage("--rest_encoding: expected json or binary, got '" + rest_encoding + "'");
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
  std::string target = absl::GetFlag(FLAGS_target);
  if (target.empty()) {
    target = load.protocol == Protocol::kGrpc ? "127.0.0.1:8500" : "127.0.0.1:8501";
  }
  const std::string input = absl::GetFlag(FLAGS_input);
  if (!input.empty()) {
    auto rows = cli::ReadRows(input);
    if (!rows.ok()) {
      std::cerr << "invariant-loadgen: " << rows.status().message() << std::endl;
      return cli::kExitUsage;
    }
    load.rows = std::move(rows->values);
    load.input_dim = rows->dim;
  }
  if (load.protocol == Protocol::kRest) return RunRest(load, connection, target, random_rows);

  auto options = cli::MakeClientOptions(connection);
  if (!options.ok()) return Usage(std::string(options.status().message()));
  auto client = Client::Create(target, *options);
  if (input.empty()) {
    v1::GetModelMetadataResponse metadata;
    const grpc::Status status = client->GetModelMetadata(load.model, load.version, &metadata);
    if (!status.ok()) {
      std::cerr << "invariant-loadgen: metadata: " << cli::StatusCodeName(status.error_code())
                << ": " << status.error_message() << std::endl;
      return cli::kExitServerError;
    }
    load.input_dim = metadata.input_dim();
    RandomRows(random_rows, absl::GetFlag(FLAGS_seed), load);
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
  return Finish(RunLoad(*runner, load), load, target);
}

// Writes the reports of a finished run; the exit code.
int Finish(const absl::StatusOr<LoadReport>& report, const LoadOptions& load,
           const std::string& target) {
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
