#include "client/loadgen/loadgen.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/cli/format.h"
#include "client/loadgen/rest_client.h"
#include "inference/grpc_service.grpc.pb.h"

namespace invariant::loadgen {
namespace {

struct WorkerStats {
  std::vector<double> latencies_us;
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t rows = 0;
  int64_t streams = 0;
  int64_t connections = 0;
  std::map<std::string, int64_t> errors;
  std::map<std::string, std::string> error_messages;
};

// Hands out request indices and their due times until the run's bounds.
class Schedule {
 public:
  Schedule(const LoadOptions& options, absl::Time start)
      : options_(options),
        start_(start),
        stop_(options.duration > absl::ZeroDuration() ? start + options.duration
                                                      : absl::InfiniteFuture()) {}

  // False when the run is over; otherwise the request index and the time the
  // latency is measured from (its due time in open loop, now in closed loop).
  bool Next(int64_t* index, absl::Time* t0) {
    if (absl::Now() >= stop_) return false;
    const int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (options_.max_requests > 0 && i >= options_.max_requests) return false;
    *index = i;
    if (options_.rate <= 0) {
      *t0 = absl::Now();
      return true;
    }
    const absl::Time due = start_ + absl::Seconds(static_cast<double>(i) / options_.rate);
    if (due >= stop_) return false;
    const absl::Duration wait = due - absl::Now();
    if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
    *t0 = due;
    return true;
  }

