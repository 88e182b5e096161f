// rest_codec_bench.cc: the REST infer codec (server/rest/rest_infer_request.h and
// rest_codec.h) in MB/s of body, next to the JSON library's own speed on the same
// bytes.
//
//   build/bin/invariant-bench-rest [--benchmark_filter=...]
//
// Bodies: one FP32 input of random normal floats written with the shortest
// round-trip digits (about 11 bytes a number), of 1 MiB and 15 MiB, as JSON
// and in the binary tensor data extension (the same floats, 4 bytes each).
//   BM_InferRequestJson        InferRequestFromJson: the whole codec
//   BM_RapidJsonNullHandler    RapidJSON's reader, same flags as json.h
//                              (UTF-8 validation, numbers as text, iterative),
//                              a handler that does nothing: the library's floor
//   BM_RapidJsonFromChars      the same + std::from_chars<float> of every
//                              number into a vector: library + conversion
//   BM_InferRequestBinary      InferRequestFromHttp on the binary body
//   BM_InferResponseJson / BM_InferResponseBinary  the response of the same
//                              floats, written as JSON / binary
// bytes_per_second is the body's size over the CPU time (the machine is
// shared; "M/s" is 2^20 bytes a second).
// The counter heap_x is the peak of heap bytes allocated during one call
// over the body's size (operator new / delete of this binary are counted).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "server/rest/rest_codec.h"
#include "server/rest/rest_infer_request.h"

namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

void Count(void* p) {
  if (p == nullptr) return;
  const int64_t live = g_live += static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
}

void Uncount(void* p) {
  if (p != nullptr) g_live -= static_cast<int64_t>(malloc_usable_size(p));
}

}  // namespace

// The replacements below pair malloc with free; GCC cannot see that the
// operator new it warns about is this one.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  Count(p);
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  Uncount(p);
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }

