// invariant-bench-serving: QPS and latency of batch-1 Predict over loopback.
//
// Writes one random-Fourier model (bank = features·group_elements rows of
// input_dim) with the test model helper, measures the in-process Model
// (latency at batch 1, rows/s at several batch sizes), then starts an
// in-process invariant-server on 127.0.0.1 for each batching mode and drives
// it with 1, 8, 64 closed-loop callers through invariant::Client. For each run
// it reports QPS, p50/p99 latency, the mean batch the batcher formed (from the
// server's invariant_batch_rows histogram) and served rows/s relative to the
// in-process rows/s at that batch size, measured right after the run (shared
// machines drift). The added latency at 1 caller is measured by one thread
// alternating a served and an in-process batch-1 Predict of the same row, so
// that both see the same machine load.
//
// --threads defaults to 1 batch at a time: each batch already runs on every
// core of the compute pool, and on a small machine two concurrent
// memory-bound batches split the bandwidth and form smaller batches
// (compare --threads=2).
//
//   build/bin/invariant-bench-serving --seconds=3 --callers=1,8,64
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/loadgen/loadgen.h"
#include "core/base/random.h"
#include "server/server.h"
#include "tests/test_models/test_models.h"

ABSL_FLAG(int64_t, input_dim, 784, "d");
ABSL_FLAG(int, features, 640, "s: random Fourier frequencies");
ABSL_FLAG(int, group_elements, 16, "r: bank rows = features · group_elements");
ABSL_FLAG(int, classes, 10, "Head outputs");
ABSL_FLAG(double, seconds, 3, "Duration of each load run");
ABSL_FLAG(std::string, callers, "1,8,64", "Concurrent callers per run");
ABSL_FLAG(int64_t, max_batch_size, 64, "Batcher max rows");
ABSL_FLAG(std::string, delays_us, "0,500", "Batching-on runs: one per max_batch_delay_us");
ABSL_FLAG(int, threads, 1, "Batches computed at once");

namespace invariant::bench {
namespace {

using loadgen::Quantile;

// One closed-loop batch-1 Predict load run (client/loadgen/loadgen.h).
struct LoadResult {
  double qps = 0, p50_us = 0, p99_us = 0;
  int64_t failures = 0;
};

LoadResult RunLoad(Client& client, const std::string& model, int callers,
                   const std::vector<float>& rows, int64_t input_dim, absl::Duration duration) {
  loadgen::LoadOptions o;
  o.model = model;
  o.concurrency = callers;
  o.duration = duration;
  o.rows = rows;
  o.input_dim = input_dim;
  absl::StatusOr<loadgen::LoadReport> r = loadgen::RunLoad(client, o);
  if (!r.ok()) {
    std::fprintf(stderr, "load: %s\n", r.status().ToString().c_str());
    return {0, 0, 0, 1};
  }
  return {r->qps, r->latency.p50_us, r->latency.p99_us, r->requests_failed};
}

std::vector<int> ParseInts(const std::string& text) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int v = 0;
    if (absl::SimpleAtoi(part, &v)) out.push_back(v);
  }
  return out;
}

struct InProcess {
  double p50_us_batch1 = 0;
  std::map<int, double> rows_per_second;  // by batch size
};

// rows/s of model.Predict at batch `b` (≥ 0.5 s of calls).
double InProcessRowsPerSecond(const Model& model, const std::vector<float>& rows, int b) {
  const int64_t d = model.input_dim();
  const int64_t available = static_cast<int64_t>(rows.size()) / d;
  std::vector<float> scores(static_cast<size_t>(b * model.output_dim()));
  int64_t done = 0;
  const absl::Time start = absl::Now();
  int64_t offset = 0;
  while (absl::Now() - start < absl::Milliseconds(500) || done < 4 * b) {
    if (offset + b > available) offset = 0;
    model.Predict(b, rows.data() + offset * d, scores.data());
    offset += b;
    done += b;
  }
  return static_cast<double>(done) / absl::ToDoubleSeconds(absl::Now() - start);
}