 private:
  const LoadOptions& options_;
  const absl::Time start_;
  const absl::Time stop_;
  std::atomic<int64_t> next_{0};
};

// The candidate inputs: rows, or clips for a model of sound.
int64_t NumInputs(const LoadOptions& options) {
  return options.clips.empty() ? static_cast<int64_t>(options.rows.size()) / options.input_dim
                               : static_cast<int64_t>(options.clips.size());
}

template <typename Request>
std::vector<Request> MakeRequests(const LoadOptions& options) {
  const int64_t num_rows = NumInputs(options);
  const int64_t distinct = std::min<int64_t>(16, std::max<int64_t>(1, num_rows));
  std::vector<Request> requests(static_cast<size_t>(distinct));
  for (int64_t j = 0; j < distinct; ++j) {
    Request& r = requests[static_cast<size_t>(j)];
    r.mutable_model()->set_name(options.model);
    r.mutable_model()->set_version(options.version);
    r.mutable_model()->set_version_label(options.version_label);
    if (!options.clips.empty()) {
      for (int64_t k = 0; k < options.batch; ++k) {
        const LoadClip& clip =
            options.clips[static_cast<size_t>((j * options.batch + k) % num_rows)];
        *r.mutable_inputs()->add_clips() = ToAudioClip(clip, options.clip_encoding);
      }
      continue;
    }
    r.mutable_inputs()->set_num_rows(options.batch);
    auto* values = r.mutable_inputs()->mutable_values();
    values->Reserve(static_cast<int>(options.batch * options.input_dim));
    for (int64_t k = 0; k < options.batch; ++k) {
      const int64_t row = (j * options.batch + k) % num_rows;
      const float* begin = options.rows.data() + row * options.input_dim;
      values->Add(begin, begin + options.input_dim);
    }
  }
  return requests;
}

void RecordOk(WorkerStats& stats, const LoadOptions& options, absl::Time t0) {
  stats.latencies_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
  ++stats.ok;
  stats.rows += options.batch;
}

void RecordError(WorkerStats& stats, const std::string& key, const std::string& message) {
  ++stats.failed;
  if (++stats.errors[key] == 1) stats.error_messages.emplace(key, message);
}

void RecordError(WorkerStats& stats, const grpc::Status& status) {
  // A stream that ended without an error status but also without an answer.
  const grpc::StatusCode code = status.ok() ? grpc::StatusCode::UNKNOWN : status.error_code();
  RecordError(stats, cli::StatusCodeName(code),
              status.ok() ? "the stream ended without an answer" : status.error_message());
}

template <typename Request, typename Response, typename UnaryCall, typename OpenStream>
void Worker(const LoadOptions& options, const std::vector<Request>& requests, Schedule& schedule,
            UnaryCall unary, OpenStream open_stream, WorkerStats& stats) {
  Response response;
  int64_t index = 0;
  absl::Time t0;
  if (options.mode == Mode::kUnary) {
    while (schedule.Next(&index, &t0)) {
      const Request& request = requests[static_cast<size_t>(index) % requests.size()];
      const grpc::Status status = unary(request, &response);
      if (status.ok()) {
        RecordOk(stats, options, t0);
      } else {
        RecordError(stats, status);
      }
    }
    return;
  }
  decltype(open_stream()) stream;
  while (schedule.Next(&index, &t0)) {
    const Request& request = requests[static_cast<size_t>(index) % requests.size()];
    if (stream == nullptr) {
      stream = open_stream();
      ++stats.streams;
    }
    if (stream->Call(request, &response)) {
      RecordOk(stats, options, t0);
    } else {
      RecordError(stats, stream->Finish());
      stream.reset();
    }
  }
  if (stream != nullptr) stream->Finish();
}

// The distinct ModelInfer requests of rows (raw_input_contents, like
// Triton's and KServe's gRPC clients), as MakeRequests builds invariant.v1's.
std::vector<inference::ModelInferRequest> MakeInferRequests(const LoadOptions& options) {
  const int64_t num_rows = NumInputs(options);
  const int64_t distinct = std::min<int64_t>(16, std::max<int64_t>(1, num_rows));
  std::vector<inference::ModelInferRequest> requests(static_cast<size_t>(distinct));
  for (int64_t j = 0; j < distinct; ++j) {
    inference::ModelInferRequest& r = requests[static_cast<size_t>(j)];
    r.set_model_name(options.model);
    if (options.version > 0) {
      r.set_model_version(absl::StrCat(options.version));
    } else {
      r.set_model_version(options.version_label);
    }
    auto* input = r.add_inputs();
    input->set_name(kOipInputName);
    input->set_datatype("FP32");
    input->add_shape(options.batch);
    input->add_shape(options.input_dim);
    std::string* raw = r.add_raw_input_contents();
    raw->resize(static_cast<size_t>(options.batch * options.input_dim) * sizeof(float));
    for (int64_t k = 0; k < options.batch; ++k) {
      const int64_t row = (j * options.batch + k) % num_rows;
      std::memcpy(raw->data() + k * options.input_dim * sizeof(float),
                  options.rows.data() + row * options.input_dim, options.input_dim * sizeof(float));
    }
    for (const std::string& name : InferOutputNames(options.method)) {
      r.add_outputs()->set_name(name);
    }
  }
  return requests;
}

// OK when `response` carries `outputs` in order, each raw with `rows` rows.
absl::Status CheckModelInferResponse(const inference::ModelInferResponse& response,
                                     const std::vector<std::string>& outputs, int64_t rows) {
  if (response.outputs_size() != static_cast<int>(outputs.size()) ||
      response.raw_output_contents_size() != response.outputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", outputs.size(), " raw outputs, received ", response.outputs_size(),
        " outputs and ", response.raw_output_contents_size(), " raw contents"));
  }
  for (int i = 0; i < response.outputs_size(); ++i) {
    const auto& tensor = response.outputs(i);
    if (tensor.name() != outputs[i] || tensor.shape_size() != 2 || tensor.shape(0) != rows ||
        response.raw_output_contents(i).size() !=
            static_cast<size_t>(rows * tensor.shape(1)) * sizeof(float)) {
      return absl::InvalidArgumentError(
          absl::StrCat("outputs[", i, "]: expected '", outputs[i], "' FP32 [", rows, ", n] raw"));
    }
  }
  return absl::OkStatus();
}

// The distinct REST request bodies, as MakeRequests builds the gRPC ones.
std::vector<EncodedInferRequest> MakeRestRequests(const LoadOptions& options) {
  const int64_t num_rows = NumInputs(options);
  const int64_t distinct = std::min<int64_t>(16, std::max<int64_t>(1, num_rows));
  std::vector<EncodedInferRequest> requests;
  if (!options.clips.empty()) {
    std::vector<const LoadClip*> clips(static_cast<size_t>(options.batch));
    for (int64_t j = 0; j < distinct; ++j) {
      for (int64_t k = 0; k < options.batch; ++k) {
        clips[static_cast<size_t>(k)] =
            &options.clips[static_cast<size_t>((j * options.batch + k) % num_rows)];
      }
      requests.push_back(EncodeClipInferRequest(clips, InferOutputNames(options.method),
                                                options.clip_encoding, options.rest_encoding));
    }
    return requests;
  }
  std::vector<float> values(static_cast<size_t>(options.batch * options.input_dim));
  for (int64_t j = 0; j < distinct; ++j) {
    for (int64_t k = 0; k < options.batch; ++k) {
      const int64_t row = (j * options.batch + k) % num_rows;
      std::copy_n(options.rows.data() + row * options.input_dim, options.input_dim,
                  values.data() + k * options.input_dim);
    }
    requests.push_back(EncodeInferRequest(values.data(), options.batch, options.input_dim,
                                          InferOutputNames(options.method), options.rest_encoding));
  }
  return requests;
}

