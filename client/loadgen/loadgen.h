// loadgen.h: bounded load on invariant-server through invariant::Client
// (gRPC) or the Open Inference Protocol's REST port (the engine of
// invariant-loadgen, reusable by benchmarks).
//
// RunLoad (gRPC) and RunRestLoad (REST) start `concurrency` worker threads.
// Each sends Featurize or Predict requests of `batch` rows — over gRPC unary
// or over one bidirectional stream per worker; over REST as POST
// /v2/models/{name}[/versions/{v}]/infer on ONE persistent HTTP/1.1
// keep-alive connection per worker (rest_client.h; it reconnects when the
// server closes it), asking for exactly one output: "scores" for predict,
// "features" for featurize, in JSON or Triton's binary tensor encoding
// (oip_codec.h). Streams are gRPC-only.
// Models of sound: with `clips` set (and `rows` empty) every request sends
// `batch` clips instead of rows (clip_codec.h: InputBatch.clips over gRPC,
// an FP32 / INT16 [n, L] or BYTES [n] input over REST), packed in
// `clip_encoding`; one clip counts as one row below.
//   closed loop (rate == 0): a worker sends its next request when the previous
//     one has answered; latency = answer time − send time.
//   open loop (rate > 0): request i is due at start + i / rate, whichever
//     worker is free sends it (so at most `concurrency` are in flight); latency
//     is measured from the due time, so a server that falls behind shows it
//     (no coordinated omission).
// The run ends when `max_requests` requests were sent or `duration` has passed,
// whichever comes first; at least one of them must be set and both are capped
// (kMaxDuration, kMaxRequests), so every run is bounded.
//
// Counting (gRPC): a request is "ok" when its call returned OK, an error
// otherwise, counted by gRPC code name. In unary mode every request is one RPC, so `ok`
// equals the server's grpc_server_handled_total{grpc_code="OK"} increase for
// the method. In stream mode a failed request ends its stream (the stream's
// final status gives the code) and the worker opens a new one; `streams`
// counts the streams opened.
// Counting (REST): a request is "ok" on HTTP 200 with a well-formed response
// whose requested output is FP32 [batch, n] (binary when the encoding is);
// otherwise an error counted as "HTTP_<status>" (e.g. "HTTP_503"), the libcurl
// code name of a transport failure (e.g. "CURLE_OPERATION_TIMEDOUT") or
// "MALFORMED_RESPONSE" (a 200 whose body does not decode or lacks the rows).
// `ok` then equals the server's grpc_server_handled_total{grpc_service=
// "inference.REST",grpc_method="ModelInfer",grpc_code="OK"} increase, and
// `connections` counts the TCP connections the workers had to open.
// Both: latency percentiles are over ok requests; `error_messages` keeps the
// first message seen for each error key.
//
// Thread-safety: RunLoad / RunRestLoad may be called from any thread; the
// Client is shared by the workers (Client is thread-safe); each REST worker
// owns its connection.
#ifndef INVARIANT_CLIENT_LOADGEN_LOADGEN_H_
#define INVARIANT_CLIENT_LOADGEN_LOADGEN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "client/loadgen/clip_codec.h"
#include "client/loadgen/oip_codec.h"

