// invariant-bench-reload-warmup: p99 of the first requests after a hot reload,
// with and without model warmup (server/handlers/model_warmup.h).
//
// For each --warmup_rows value (default "0,8": off, then on) an in-process
// invariant-server on 127.0.0.1 serves one random-Fourier model. Each of
// --reloads rounds publishes a new version (fresh seed), reloads (the new
// version loads, warms up when on, and replaces the old one), then sends the
// first --requests Predict calls (batch 1, --callers closed-loop callers) and
// right after them the same number again as the warm reference. Reported per
// mode: the median over rounds of the first-requests p99, of the warm p99,
// and of their ratio (first / warm, measured in the same round, so machine
// drift cancels), plus the median reload time.
//
//   build/bin/invariant-bench-reload-warmup --reloads=10 --warmup_rows=0,8
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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
ABSL_FLAG(int, reloads, 10, "Reload rounds per mode");
ABSL_FLAG(int64_t, requests, 100, "Requests measured after each reload (and as reference)");
ABSL_FLAG(int, callers, 4, "Closed-loop callers");
ABSL_FLAG(std::string, warmup_rows, "0,8", "One mode per value (0 = warmup off)");

namespace invariant::bench {
namespace {

using loadgen::Quantile;

double Median(std::vector<double> v) { return Quantile(v, 0.5); }

// p99 (µs) of `requests` batch-1 Predict calls; -1 when any failed.
double P99(Client& client, const std::vector<float>& rows, int64_t d) {
  loadgen::LoadOptions o;
  o.model = "bench";
  o.concurrency = absl::GetFlag(FLAGS_callers);
  o.max_requests = absl::GetFlag(FLAGS_requests);
  o.rows = rows;
  o.input_dim = d;
  absl::StatusOr<loadgen::LoadReport> r = loadgen::RunLoad(client, o);
  if (!r.ok() || r->requests_failed > 0) return -1;
  return r->latency.p99_us;
}

int RunMode(const std::string& models, const testing_models::TestModelSpec& base,
            int64_t warmup_rows, int64_t& next_version, const std::vector<float>& rows) {
  server::ServerOptions options;
  options.models_dir = models;
  options.host = "127.0.0.1";
  options.port = 0;
  options.metrics_port = -1;
  options.poll_seconds = 0;
  options.warmup_rows = warmup_rows;
  auto server = server::Server::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "server: %s\n", server.status().ToString().c_str());
    return 1;
  }
  auto client = Client::Create(absl::StrCat("127.0.0.1:", (*server)->grpc_port()));
  const int64_t d = base.input_dim;
  if (P99(*client, rows, d) < 0) return 1;  // connection and first version warm
  std::vector<double> first, warm, ratio, reload_ms;
  for (int round = 0; round < absl::GetFlag(FLAGS_reloads); ++round) {
    testing_models::TestModelSpec spec = base;
    spec.version = next_version++;
    spec.seed = static_cast<uint64_t>(spec.version);
    if (!testing_models::WriteTestModel(models, spec).ok()) return 1;
    const absl::Time t0 = absl::Now();
    const server::ScanReport report = (*server)->Reload();
    reload_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    if (report.loaded != 1) return 1;
    const double cold = P99(*client, rows, d);
    const double hot = P99(*client, rows, d);
    if (cold < 0 || hot <= 0) return 1;
    first.push_back(cold);
    warm.push_back(hot);
    ratio.push_back(cold / hot);
  }
  std::printf(
      "warmup_rows=%-4lld first-%lld p99 %8.0f us | warm p99 %8.0f us | "
      "ratio %5.2f | reload %6.1f ms   (medians of %zu reloads)\n",
      static_cast<long long>(warmup_rows), static_cast<long long>(absl::GetFlag(FLAGS_requests)),
      Median(first), Median(warm), Median(ratio), Median(reload_ms), first.size());
  std::fflush(stdout);
  return 0;
}

int Main() {
  char dir_template[] = "/tmp/invariant-bench-reload-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) return 1;
  const std::string models = std::string(dir) + "/models";
  testing_models::TestModelSpec base;
  base.name = "bench";
  base.input_dim = absl::GetFlag(FLAGS_input_dim);
  base.num_features = absl::GetFlag(FLAGS_features);
  base.num_group_elements = absl::GetFlag(FLAGS_group_elements);
  base.num_classes = absl::GetFlag(FLAGS_classes);
  int64_t next_version = 1;
  base.version = next_version++;
  if (!testing_models::WriteTestModel(models, base).ok()) return 1;
  Rng rng(42);
  std::vector<float> rows(static_cast<size_t>(256 * base.input_dim));
  for (float& v : rows) v = static_cast<float>(rng.Normal());
  std::printf("model: random_fourier bank %lld x %lld, classes %d; %d callers, batch 1\n",
              static_cast<long long>(base.num_features) * base.num_group_elements,
              static_cast<long long>(base.input_dim), base.num_classes,
              absl::GetFlag(FLAGS_callers));
  int rc = 0;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_warmup_rows), ',')) {
    int64_t warmup_rows = 0;
    if (!absl::SimpleAtoi(part, &warmup_rows)) return 2;
    rc |= RunMode(models, base, warmup_rows, next_version, rows);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}

}  // namespace
}  // namespace invariant::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return invariant::bench::Main();
}
