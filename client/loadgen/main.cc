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
// Models of sound (docs/open-inference.md#audio-models) take clips instead:
// --clip=FILE.wav (or a folder, or a comma-separated list) sends those WAV
// files; without --clip or --input, a model whose metadata says it is a
// model of sound gets --rows seeded speech-like clips (at most 16 · --batch)
// of --clip_seconds at --clip_rate (default: the model's rate). Clips go as
// --clip_encoding=wav (the WAV bytes), float32 or int16 samples: in
// InputBatch.clips over gRPC, as an OIP BYTES / FP32 / INT16 input over
// REST (WAV needs --rest_encoding=binary).
// Prints a table on stdout and, with --json_out, writes the JSON report
// (loadgen.h). Exit codes: 0 the run finished with at least one ok request
// (or no errors); 1 the JSON file could not be written; 2 usage; 3 the
// metadata call failed or every request failed.
#include <algorithm>
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
#include "client/loadgen/loadgen.h"
#include "core/base/random.h"

ABSL_FLAG(std::string, target, "",
          "Server address host:port: the gRPC port (default 127.0.0.1:8500) or, with "
          "--protocol=rest, the --http_port (default 127.0.0.1:8501).");
ABSL_FLAG(std::string, protocol, "grpc",
          "grpc (invariant.v1) | rest (the Open Inference Protocol's REST infer route) | oip_grpc "
          "(the Open Inference Protocol's gRPC ModelInfer, rows sent as raw_input_contents).");
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
ABSL_FLAG(std::string, method, "predict",
          "predict | featurize | featurize_predict (features and scores in one call: "
          "--protocol=rest or oip_grpc).");
ABSL_FLAG(std::string, json_out, "", "Write the JSON report to this file.");
ABSL_FLAG(std::string, input, "", "Rows file (CSV/TSV/IDX); default: --rows random rows.");
ABSL_FLAG(int64_t, rows, 256,
          "Random candidate rows (or seeded clips, at most 16 · --batch) when --input and "
          "--clip are not given.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the random rows (or clips).");
ABSL_FLAG(std::string, clip, "",
          "Models of sound: WAV files to send (a file, a folder, or a comma-separated list); "
          "default: --rows seeded clips when the model is a model of sound.");
ABSL_FLAG(double, clip_seconds, 1.0, "Length of the seeded clips (seconds, max 60).");
ABSL_FLAG(int, clip_rate, 0, "Sample rate of the seeded clips (Hz); 0 = the model's.");
ABSL_FLAG(std::string, clip_encoding, "wav",
          "wav (the WAV bytes) | float32 | int16 (samples): how clips are sent.");

namespace invariant::loadgen {
namespace {

constexpr char kUsage[] = R"(usage: invariant-loadgen --model=NAME [flags]