namespace invariant::loadgen {

inline constexpr int kMaxConcurrency = 1024;
inline constexpr int64_t kMaxRequests = 100000000;
inline constexpr absl::Duration kMaxDuration = absl::Hours(1);
inline constexpr int64_t kMaxBatch = 65536;
inline constexpr double kMaxRate = 1e6;

// kFeaturizePredict: the features and the scores in one call (the Open
// Inference Protocol only: invariant.v1 has no such call).
enum class Method { kPredict, kFeaturize, kFeaturizePredict };
enum class Mode { kUnary, kStream };
// kGrpc: invariant.v1 over gRPC; kRest: the Open Inference Protocol over
// REST; kOipGrpc: the Open Inference Protocol over gRPC (ModelInfer, rows
// only, sent as raw_input_contents, unary).
enum class Protocol { kGrpc, kRest, kOipGrpc };

struct LoadOptions {
  std::string model;
  int64_t version = 0;        // 0 = newest ready version
  std::string version_label;  // optional
  Method method = Method::kPredict;
  Mode mode = Mode::kUnary;
  Protocol protocol = Protocol::kGrpc;
  RestEncoding rest_encoding = RestEncoding::kJson;  // REST only
  int concurrency = 1;                               // 1..kMaxConcurrency workers
  absl::Duration duration = absl::ZeroDuration();    // 0 = bounded by max_requests only
  int64_t max_requests = 0;                          // 0 = bounded by duration only
  int64_t batch = 1;                                 // rows per request
  double rate = 0;                                   // requests per second; 0 = closed loop
  // Candidate input rows (row-major, input_dim floats each); request i sends
  // `batch` consecutive rows starting at row (i · batch) mod num_rows.
  std::vector<float> rows;
  int64_t input_dim = 0;
  // Or, for a model of sound, candidate clips (then rows is empty); request i
  // sends `batch` consecutive clips starting at clip (i · batch) mod
  // clips.size().
  std::vector<LoadClip> clips;
  ClipEncoding clip_encoding = ClipEncoding::kWav;
};

// OK, or InvalidArgument naming the first option out of range or the first
// combination the protocol cannot do: --mode=stream or both a version and a
// version label with REST (a REST path names one), binary encoding with gRPC,
// both rows and clips (or neither), an empty clip, WAV clips over REST JSON or
// clips of different rates in one REST request (ValidateRestClips).
absl::Status ValidateLoadOptions(const LoadOptions& options);

struct LatencySummary {
  double p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
};

struct LoadReport {
  int64_t requests_ok = 0;
  int64_t requests_failed = 0;
  int64_t rows_ok = 0;
  int64_t streams = 0;                    // stream mode: streams opened
  int64_t connections = 0;                // REST: TCP connections opened; gRPC: 0 (not counted)
  std::map<std::string, int64_t> errors;  // gRPC code name / HTTP_nnn / CURLE_… → failed requests
  std::map<std::string, std::string> error_messages;  // error key → first message seen
  double seconds = 0;                                 // wall time of the run
  double qps = 0;                                     // ok requests per second
  double rows_per_second = 0;                         // ok rows per second
  LatencySummary latency;                             // over ok requests
};

// Runs the load over gRPC, invariant.v1 or (kOipGrpc) the Open Inference
// Protocol's ModelInfer on the client's channel (after ValidateLoadOptions;
// an invalid `options`, or one whose protocol is kRest, is returned as its
// error without sending anything).
absl::StatusOr<LoadReport> RunLoad(Client& client, const LoadOptions& options);

// Where and how the REST workers connect.
struct RestTarget {
  std::string target;                          // host:port of the server's --http_port
  std::string bearer_token;                    // sent as "Authorization: Bearer …"; empty = none
  absl::Duration timeout = absl::Seconds(10);  // per request; 0 = none
};

// Runs the load over REST, like RunLoad (`options.protocol` must be kRest).
absl::StatusOr<LoadReport> RunRestLoad(const RestTarget& target, const LoadOptions& options);

// The REST path of the model options name: /v2/models/{name}, then
// /versions/{version} or /versions/{label} when one is set (escaped).
std::string RestModelPath(const LoadOptions& options);
// The OIP outputs a method asks for: {"scores"} (predict), {"features"}, or
// {"features", "scores"} (featurize_predict).
std::vector<std::string> InferOutputNames(Method method);
// The body of GET RestModelPath(options) (the model's metadata JSON);
// UNAVAILABLE "HTTP_<status>: message" or "CURLE_…: message" when the call
// fails.
absl::StatusOr<std::string> RestModelMetadata(const RestTarget& target, const LoadOptions& options);
// The input dimension of the options' model from GET RestModelPath(options);
// UNAVAILABLE "HTTP_<status>: message" or "CURLE_…: message" when the call
// fails, INVALID_ARGUMENT when the metadata does not decode.
absl::StatusOr<int64_t> RestInputDim(const RestTarget& target, const LoadOptions& options);

// The q-quantile (0..1, nearest rank) of `samples`, which are sorted in
// place; 0 when empty.
double Quantile(std::vector<double>& samples, double q);

// The report as one JSON object (keys: target, protocol, encoding, model,
// method, mode, concurrency, batch, rate, seconds, qps, rows_per_second,
// requests{ok,failed,total}, rows_ok, streams, connections, errors{CODE: n},
// error_messages{CODE: first message}, latency_us{p50,p90,p99,max,mean},
// input "rows" | "clips", and with clips clip_encoding "wav" | "float32" |
// "int16").
std::string ReportJson(const LoadReport& report, const LoadOptions& options,
                       const std::string& target);
// The report as a human-readable table.
std::string ReportTable(const LoadReport& report, const LoadOptions& options,
                        const std::string& target);

const char* MethodName(Method method);        // "predict" | "featurize" | "featurize_predict"
const char* ModeName(Mode mode);              // "unary" | "stream"
const char* ProtocolName(Protocol protocol);  // "grpc" | "rest" | "oip_grpc"
// "protobuf" for gRPC (oip_grpc: raw contents); "json" | "binary" for REST.
const char* EncodingName(const LoadOptions& options);

}  // namespace invariant::loadgen

#endif  // INVARIANT_CLIENT_LOADGEN_LOADGEN_H_