void RestWorker(const LoadOptions& options, const RestTarget& target,
                const std::vector<EncodedInferRequest>& requests, const std::string& path,
                Schedule& schedule, WorkerStats& stats) {
  const bool binary = options.rest_encoding == RestEncoding::kBinary;
  const std::vector<std::string> outputs = InferOutputNames(options.method);
  RestConnection connection(target.target, target.bearer_token, target.timeout);
  RestCallResult result;
  InferResponse response;
  int64_t index = 0;
  absl::Time t0;
  while (schedule.Next(&index, &t0)) {
    const EncodedInferRequest& request = requests[static_cast<size_t>(index) % requests.size()];
    const absl::Status sent = connection.Post(path, request.body, request.content_type,
                                              binary ? request.json_bytes : -1, &result);
    if (!sent.ok()) {
      RecordError(stats, TransportErrorName(sent), std::string(sent.message()));
      continue;
    }
    if (result.http_status != 200) {
      RecordError(stats, absl::StrCat("HTTP_", result.http_status),
                  ErrorMessageFromBody(result.body));
      continue;
    }
    absl::Status decoded =
        DecodeInferResponse(result.body, result.inference_header_length, &response);
    for (const std::string& output : outputs) {
      if (decoded.ok()) decoded = CheckInferOutput(response, output, options.batch, binary);
    }
    if (!decoded.ok()) {
      RecordError(stats, "MALFORMED_RESPONSE", std::string(decoded.message()));
      continue;
    }
    RecordOk(stats, options, t0);
  }
  stats.connections = connection.connections_opened();
}

LoadReport Summarize(const std::vector<WorkerStats>& stats, absl::Time start) {
  LoadReport report;
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<double> latencies;
  for (const WorkerStats& s : stats) {
    report.requests_ok += s.ok;
    report.requests_failed += s.failed;
    report.rows_ok += s.rows;
    report.streams += s.streams;
    report.connections += s.connections;
    for (const auto& [code, n] : s.errors) report.errors[code] += n;
    for (const auto& [code, message] : s.error_messages) {
      report.error_messages.emplace(code, message);
    }
    latencies.insert(latencies.end(), s.latencies_us.begin(), s.latencies_us.end());
  }
  if (report.seconds > 0) {
    report.qps = static_cast<double>(report.requests_ok) / report.seconds;
    report.rows_per_second = static_cast<double>(report.rows_ok) / report.seconds;
  }
  if (!latencies.empty()) {
    double sum = 0;
    for (double l : latencies) sum += l;
    report.latency.mean_us = sum / static_cast<double>(latencies.size());
    report.latency.p50_us = Quantile(latencies, 0.50);
    report.latency.p90_us = Quantile(latencies, 0.90);
    report.latency.p99_us = Quantile(latencies, 0.99);
    report.latency.max_us = latencies.back();
  }
  return report;
}

}  // namespace

const char* MethodName(Method method) {
  switch (method) {
    case Method::kPredict:
      return "predict";
    case Method::kFeaturize:
      return "featurize";
    case Method::kFeaturizePredict:
      return "featurize_predict";
  }
  return "predict";
}
const char* ModeName(Mode mode) { return mode == Mode::kUnary ? "unary" : "stream"; }
const char* ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kGrpc:
      return "grpc";
    case Protocol::kRest:
      return "rest";
    case Protocol::kOipGrpc:
      return "oip_grpc";
  }
  return "grpc";
}
const char* EncodingName(const LoadOptions& options) {
  if (options.protocol != Protocol::kRest) return "protobuf";
  return options.rest_encoding == RestEncoding::kJson ? "json" : "binary";
}
std::vector<std::string> InferOutputNames(Method method) {
  switch (method) {
    case Method::kPredict:
      return {"scores"};
    case Method::kFeaturize:
      return {"features"};
    case Method::kFeaturizePredict:
      return {"features", "scores"};
  }
  return {};
}

std::string RestModelPath(const LoadOptions& options) {
  std::string path = absl::StrCat("/v2/models/", EscapePathSegment(options.model));
  if (options.version > 0) {
    absl::StrAppend(&path, "/versions/", options.version);
  } else if (!options.version_label.empty()) {
    absl::StrAppend(&path, "/versions/", EscapePathSegment(options.version_label));
  }
  return path;
}