namespace {

constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag |
                            rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag;

std::vector<float> Floats(size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

// A JSON infer body of about `bytes` bytes, and its float count.
const std::string& JsonBody(size_t bytes, size_t* count) {
  static std::string cached;
  static size_t cached_bytes = 0, cached_count = 0;
  if (cached_bytes != bytes) {
    std::string data;
    size_t n = 0;
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    while (data.size() < bytes - 120) {
      if (n++ > 0) data += ',';
      invariant::AppendJsonNumber(normal(rng), &data);
    }
    cached =
        absl::StrCat(R"({"id":"bench","inputs":[{"name":"input","datatype":"FP32","shape":[1,)", n,
                     R"(],"data":[)", data, "]}]}");
    cached_bytes = bytes;
    cached_count = n;
  }
  *count = cached_count;
  return cached;
}

size_t BodyBytes(const benchmark::State& state) {
  return static_cast<size_t>(state.range(0)) << 20;
}

void Report(benchmark::State& state, size_t body_bytes, int64_t peak_over_baseline) {
  state.SetBytesProcessed(static_cast<int64_t>(body_bytes) * state.iterations());
  state.counters["heap_x"] = static_cast<double>(peak_over_baseline) / body_bytes;
}

void BM_InferRequestJson(benchmark::State& state) {
  size_t n;
  const std::string& body = JsonBody(BodyBytes(state), &n);
  int64_t peak = 0;
  for (auto _ : state) {
    const int64_t base = g_live.load();
    g_peak = base;
    absl::StatusOr<inference::ModelInferRequest> request =
        invariant::server::InferRequestFromJson(body, "m", "");
    if (!request.ok() ||
        request->inputs(0).contents().fp32_contents_size() != static_cast<int>(n)) {
      state.SkipWithError("the body was not read");
      return;
    }
    benchmark::DoNotOptimize(request);
    peak = std::max(peak, g_peak.load() - base);
  }
  Report(state, body.size(), peak);
  state.counters["floats"] = static_cast<double>(n);
}

void BM_RapidJsonNullHandler(benchmark::State& state) {
  size_t n;
  const std::string& body = JsonBody(BodyBytes(state), &n);
  int64_t peak = 0;
  for (auto _ : state) {
    const int64_t base = g_live.load();
    g_peak = base;
    rapidjson::MemoryStream stream(body.data(), body.size());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    if (reader.Parse<kFlags>(stream, handler).IsError()) {
      state.SkipWithError("RapidJSON refused the body");
      return;
    }
    peak = std::max(peak, g_peak.load() - base);
  }
  Report(state, body.size(), peak);
}

struct FloatHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, FloatHandler> {
  std::vector<float>* out;
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    float f;
    if (std::from_chars(s, s + n, f).ec != std::errc()) return false;
    out->push_back(f);
    return true;
  }
};

void BM_RapidJsonFromChars(benchmark::State& state) {
  size_t n;
  const std::string& body = JsonBody(BodyBytes(state), &n);
  std::vector<float> floats;
  floats.reserve(n + 8);
  for (auto _ : state) {
    floats.clear();
    rapidjson::MemoryStream stream(body.data(), body.size());
    FloatHandler handler;
    handler.out = &floats;
    rapidjson::Reader reader;
    if (reader.Parse<kFlags>(stream, handler).IsError() || floats.size() < n) {
      state.SkipWithError("RapidJSON refused the body");
      return;
    }
  }
  Report(state, body.size(), 0);
}

void BM_InferRequestBinary(benchmark::State& state) {
  const size_t n = BodyBytes(state) / sizeof(float);
  const std::vector<float> values = Floats(n);
  const std::string json =
      absl::StrCat(R"({"id":"bench","inputs":[{"name":"input","datatype":"FP32","shape":[1,)", n,
                   R"(],"parameters":{"binary_data_size":)", n * sizeof(float), "}}]}");
  const std::string body =
      json + std::string(reinterpret_cast<const char*>(values.data()), n * sizeof(float));
  const std::string header = std::to_string(json.size());
  int64_t peak = 0;
  for (auto _ : state) {
    const int64_t base = g_live.load();
    g_peak = base;
    absl::StatusOr<inference::ModelInferRequest> request =
        invariant::server::InferRequestFromHttp(body, &header, "m", "");
    if (!request.ok()) {
      state.SkipWithError("the body was not read");
      return;
    }
    benchmark::DoNotOptimize(request);
    peak = std::max(peak, g_peak.load() - base);
  }
  Report(state, body.size(), peak);
}

inference::ModelInferResponse Response(size_t n) {
  inference::ModelInferResponse response;
  auto* out = response.add_outputs();
  out->set_name("features");
  out->set_datatype("FP32");
  out->add_shape(1);
  out->add_shape(static_cast<int64_t>(n));
  const std::vector<float> values = Floats(n);
  out->mutable_contents()->mutable_fp32_contents()->Add(values.begin(), values.end());
  return response;
}

void BM_InferResponse(benchmark::State& state, bool binary) {
  size_t n;
  JsonBody(BodyBytes(state), &n);  // as many floats as the JSON body of that size
  const inference::ModelInferResponse response = Response(n);
  inference::ModelInferRequest request;
  (*request.mutable_parameters())["binary_data_output"].set_bool_param(binary);
  size_t bytes = 0;
  int64_t peak = 0;
  for (auto _ : state) {
    const int64_t base = g_live.load();
    g_peak = base;
    invariant::server::RestBody body = invariant::server::InferResponseToHttp(response, request);
    bytes = body.body.size();
    benchmark::DoNotOptimize(body);
    peak = std::max(peak, g_peak.load() - base);
  }
  Report(state, bytes, peak);
}

void BM_InferResponseJson(benchmark::State& state) { BM_InferResponse(state, false); }
void BM_InferResponseBinary(benchmark::State& state) { BM_InferResponse(state, true); }

// Body sizes in MiB.
#define BODIES Arg(1)->Arg(15)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_InferRequestJson)->BODIES;
BENCHMARK(BM_RapidJsonNullHandler)->BODIES;
BENCHMARK(BM_RapidJsonFromChars)->BODIES;
BENCHMARK(BM_InferRequestBinary)->BODIES;
BENCHMARK(BM_InferResponseJson)->BODIES;
BENCHMARK(BM_InferResponseBinary)->BODIES;

}  // namespace

BENCHMARK_MAIN();