  --protocol=grpc|rest  --rest_encoding=json|binary (rest only)
  --target=HOST:PORT (grpc 127.0.0.1:8500, rest 127.0.0.1:8501)  --model=NAME
  --version=N  --version_label=L
  --concurrency=N (1)  --duration=SECONDS  --requests=N  (10 s when neither; capped)
  --batch=ROWS (1)  --rate=RPS (0 = closed loop)  --mode=unary|stream
  --method=predict|featurize  --json_out=FILE  --input=FILE | --rows=N --seed=S
  models of sound: --clip=WAV[,WAV|DIR] | --clip_seconds=S (1) --clip_rate=HZ (model's)
  --clip_encoding=wav|float32|int16 (wav; over rest, wav needs --rest_encoding=binary)
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

// Seeded clips for a model of sound whose rate is `model_rate`.
void RandomClips(int64_t n, int model_rate, LoadOptions& load) {
  const int rate = absl::GetFlag(FLAGS_clip_rate) > 0 ? absl::GetFlag(FLAGS_clip_rate) : model_rate;
  const int64_t count = std::min(n, 16 * load.batch);
  load.clips =
      SyntheticClips(count, absl::GetFlag(FLAGS_clip_seconds), rate, absl::GetFlag(FLAGS_seed));
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
  if (load.rows.empty() && load.clips.empty()) {
    absl::StatusOr<std::string> metadata = RestModelMetadata(rest, load);
    absl::StatusOr<int> rate = 0;
    absl::StatusOr<int64_t> dim = 0;
    if (metadata.ok()) rate = SampleRateFromModelMetadata(*metadata);
    if (metadata.ok() && rate.ok() && *rate == 0) dim = InputDimFromModelMetadata(*metadata);
    const absl::Status failed = !metadata.ok() ? metadata.status()
                                : !rate.ok()   ? rate.status()
                                               : dim.status();
    if (!failed.ok()) {
      std::cerr << "invariant-loadgen: metadata: " << failed.message() << std::endl;
      return cli::kExitServerError;
    }
    if (*rate > 0) {
      RandomClips(random_rows, *rate, load);
    } else {
      load.input_dim = *dim;
      RandomRows(random_rows, absl::GetFlag(FLAGS_seed), load);
    }
    if (absl::Status valid = ValidateLoadOptions(load); !valid.ok()) {
      return Usage(std::string(valid.message()));
    }
  }
  return Finish(RunRestLoad(rest, load), load, target);
}

int Run(int argc, char** argv) {
  const cli::ParsedCommandLine parsed = cli::ParseFlags(argc, argv);
  if (parsed.outcome == cli::ParsedCommandLine::Outcome::kHelp) {
    std::cout << kUsage
              << cli::DescribeFlags({"client/loadgen/main.cc", "client/cli/connection_flags.cc"});
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
  } else if (method == "featurize_predict") {
    load.method = Method::kFeaturizePredict;
  } else {
    return Usage("--method: expected predict, featurize or featurize_predict, got '" + method +
                 "'");
  }
  const std::string protocol = absl::GetFlag(FLAGS_protocol);
  if (protocol == "grpc") {
    load.protocol = Protocol::kGrpc;
  } else if (protocol == "rest") {
    load.protocol = Protocol::kRest;
  } else if (protocol == "oip_grpc") {
    load.protocol = Protocol::kOipGrpc;
  } else {
    return Usage("--protocol: expected grpc, rest or oip_grpc, got '" + protocol + "'");
  }
  const std::string rest_encoding = absl::GetFlag(FLAGS_rest_encoding);
  if (rest_encoding == "json") {
    load.rest_encoding = RestEncoding::kJson;
  } else if (rest_encoding == "binary") {
    load.rest_encoding = RestEncoding::kBinary;
  } else {
    return Usage("--rest_encoding: expected json or binary, got '" + rest_encoding + "'");
  }
  const std::string clip_encoding = absl::GetFlag(FLAGS_clip_encoding);
  if (clip_encoding == "wav") {
    load.clip_encoding = ClipEncoding::kWav;
  } else if (clip_encoding == "float32") {
    load.clip_encoding = ClipEncoding::kFloat32;
  } else if (clip_encoding == "int16") {
    load.clip_encoding = ClipEncoding::kInt16;
  } else {
    return Usage("--clip_encoding: expected wav, float32 or int16, got '" + clip_encoding + "'");
  }
  const double clip_seconds = absl::GetFlag(FLAGS_clip_seconds);
  if (!(clip_seconds > 0) || clip_seconds > 60) {
    return Usage(absl::StrCat("--clip_seconds: expected (0, 60] seconds, got ", clip_seconds));
  }
  const int clip_rate = absl::GetFlag(FLAGS_clip_rate);
  if (clip_rate != 0 && (clip_rate < 1000 || clip_rate > 384000)) {
    return Usage(
        absl::StrCat("--clip_rate: expected 0 (the model's) or 1000..384000 Hz, got ", clip_rate));
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
    target = load.protocol == Protocol::kRest ? "127.0.0.1:8501" : "127.0.0.1:8500";
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
  const std::string clip = absl::GetFlag(FLAGS_clip);
  if (!clip.empty()) {
    if (!input.empty()) return Usage("--clip / --input: expected rows or clips, got both");
    auto clips = ReadLoadClips(clip);
    if (!clips.ok()) {
      std::cerr << "invariant-loadgen: " << clips.status().message() << std::endl;
      return cli::kExitUsage;
    }
    load.clips = *std::move(clips);
    if (absl::Status valid = ValidateLoadOptions(load); !valid.ok()) {
      return Usage(std::string(valid.message()));
    }
  }
  if (load.protocol == Protocol::kRest) return RunRest(load, connection, target, random_rows);

  auto options = cli::MakeClientOptions(connection);
  if (!options.ok()) return Usage(std::string(options.status().message()));
  auto client = Client::Create(target, *options);
  if (input.empty() && clip.empty()) {
    v1::GetModelMetadataResponse metadata;
    const grpc::Status status = client->GetModelMetadata(load.model, load.version, &metadata);
    if (!status.ok()) {
      std::cerr << "invariant-loadgen: metadata: " << cli::StatusCodeName(status.error_code())
                << ": " << status.error_message() << std::endl;
      return cli::kExitServerError;
    }
    if (metadata.has_audio()) {
      RandomClips(random_rows, metadata.audio().sample_rate(), load);
    } else {
      load.input_dim = metadata.input_dim();
      RandomRows(random_rows, absl::GetFlag(FLAGS_seed), load);
    }
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