absl::Status ValidateLoadOptions(const LoadOptions& o) {
  if (o.model.empty()) return absl::InvalidArgumentError("--model: expected a model name, got ''");
  if (o.concurrency < 1 || o.concurrency > kMaxConcurrency) {
    return absl::InvalidArgumentError(
        absl::StrCat("--concurrency: expected 1..", kMaxConcurrency, ", got ", o.concurrency));
  }
  const bool oip = o.protocol != Protocol::kGrpc;
  if (oip && o.mode == Mode::kStream) {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode=stream: streams are gRPC-only (invariant.v1's); with --protocol=",
                     ProtocolName(o.protocol), " use --mode=unary"));
  }
  if (oip && o.version > 0 && !o.version_label.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--version / --version_label: ",
                     o.protocol == Protocol::kRest ? "a REST path" : "a ModelInfer request",
                     " names one version, got both"));
  }
  if (o.protocol != Protocol::kRest && o.rest_encoding != RestEncoding::kJson) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rest_encoding=binary: applies to --protocol=rest only, got --protocol=",
                     ProtocolName(o.protocol)));
  }
  if (!oip && o.method == Method::kFeaturizePredict) {
    return absl::InvalidArgumentError(
        "--method=featurize_predict: one call for features and scores is the Open Inference "
        "Protocol's (--protocol=rest or oip_grpc), got --protocol=grpc");
  }
  if (o.protocol == Protocol::kOipGrpc && !o.clips.empty()) {
    return absl::InvalidArgumentError(
        "--clip: --protocol=oip_grpc sends rows only; send clips with --protocol=rest or grpc");
  }
  if (o.duration < absl::ZeroDuration() || o.duration > kMaxDuration) {
    return absl::InvalidArgumentError(
        absl::StrCat("--duration: expected 0..", absl::ToDoubleSeconds(kMaxDuration),
                     " seconds, got ", absl::ToDoubleSeconds(o.duration)));
  }
  if (o.max_requests < 0 || o.max_requests > kMaxRequests) {
    return absl::InvalidArgumentError(
        absl::StrCat("--requests: expected 0..", kMaxRequests, ", got ", o.max_requests));
  }
  if (o.duration == absl::ZeroDuration() && o.max_requests == 0) {
    return absl::InvalidArgumentError(
        "--duration / --requests: expected at least one bound, got neither");
  }
  if (o.batch < 1 || o.batch > kMaxBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch: expected 1..", kMaxBatch, " rows, got ", o.batch));
  }
  if (!(o.rate >= 0) || o.rate > kMaxRate) {
    return absl::InvalidArgumentError(absl::StrCat("--rate: expected 0 (closed loop) .. ", kMaxRate,
                                                   " requests/s, got ", o.rate));
  }
  if (!o.clips.empty()) {
    if (!o.rows.empty()) {
      return absl::InvalidArgumentError(
          "--clip / --input: expected rows or clips, got both (a model takes one or the other)");
    }
    for (size_t i = 0; i < o.clips.size(); ++i) {
      if (o.clips[i].samples.empty() || o.clips[i].sample_rate < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--clip: clip ", i, " has no samples or no sample rate"));
      }
    }
    if (o.protocol == Protocol::kRest) {
      return ValidateRestClips(o.clips, o.clip_encoding, o.rest_encoding);
    }
    return absl::OkStatus();
  }
  if (o.input_dim < 1 || o.rows.empty() || o.rows.size() % static_cast<size_t>(o.input_dim) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rows: expected a multiple of input_dim=", o.input_dim, " floats, got ", o.rows.size()));
  }
  return absl::OkStatus();
}