// p50 latency of one model.Predict of one row, calls 100 µs apart (≥ 1 s).
double InProcessP50Batch1(const Model& model, const std::vector<float>& rows) {
  const int64_t d = model.input_dim();
  const int64_t available = static_cast<int64_t>(rows.size()) / d;
  std::vector<float> scores(static_cast<size_t>(model.output_dim()));
  std::vector<double> latencies;
  const absl::Time start = absl::Now();
  for (int64_t i = 0; absl::Now() - start < absl::Seconds(1) || latencies.size() < 20; ++i) {
    const absl::Time t0 = absl::Now();
    model.Predict(1, rows.data() + (i % available) * d, scores.data());
    latencies.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
    // Like a served caller, which waits for the network between calls: a
    // tight loop would instead be scheduled as a CPU hog on a shared machine.
    absl::SleepFor(absl::Microseconds(100));
  }
  return Quantile(latencies, 0.5);
}

// Batch-1 latency served vs in-process, measured fairly on a shared machine:
// one thread alternates a served Predict (through `client`) and an in-process
// model.Predict of the same row, so both see the same load. p50 of each.
struct Paired {
  double served_p50_us = 0;
  double local_p50_us = 0;
};
Paired PairedBatch1(Client& client, const Model& model, const std::vector<float>& rows,
                    absl::Duration duration) {
  const int64_t d = model.input_dim();
  const int64_t available = static_cast<int64_t>(rows.size()) / d;
  std::vector<float> scores(static_cast<size_t>(model.output_dim()));
  std::vector<double> served, local;
  const absl::Time start = absl::Now();
  for (int64_t i = 0; absl::Now() - start < duration || served.size() < 20; ++i) {
    const float* row = rows.data() + (i % available) * d;
    v1::PredictRequest request;
    request.mutable_model()->set_name("bench");
    request.mutable_inputs()->set_raw_values(
        std::string(reinterpret_cast<const char*>(row), d * sizeof(float)));
    v1::PredictResponse response;
    absl::Time t0 = absl::Now();
    const grpc::Status status = client.Predict(request, &response);
    if (status.ok()) served.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
    t0 = absl::Now();
    model.Predict(1, row, scores.data());
    local.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
  }
  return {Quantile(served, 0.5), Quantile(local, 0.5)};
}

// Sum and count of the server's invariant_batch_rows histogram.
std::pair<double, double> BatchRows(const server::Server& server) {
  const std::string text = server.metrics().Serialize();
  static const std::regex kSum(R"(invariant_batch_rows_sum\{[^}]*\} ([0-9.e+]+))");
  static const std::regex kCount(R"(invariant_batch_rows_count\{[^}]*\} ([0-9.e+]+))");
  std::smatch m;
  double sum = 0, count = 0;
  if (std::regex_search(text, m, kSum)) sum = std::stod(m[1].str());
  if (std::regex_search(text, m, kCount)) count = std::stod(m[1].str());
  return {sum, count};
}