double Quantile(std::vector<double>& samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(q * static_cast<double>(samples.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

absl::StatusOr<LoadReport> RunLoad(Client& client, const LoadOptions& options) {
  if (absl::Status valid = ValidateLoadOptions(options); !valid.ok()) return valid;
  if (options.protocol == Protocol::kRest) {
    return absl::InvalidArgumentError(
        "RunLoad: expected --protocol=grpc or oip_grpc (RunRestLoad runs REST)");
  }
  std::vector<WorkerStats> stats(static_cast<size_t>(options.concurrency));
  if (options.protocol == Protocol::kOipGrpc) {
    const std::vector<inference::ModelInferRequest> requests = MakeInferRequests(options);
    const std::vector<std::string> outputs = InferOutputNames(options.method);
    auto stub = inference::GRPCInferenceService::NewStub(client.channel());
    const absl::Time start = absl::Now();
    Schedule schedule(options, start);
    std::vector<std::thread> threads;
    for (int c = 0; c < options.concurrency; ++c) {
      threads.emplace_back([&, c] {
        WorkerStats& s = stats[static_cast<size_t>(c)];
        Worker<inference::ModelInferRequest, inference::ModelInferResponse>(
            options, requests, schedule,
            [&](const inference::ModelInferRequest& r, inference::ModelInferResponse* out) {
              out->Clear();
              grpc::Status status = stub->ModelInfer(client.NewContext().get(), r, out);
              if (!status.ok()) return status;
              if (absl::Status shape = CheckModelInferResponse(*out, outputs, options.batch);
                  !shape.ok()) {
                return grpc::Status(grpc::StatusCode::DATA_LOSS, std::string(shape.message()));
              }
              return status;
            },
            [] {
              return std::unique_ptr<
                  Stream<inference::ModelInferRequest, inference::ModelInferResponse>>();
            },
            s);
      });
    }
    for (std::thread& t : threads) t.join();
    return Summarize(stats, start);
  }
  std::vector<v1::PredictRequest> predict_requests;
  std::vector<v1::FeaturizeRequest> featurize_requests;
  if (options.method == Method::kPredict) {
    predict_requests = MakeRequests<v1::PredictRequest>(options);
  } else {
    featurize_requests = MakeRequests<v1::FeaturizeRequest>(options);
  }
  const absl::Time start = absl::Now();
  Schedule schedule(options, start);
  std::vector<std::thread> threads;
  for (int c = 0; c < options.concurrency; ++c) {
    WorkerStats& s = stats[static_cast<size_t>(c)];
    if (options.method == Method::kPredict) {
      threads.emplace_back([&, c] {
        Worker<v1::PredictRequest, v1::PredictResponse>(
            options, predict_requests, schedule,
            [&](const v1::PredictRequest& r, v1::PredictResponse* out) {
              return client.Predict(r, out);
            },
            [&] { return client.OpenPredictStream(); }, s);
      });
    } else {
      threads.emplace_back([&, c] {
        Worker<v1::FeaturizeRequest, v1::FeaturizeResponse>(
            options, featurize_requests, schedule,
            [&](const v1::FeaturizeRequest& r, v1::FeaturizeResponse* out) {
              return client.Featurize(r, out);
            },
            [&] { return client.OpenFeaturizeStream(); }, s);
      });
    }
  }
  for (std::thread& t : threads) t.join();
  return Summarize(stats, start);
}

absl::StatusOr<LoadReport> RunRestLoad(const RestTarget& target, const LoadOptions& options) {
  if (absl::Status valid = ValidateLoadOptions(options); !valid.ok()) return valid;
  if (options.protocol != Protocol::kRest) {
    return absl::InvalidArgumentError("RunRestLoad: expected --protocol=rest (RunLoad runs gRPC)");
  }
  RestInit();
  const std::vector<EncodedInferRequest> requests = MakeRestRequests(options);
  const std::string path = RestModelPath(options) + "/infer";
  std::vector<WorkerStats> stats(static_cast<size_t>(options.concurrency));
  const absl::Time start = absl::Now();
  Schedule schedule(options, start);
  std::vector<std::thread> threads;
  for (int c = 0; c < options.concurrency; ++c) {
    threads.emplace_back(RestWorker, std::cref(options), std::cref(target), std::cref(requests),
                         std::cref(path), std::ref(schedule),
                         std::ref(stats[static_cast<size_t>(c)]));
  }
  for (std::thread& t : threads) t.join();
  return Summarize(stats, start);
}

absl::StatusOr<std::string> RestModelMetadata(const RestTarget& target,
                                              const LoadOptions& options) {
  RestInit();
  RestConnection connection(target.target, target.bearer_token, target.timeout);
  RestCallResult result;
  if (absl::Status s = connection.Get(RestModelPath(options), &result); !s.ok()) return s;
  if (result.http_status != 200) {
    return absl::UnavailableError(
        absl::StrCat("HTTP_", result.http_status, ": ", ErrorMessageFromBody(result.body)));
  }
  return std::move(result.body);
}

absl::StatusOr<int64_t> RestInputDim(const RestTarget& target, const LoadOptions& options) {
  absl::StatusOr<std::string> body = RestModelMetadata(target, options);
  if (!body.ok()) return body.status();
  return InputDimFromModelMetadata(*body);
}

std::string ReportJson(const LoadReport& r, const LoadOptions& o, const std::string& target) {
  using cli::JsonNumber;
  using cli::JsonString;
  std::vector<std::string> errors, messages;
  for (const auto& [code, n] : r.errors) errors.push_back(absl::StrCat(JsonString(code), ":", n));
  for (const auto& [code, message] : r.error_messages) {
    messages.push_back(absl::StrCat(JsonString(code), ":", JsonString(message)));
  }
  return absl::StrCat(
      "{\"target\":", JsonString(target), ",\"protocol\":", JsonString(ProtocolName(o.protocol)),
      ",\"encoding\":", JsonString(EncodingName(o)), ",\"model\":", JsonString(o.model),
      ",\"method\":", JsonString(MethodName(o.method)), ",\"mode\":", JsonString(ModeName(o.mode)),
      ",\"input\":", JsonString(o.clips.empty() ? "rows" : "clips"),
      o.clips.empty()
          ? ""
          : absl::StrCat(",\"clip_encoding\":", JsonString(ClipEncodingName(o.clip_encoding))),
      ",\"concurrency\":", o.concurrency, ",\"batch\":", o.batch, ",\"rate\":", JsonNumber(o.rate),
      ",\"seconds\":", JsonNumber(r.seconds), ",\"qps\":", JsonNumber(r.qps),
      ",\"rows_per_second\":", JsonNumber(r.rows_per_second),
      ",\"requests\":{\"ok\":", r.requests_ok, ",\"failed\":", r.requests_failed,
      ",\"total\":", r.requests_ok + r.requests_failed, "},\"rows_ok\":", r.rows_ok,
      ",\"streams\":", r.streams, ",\"connections\":", r.connections, ",\"errors\":{",
      absl::StrJoin(errors, ","), "},\"error_messages\":{", absl::StrJoin(messages, ","),
      "},\"latency_us\":{\"p50\":", JsonNumber(r.latency.p50_us),
      ",\"p90\":", JsonNumber(r.latency.p90_us), ",\"p99\":", JsonNumber(r.latency.p99_us),
      ",\"max\":", JsonNumber(r.latency.max_us), ",\"mean\":", JsonNumber(r.latency.mean_us), "}}");
}

std::string ReportTable(const LoadReport& r, const LoadOptions& o, const std::string& target) {
  std::string out = absl::StrFormat(
      "invariant-loadgen  target=%s protocol=%s encoding=%s model=%s method=%s mode=%s "
      "concurrency=%d batch=%d%s %s\n",
      target, ProtocolName(o.protocol), EncodingName(o), o.model, MethodName(o.method),
      ModeName(o.mode), o.concurrency, o.batch,
      o.clips.empty() ? "" : absl::StrCat(" clips=", ClipEncodingName(o.clip_encoding)),
      o.rate > 0 ? absl::StrFormat("rate=%g/s (open loop)", o.rate) : "closed loop");
  auto row = [&out](const std::string& name, const std::string& value) {
    absl::StrAppendFormat(&out, "  %-18s %14s\n", name, value);
  };
  row("duration (s)", absl::StrFormat("%.3f", r.seconds));
  row("requests ok", absl::StrCat(r.requests_ok));
  row("requests failed", absl::StrCat(r.requests_failed));
  if (o.mode == Mode::kStream) row("streams", absl::StrCat(r.streams));
  if (o.protocol == Protocol::kRest) row("connections", absl::StrCat(r.connections));
  row("qps", absl::StrFormat("%.1f", r.qps));
  row("rows/s", absl::StrFormat("%.1f", r.rows_per_second));
  row("latency p50 (us)", absl::StrFormat("%.1f", r.latency.p50_us));
  row("latency p90 (us)", absl::StrFormat("%.1f", r.latency.p90_us));
  row("latency p99 (us)", absl::StrFormat("%.1f", r.latency.p99_us));
  row("latency max (us)", absl::StrFormat("%.1f", r.latency.max_us));
  row("latency mean (us)", absl::StrFormat("%.1f", r.latency.mean_us));
  for (const auto& [code, n] : r.errors) row("errors " + code, absl::StrCat(n));
  for (const auto& [code, message] : r.error_messages) {
    absl::StrAppend(&out, "  first ", code, ": ", message.substr(0, 300), "\n");
  }
  return out;
}

}  // namespace invariant::loadgen