int Main() {
  const int64_t d = absl::GetFlag(FLAGS_input_dim);
  char dir_template[] = "/tmp/invariant-bench-serving-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) return 1;
  const std::string models = std::string(dir) + "/models";
  testing_models::TestModelSpec spec;
  spec.name = "bench";
  spec.input_dim = d;
  spec.num_features = absl::GetFlag(FLAGS_features);
  spec.num_group_elements = absl::GetFlag(FLAGS_group_elements);
  spec.num_classes = absl::GetFlag(FLAGS_classes);
  auto path = testing_models::WriteTestModel(models, spec);
  if (!path.ok()) {
    std::fprintf(stderr, "%s\n", path.status().ToString().c_str());
    return 1;
  }
  auto model = Model::Load(*path);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  Rng rng(42);
  std::vector<float> rows(static_cast<size_t>(256 * d));
  for (float& v : rows) v = static_cast<float>(rng.Normal());

  std::printf("model: random_fourier bank %lld x %lld (%.1f MB), features %lld, classes %lld\n",
              static_cast<long long>(spec.num_features) * spec.num_group_elements,
              static_cast<long long>(d), (*model)->bytes() / 1e6,
              static_cast<long long>((*model)->feature_dim()),
              static_cast<long long>((*model)->output_dim()));
  InProcess local;
  local.p50_us_batch1 = InProcessP50Batch1(**model, rows);
  for (int b : {1, 2, 4, 8, 16, 32, 64}) {
    local.rows_per_second[b] = InProcessRowsPerSecond(**model, rows, b);
  }
  std::printf("in-process: batch-1 p50 %.1f us;", local.p50_us_batch1);
  for (const auto& [b, r] : local.rows_per_second) std::printf(" b=%d %.0f rows/s;", b, r);
  std::printf("\n\n%-24s %7s %9s %10s %10s %9s %12s\n", "mode", "callers", "qps", "p50_us",
              "p99_us", "batch", "vs_inproc");

  struct Mode {
    std::string name;
    bool batching;
    int64_t delay_us;
  };
  std::vector<Mode> modes = {{"batching=off", false, 0}};
  for (int delay : ParseInts(absl::GetFlag(FLAGS_delays_us))) {
    modes.push_back({"batching=on delay=" + std::to_string(delay) + "us", true, delay});
  }
  std::map<std::string, std::map<int, LoadResult>> results;
  std::map<std::string, Paired> paired;  // batch-1 served vs in-process, same thread
  for (const Mode& mode : modes) {
    server::ServerOptions options;
    options.models_dir = models;
    options.host = "127.0.0.1";
    options.port = 0;
    options.metrics_port = -1;
    options.poll_seconds = 0;
    options.batching = mode.batching;
    options.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
    options.max_batch_delay_us = mode.delay_us;
    options.threads = absl::GetFlag(FLAGS_threads);
    auto server = server::Server::Start(options);
    if (!server.ok()) {
      std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
      return 1;
    }
    auto client = Client::Create("127.0.0.1:" + std::to_string((*server)->grpc_port()));
    for (int callers : ParseInts(absl::GetFlag(FLAGS_callers))) {
      if (callers == 1) {
        paired[mode.name] =
            PairedBatch1(*client, **model, rows, absl::Seconds(absl::GetFlag(FLAGS_seconds)));
      }
      RunLoad(*client, "bench", callers, rows, d, absl::Milliseconds(200));  // warm-up
      const auto before = BatchRows(**server);
      const LoadResult r =
          RunLoad(*client, "bench", callers, rows, d, absl::Seconds(absl::GetFlag(FLAGS_seconds)));
      const auto after = BatchRows(**server);
      const double batches = after.second - before.second;
      const double mean_batch = batches > 0 ? (after.first - before.first) / batches : 1.0;
      // In-process rows/s at the batch the batcher formed, measured right
      // after the run (the machine's speed drifts between runs).
      const int formed = std::max(1, static_cast<int>(std::lround(mean_batch)));
      const double ratio = r.qps / InProcessRowsPerSecond(**model, rows, formed);
      std::printf("%-24s %7d %9.0f %10.0f %10.0f %9.1f %11.0f%%%s\n", mode.name.c_str(), callers,
                  r.qps, r.p50_us, r.p99_us, mean_batch, 100 * ratio,
                  r.failures > 0 ? " FAILURES" : "");
      std::fflush(stdout);
      results[mode.name][callers] = r;
    }
    (*server)->Shutdown();
  }
  std::printf("\n");
  const auto& off = results[modes[0].name];
  for (size_t m = 1; m < modes.size(); ++m) {
    const auto& on = results[modes[m].name];
    if (off.count(64) && on.count(64)) {
      std::printf("%s: 64 callers QPS %.1fx batching off\n", modes[m].name.c_str(),
                  on.at(64).qps / off.at(64).qps);
    }
  }
  for (const Mode& mode : modes) {
    if (!paired.count(mode.name)) continue;
    const Paired& p = paired[mode.name];
    std::printf(
        "%s: 1 caller, alternating on one thread: served p50 %.0f us, in-process p50 "
        "%.0f us, added %.0f us\n",
        mode.name.c_str(), p.served_p50_us, p.local_p50_us, p.served_p50_us - p.local_p50_us);
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace invariant::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return invariant::bench::Main();
}
